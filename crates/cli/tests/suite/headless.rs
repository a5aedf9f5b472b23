//! Headless front end: exit codes, JSON output, one-line errors for bad input.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use lathe_mock::{MockServer, Mode, Script};
use serde_json::{Value, json};

struct Env {
    _tmp: tempfile::TempDir,
    home: std::path::PathBuf,
    workspace: std::path::PathBuf,
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
        .env_remove("OPENAI_API_KEY")
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

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn json_lines(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect()
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("dir")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn a_direct_answer_succeeds_with_text_on_stdout() {
    let env = env();
    let server = scripted(json!([{"text": "The answer is 4."}])).await;
    let out =
        output(lathe(&env, &["-p", "2+2?", "--provider", "anthropic", "--base-url", &server.url()])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "The answer is 4.");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn stream_json_reports_init_calls_results_usage_and_result() {
    let env = env();
    std::fs::write(env.workspace.join("notes.txt"), "first line\nsecond\n").expect("notes");
    let server = scripted(json!([
        {"tool_calls": [{"id": "call_1", "name": "read_file", "arguments": {"path": "notes.txt"}}],
         "usage": {"input_tokens": 100, "output_tokens": 20}},
        {"text": "It says: first line", "usage": {"input_tokens": 150, "output_tokens": 10}}
    ]))
    .await;
    let base = format!("{}/v1", server.url());
    let out = output(lathe(
        &env,
        &["-p", "read notes", "--provider", "openai", "--base-url", &base, "--output-format", "stream-json"],
    ))
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = json_lines(&out);
    let types: Vec<&str> = lines.iter().filter_map(|l| l["type"].as_str()).collect();
    assert_eq!(types.first(), Some(&"init"));
    assert!(lines[0]["tools"].as_array().is_some_and(|t| t.iter().any(|n| n == "read_file")));
    let call = lines.iter().find(|l| l["type"] == "tool_call").expect("tool_call line");
    assert_eq!(call["id"], "call_1");
    let result = lines.iter().find(|l| l["type"] == "tool_result").expect("tool_result line");
    assert_eq!(result["status"], "completed");
    assert!(result["elapsed_ms"].is_u64());
    assert!(types.contains(&"usage"));
    let last = lines.last().expect("result");
    assert_eq!(last["type"], "result");
    assert_eq!(last["subtype"], "success");
    assert_eq!(last["turns"], 2);
    assert_eq!(last["tool_calls"], 1);
    assert_eq!(last["usage"]["input_tokens"], 250);
    assert_eq!(last["result"], "It says: first line");
}

#[tokio::test]
async fn api_401_is_an_error_in_every_format_never_success() {
    for format in ["text", "json", "stream-json"] {
        let env = env();
        let server = scripted(json!([{"error": {"status": 401, "message": "invalid x-api-key"}}])).await;
        let out = output(lathe(
            &env,
            &["-p", "hi", "--provider", "anthropic", "--base-url", &server.url(), "--output-format", format],
        ))
        .await;
        assert_eq!(out.status.code(), Some(3), "{format}: {}", stderr(&out));
        match format {
            "text" => {
                let err = stderr(&out);
                assert!(err.contains("invalid x-api-key"), "{err}");
                assert!(!String::from_utf8_lossy(&out.stdout).contains("success"));
            }
            _ => {
                let last = json_lines(&out).pop().expect("result");
                assert_eq!(last["type"], "result");
                assert_eq!(last["subtype"], "error_api");
                assert_eq!(last["is_error"], true);
                assert_eq!(last["error"]["kind"], "auth");
            }
        }
    }
}

#[tokio::test]
async fn api_400_is_an_error_and_not_retried() {
    let env = env();
    let server =
        scripted(json!([{"error": {"status": 400, "message": "max_tokens: too large"}}, {"text": "never"}]))
            .await;
    let out = output(lathe(
        &env,
        &["-p", "hi", "--provider", "anthropic", "--base-url", &server.url(), "--output-format", "json"],
    ))
    .await;
    assert_eq!(out.status.code(), Some(3));
    let result = json_lines(&out).pop().expect("result");
    assert_eq!(result["error"]["kind"], "bad_request");
    assert!(result["error"]["message"].as_str().is_some_and(|m| m.contains("max_tokens: too large")));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn max_turns_gives_the_limit_exit_code() {
    let env = env();
    let call = |id: &str| json!({"tool_calls": [{"id": id, "name": "list_dir", "arguments": {"path": "."}}]});
    let server = scripted(json!([call("c1"), call("c2"), call("c3"), call("c4")])).await;
    let out = output(lathe(
        &env,
        &[
            "-p",
            "loop",
            "--provider",
            "anthropic",
            "--base-url",
            &server.url(),
            "--max-turns",
            "3",
            "--output-format",
            "json",
        ],
    ))
    .await;
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert_eq!(json_lines(&out).pop().expect("result")["subtype"], "error_max_turns");
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn bad_input_is_one_line_and_touches_nothing() {
    let env = env();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["-p", "hi", "-C", "/nope/not/here"], "no such directory"),
        (vec!["-p", "hi", "--provider", "frobnicate"], "unknown provider"),
        (vec!["-p", "hi", "--permission-mode", "sometimes"], "unknown permission mode"),
    ];
    for (args, expected) in cases {
        let mut command = Command::new(env!("CARGO_BIN_EXE_lathe"));
        command.args(&args).env("LATHE_HOME", &env.home).stdin(Stdio::null());
        if !args.contains(&"-C") {
            command.arg("-C").arg(&env.workspace);
        }
        let out = output(command).await;
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(expected), "{args:?}: {err}");
    }
    assert_eq!(files_in(&env.workspace), Vec::<String>::new());
    assert_eq!(files_in(&env.home), vec!["config.toml".to_string()]);
}

#[tokio::test]
async fn unreadable_config_is_a_usage_error() {
    let env = env();
    std::fs::write(env.home.join("config.toml"), "max_turns = \"lots\"\n").expect("config");
    let out =
        output(lathe(&env, &["-p", "hi", "--provider", "anthropic", "--base-url", "http://127.0.0.1:9"]))
            .await;
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("config.toml"), "{err}");
    assert_eq!(files_in(&env.workspace), Vec::<String>::new());
}

#[tokio::test]
async fn a_model_server_that_is_down_is_a_provider_error() {
    let env = env();
    // Default retry settings: a refused connection is reported at once, not retried.
    std::fs::write(env.home.join("config.toml"), "").expect("config");
    // Bind and drop a listener to get a port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
    let url = format!("http://127.0.0.1:{port}");
    let out = output(lathe(&env, &["-p", "hi", "--provider", "anthropic", "--base-url", &url])).await;
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("network") || err.contains("connect"), "{err}");
    assert_eq!(files_in(&env.workspace), Vec::<String>::new());
}

