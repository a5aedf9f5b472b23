//! `lathe sessions`, loading damaged session files, and saving that fails: what a user sees.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use lathe_mock::{MockServer, Mode, Script};
use serde_json::{Value, json};

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    workspace: PathBuf,
}

fn env() -> Env {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("home");
    let workspace = tmp.path().join("ws");
    std::fs::create_dir_all(&home).expect("home");
    std::fs::create_dir_all(&workspace).expect("ws");
    std::fs::write(home.join("config.toml"), "[retry]\nmax_retries = 0\n").expect("config");
    Env { _tmp: tmp, home, workspace }
}

fn lathe(env: &Env, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_lathe"));
    command
        .args(args)
        .arg("-C")
        .arg(&env.workspace)
        .env("LATHE_HOME", &env.home)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("LATHE_PROVIDER")
        .stdin(Stdio::null());
    command
}

async fn output(mut command: Command) -> Output {
    tokio::task::spawn_blocking(move || command.output()).await.expect("join").expect("run lathe")
}

async fn scripted(turns: Value) -> MockServer {
    let script = Script::from_json(&json!({ "turns": turns }).to_string()).expect("script");
    MockServer::start(Mode::Scripted(script)).await.expect("mock")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

async fn ask(env: &Env, server: &MockServer, extra: &[&str]) -> Output {
    let mut args = vec!["--provider", "anthropic", "--base-url"];
    let url = server.url();
    args.push(&url);
    args.extend_from_slice(extra);
    let out = output(lathe(env, &args)).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    out
}

fn session_files(home: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for project in std::fs::read_dir(home.join("sessions")).into_iter().flatten().filter_map(Result::ok) {
        for entry in std::fs::read_dir(project.path()).into_iter().flatten().filter_map(Result::ok) {
            if entry.path().extension().is_some_and(|ext| ext == "jsonl") {
                files.push(entry.path());
            }
        }
    }
    files
}

#[tokio::test]
async fn sessions_lists_prompt_turns_and_cost_newest_first_as_a_table_and_as_json() {
    let env = env();
    let server = scripted(json!([
        {"text": "one", "usage": {"input_tokens": 1000000, "output_tokens": 0}},
        {"text": "two"},
        {"text": "three"},
        {"text": "four"}
    ]))
    .await;
    ask(&env, &server, &["-p", "first task"]).await;
    ask(&env, &server, &["-p", "second task\nwith a second line"]).await;
    ask(&env, &server, &["-p", "more", "--continue"]).await;

    let out = output(lathe(&env, &["sessions", "--json"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let list: Value = serde_json::from_slice(&out.stdout).expect("json");
    let list = list.as_array().expect("array");
    assert_eq!(list.len(), 2);
    assert_eq!(list[0]["first_prompt"], "second task\nwith a second line");
    assert_eq!(list[0]["turns"], 2);
    assert_eq!(list[0]["cost_usd"], 0.0);
    assert_eq!(list[1]["first_prompt"], "first task");
    assert_eq!(list[1]["turns"], 1);
    // claude-sonnet-4-5 input is priced at $3 per million tokens.
    assert_eq!(list[1]["cost_usd"], 3.0);
    assert_eq!(list[1]["incomplete"], false);

    let out = output(lathe(&env, &["sessions"])).await;
    let table = text(&out.stdout);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 3, "{table}");
    assert!(lines[0].starts_with("id") && lines[0].contains("first prompt"), "{table}");
    let id = list[0]["id"].as_str().expect("id");
    assert!(lines[1].starts_with(id) && lines[1].ends_with("second task with a second line"), "{table}");
    assert!(lines[2].contains("$3.0000") && lines[2].ends_with("first task"), "{table}");

    // The id resumes that session.
    ask(&env, &server, &["-p", "resumed by id", "--resume", list[1]["id"].as_str().expect("id")]).await;
    assert!(server.requests().last().expect("request").body["messages"].to_string().contains("first task"));
}

#[tokio::test]
async fn a_corrupt_line_is_skipped_with_a_warning_naming_it_and_the_rest_resumes() {
    let env = env();
    let server = scripted(json!([{"text": "kept answer"}, {"text": "again"}])).await;
    ask(&env, &server, &["-p", "remember 42"]).await;
    let file = session_files(&env.home).pop().expect("session file");
    let mut bytes = std::fs::read(&file).expect("read");
    let lines = bytes.iter().filter(|byte| **byte == b'\n').count();
    bytes.extend(b"{\"type\":\"user\",\"content\":[{\"kind\":\"text\",\"text\":\"\xff\xfe\"}]}\n");
    bytes.extend(b"\0\0\0\0\n");
    std::fs::write(&file, bytes).expect("write");

    let out = ask(&env, &server, &["-p", "what did I say?", "--continue"]).await;
    let stderr = text(&out.stderr);
    assert!(stderr.contains(&format!("line {}: not valid UTF-8", lines + 1)), "{stderr}");
    assert!(stderr.contains(&format!("line {}: contains NUL bytes", lines + 2)), "{stderr}");
    let sent = server.requests()[1].body["messages"].to_string();
    assert!(sent.contains("remember 42") && sent.contains("kept answer"), "{sent}");
}

#[tokio::test]
async fn no_prompt_without_a_terminal_says_to_use_p() {
    let env = env();
    let out = output(lathe(&env, &[])).await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("not a terminal") && stderr.contains("-p"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
}

#[tokio::test]
async fn an_unwritable_session_folder_runs_and_warns_that_nothing_is_saved() {
    let env = env();
    std::fs::write(env.home.join("sessions"), "a file, not a folder").expect("block");
    let server = scripted(json!([{"text": "still answered"}])).await;
    let out = ask(&env, &server, &["-p", "hi"]).await;
    assert_eq!(text(&out.stdout).trim(), "still answered");
    let stderr = text(&out.stderr);
    assert!(stderr.contains("nothing of this session is saved"), "{stderr}");
}

#[tokio::test]
async fn a_full_disk_during_an_append_marks_the_session_incomplete_and_keeps_what_was_written() {
    let env = env();
    // Two reads whose results do not both fit under the file-size limit set below.
    let body: String = (0..100).map(|n| format!("{n:03} {}\n", "x".repeat(56))).collect();
    std::fs::write(env.workspace.join("big.txt"), &body).expect("big");
    let server = scripted(json!([
        {"tool_calls": [{"id": "r1", "name": "read_file", "arguments": {"path": "big.txt"}}]},
        {"tool_calls": [{"id": "r2", "name": "read_file", "arguments": {"path": "big.txt", "offset": 2}}]},
        {"text": "read it twice"}
    ]))
    .await;
    // `ulimit -f 10`: files this process writes may not grow past 10 KiB, so an append fails
    // with EFBIG the way one fails with ENOSPC on a full disk.
    let mut command = Command::new("bash");
    command
        .arg("-c")
        .arg("ulimit -f 10 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_lathe"))
        .args(["-p", "read big.txt twice", "--provider", "anthropic", "--base-url", &server.url()])
        .arg("-C")
        .arg(&env.workspace)
        .env("LATHE_HOME", &env.home)
        .stdin(Stdio::null());
    let out = output(command).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "read it twice");
    let stderr = text(&out.stderr);
    assert!(stderr.contains("the session is incomplete"), "{stderr}");

    let file = session_files(&env.home).pop().expect("session file");
    let saved = std::fs::read_to_string(&file).expect("session");
    let items: Vec<Value> =
        saved.lines().map(|line| serde_json::from_str(line).expect("every saved line parses")).collect();
    assert_eq!(items.first().map(|item| item["meta"].clone()), Some(json!("session_start")));
    assert!(
        items.iter().any(|item| item["call_id"] == "r1" && item.to_string().contains("099 xxx")),
        "the first result is kept: {saved}"
    );
    assert_eq!(items.last().map(|item| item["meta"].clone()), Some(json!("incomplete")), "{saved}");

    let out = output(lathe(&env, &["sessions", "--json"])).await;
    let list: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(list[0]["incomplete"], true);
}