#[tokio::test]
async fn continue_resumes_the_latest_session_of_the_directory() {
    let env = env();
    let server = scripted(json!([{"text": "first answer"}, {"text": "second answer"}])).await;
    let first =
        output(lathe(&env, &["-p", "remember 42", "--provider", "anthropic", "--base-url", &server.url()]))
            .await;
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let second = output(lathe(
        &env,
        &["-p", "what did I say?", "--continue", "--provider", "anthropic", "--base-url", &server.url()],
    ))
    .await;
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    let requests = server.requests();
    let messages = requests[1].body["messages"].to_string();
    assert!(
        messages.contains("remember 42")
            && messages.contains("first answer")
            && messages.contains("what did I say?"),
        "{messages}"
    );
}

fn wait_with_deadline(
    child: &mut std::process::Child,
    limit: std::time::Duration,
) -> Option<std::process::ExitStatus> {
    let deadline = std::time::Instant::now() + limit;
    while std::time::Instant::now() < deadline {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return Some(status);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    None
}

fn signal(pid: u32, name: &str) {
    let status = Command::new("kill").arg(format!("-{name}")).arg(pid.to_string()).status().expect("kill");
    assert!(status.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_during_a_read_that_never_returns_still_exits_promptly() {
    let env = env();
    let fifo = env.workspace.join("pipe");
    assert!(Command::new("mkfifo").arg(&fifo).status().expect("mkfifo").success());
    let server = scripted(json!([
        {"tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "pipe"}}]},
        {"text": "never"}
    ]))
    .await;
    let mut command = lathe(
        &env,
        &[
            "-p",
            "read the pipe",
            "--provider",
            "anthropic",
            "--base-url",
            &server.url(),
            "--output-format",
            "stream-json",
        ],
    );
    command.stdout(Stdio::piped());
    let mut child = command.spawn().expect("spawn");
    // Poll for the state, not for a time: the read_file call has started (its stream-json line).
    let stdout = child.stdout.take().expect("stdout");
    let (lines, received) = std::sync::mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)).map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    let mut seen = Vec::new();
    while !seen.iter().any(|line: &String| line.contains("\"type\":\"tool_call\"")) {
        let line =
            received.recv_timeout(std::time::Duration::from_secs(20)).expect("the read_file call starts");
        seen.push(line);
    }
    signal(child.id(), "INT");
    let status =
        tokio::task::block_in_place(|| wait_with_deadline(&mut child, std::time::Duration::from_secs(5)));
    assert_eq!(status.and_then(|s| s.code()), Some(130), "lathe did not exit within 5 s of SIGINT");
    reader.join().expect("reader");
    seen.extend(received.try_iter());
    let last: Value = serde_json::from_str(seen.last().expect("result line")).expect("json");
    assert_eq!(last["subtype"], "error_cancelled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_kills_the_running_command_and_records_the_interruption() {
    let env = env();
    let pid_file = env.workspace.join("child.pid");
    let server = scripted(json!([
        {"tool_calls": [{"id": "c1", "name": "shell",
                          "arguments": {"command": format!("sleep 47 & echo $! > {}; wait", pid_file.display())}}]},
        {"text": "never"}
    ]))
    .await;
    let mut child =
        lathe(&env, &["-p", "run it", "--yolo", "--provider", "anthropic", "--base-url", &server.url()])
            .spawn()
            .expect("spawn");
    // Poll for the state: the background `sleep` has started and its pid is written.
    let pid_written =
        || std::fs::read_to_string(&pid_file).ok().filter(|pid| pid.trim().parse::<u32>().is_ok());
    for _ in 0..1000 {
        if pid_written().is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let pid = pid_written().expect("the command wrote its child's pid").trim().to_string();
    signal(child.id(), "TERM");
    let status =
        tokio::task::block_in_place(|| wait_with_deadline(&mut child, std::time::Duration::from_secs(5)));
    assert_eq!(status.and_then(|s| s.code()), Some(143));
    // Poll until the child is gone (or a zombie), for at most 5 s.
    let gone = || {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        (stat.is_empty() || stat.split_whitespace().nth(2) == Some("Z")).then_some(()).ok_or(stat)
    };
    for _ in 0..250 {
        if gone().is_ok() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    if let Err(stat) = gone() {
        panic!("sleep {pid} survived: {stat}");
    }
    let sessions = env.home.join("sessions");
    let dir =
        std::fs::read_dir(&sessions).expect("sessions").next().expect("project dir").expect("entry").path();
    let file = std::fs::read_dir(&dir).expect("dir").next().expect("session file").expect("entry").path();
    let text = std::fs::read_to_string(file).expect("session");
    assert!(text.contains("\"status\":\"interrupted\""), "{text}");
}
