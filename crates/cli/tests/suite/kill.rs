//! Crash safety of the real binary: a scripted multi-turn run (file writes, edits, reads, shell
//! commands, streamed text) is killed with SIGKILL at 20 moments, each chosen by a condition that is
//! polled for (the mock received request k, or the session file holds n lines). Then `--continue`
//! must work, keep everything that was complete, and leave every tool call with exactly one result.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use lathe_mock::{MockServer, Mode, Script};
use serde_json::{Value, json};

/// When to kill.
#[derive(Debug, Clone, Copy)]
enum Moment {
    /// The mock has received this many requests.
    Requests(usize),
    /// The session file holds this many complete lines.
    Lines(usize),
}

fn call(id: &str, name: &str, arguments: Value) -> Value {
    json!({"id": id, "name": name, "arguments": arguments})
}

/// The scripted responses of the run that gets killed; the last one ends it.
fn responses() -> Vec<Value> {
    vec![
        json!({"tool_calls": [call("w1", "write_file", json!({"path": "notes.txt", "content": "alpha\n"}))]}),
        json!({"tool_calls": [call("s2", "shell", json!({"command": "echo one >> log.txt; sleep 0.2"}))]}),
        json!({"tool_calls": [call("r3", "read_file", json!({"path": "notes.txt"})),
                              call("l3", "list_dir", json!({"path": "."}))]}),
        json!({"tool_calls": [call("e4", "edit_file", json!({"path": "notes.txt", "old_string": "alpha", "new_string": "beta"}))]}),
        json!({"text": "checking the log", "text_chunks": 5, "chunk_delay_ms": 10,
               "tool_calls": [call("s5", "shell", json!({"command": "sleep 0.2; echo two >> log.txt"}))]}),
        json!({"first_byte_delay_ms": 100,
               "tool_calls": [call("w6", "write_file", json!({"path": "b.txt", "content": "b\n"}))]}),
        json!({"tool_calls": [call("s7", "shell", json!({"command": "true"}))]}),
        json!({"text": "all done", "text_chunks": 4, "chunk_delay_ms": 20}),
    ]
}

fn call_ids(response: &Value) -> Vec<String> {
    response["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|call| call["id"].as_str().unwrap_or_default().to_string())
        .collect()
}

async fn mock(turns: Vec<Value>) -> MockServer {
    let script = Script::from_json(&json!({ "turns": turns }).to_string()).expect("script");
    MockServer::start(Mode::Scripted(script)).await.expect("mock")
}

fn lathe(home: &Path, workspace: &Path, url: &str, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_lathe"));
    command
        .args(args)
        .args(["--yolo", "--provider", "anthropic", "--base-url", url, "--output-format", "stream-json"])
        .arg("-C")
        .arg(workspace)
        .env("LATHE_HOME", home)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("LATHE_PROVIDER")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command
}

fn session_file(home: &Path) -> Option<PathBuf> {
    let project = std::fs::read_dir(home.join("sessions")).ok()?.next()?.ok()?.path();
    std::fs::read_dir(project)
        .ok()?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
}

fn complete_lines(home: &Path) -> Vec<u8> {
    let Some(bytes) = session_file(home).and_then(|path| std::fs::read(path).ok()) else { return Vec::new() };
    let end = bytes.iter().rposition(|byte| *byte == b'\n').map_or(0, |at| at + 1);
    bytes[..end].to_vec()
}

/// Runs the scripted session, kills it at `moment`, continues it, and returns what is wrong.
async fn kill_and_continue(moment: Moment) -> Vec<String> {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (home, workspace) = (tmp.path().join("home"), tmp.path().join("ws"));
    std::fs::create_dir_all(&home).expect("home");
    std::fs::create_dir_all(&workspace).expect("ws");
    std::fs::write(home.join("config.toml"), "[retry]\nmax_retries = 0\n").expect("config");
    let script = responses();
    let server = mock(script.clone()).await;
    let mut child =
        lathe(&home, &workspace, &server.url(), &["-p", "do the scripted task"]).spawn().expect("spawn");

    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let reached = match moment {
            Moment::Requests(k) => server.requests().len() >= k,
            Moment::Lines(n) => complete_lines(&home).iter().filter(|byte| **byte == b'\n').count() >= n,
        };
        if reached {
            break;
        }
        if let Ok(Some(status)) = child.try_wait() {
            return vec![format!("{moment:?}: the run ended ({status}) before the moment came")];
        }
        assert!(Instant::now() < deadline, "{moment:?} never came");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let _ = child.kill();
    let _ = child.wait();
    let before = complete_lines(&home);
    let requests = server.requests().len();

    let resume = mock(vec![json!({"text": "resumed"})]).await;
    let mut command = lathe(&home, &workspace, &resume.url(), &["-p", "carry on", "--continue"]);
    command.stdout(Stdio::piped());
    let output = tokio::task::spawn_blocking(move || command.output()).await.expect("join").expect("run");
    let mut problems = Vec::new();
    let mut problem =
        |text: String| problems.push(format!("{moment:?} (killed after {requests} requests): {text}"));
    if output.status.code() != Some(0) {
        problem(format!("--continue exited with {:?}", output.status.code()));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !stdout.lines().last().is_some_and(|line| line.contains(r#""result":"resumed""#)) {
        problem(format!("--continue did not answer: {stdout}"));
    }

    let after = std::fs::read(session_file(&home).expect("session file")).expect("read");
    if !after.starts_with(&before) {
        problem("lines written before the kill were changed or lost".into());
    }
    let mut results: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut calls = Vec::new();
    for (number, line) in after.split(|byte| *byte == b'\n').enumerate().filter(|(_, line)| !line.is_empty())
    {
        let Ok(item) = serde_json::from_slice::<Value>(line) else {
            problem(format!("line {} does not parse", number + 1));
            continue;
        };
        match item["type"].as_str() {
            Some("assistant") => calls.extend(
                item["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|content| content["kind"] == "tool_call")
                    .map(|content| content["id"].as_str().unwrap_or_default().to_string()),
            ),
            Some("tool_result") => results
                .entry(item["call_id"].as_str().unwrap_or_default().to_string())
                .or_default()
                .push(item["status"].as_str().unwrap_or("completed").to_string()),
            _ => {}
        }
    }
    for id in &calls {
        let count = results.get(id).map_or(0, Vec::len);
        if count != 1 {
            problem(format!("call {id} has {count} results"));
        }
    }
    for id in results.keys().filter(|id| !calls.contains(id)) {
        problem(format!("result for unknown call {id}"));
    }
    // Request k was sent only after responses 1..k-1 were complete and their calls had run.
    for response in &script[..requests.saturating_sub(1)] {
        for id in call_ids(response) {
            if results.get(&id).map(Vec::as_slice) != Some(&["completed".to_string()][..]) {
                problem(format!("completed call {id} is not kept as completed: {:?}", results.get(&id)));
            }
        }
    }
    let sent =
        resume.requests().first().map(|request| request.body["messages"].to_string()).unwrap_or_default();
    if !sent.contains("do the scripted task") || !sent.contains("carry on") {
        problem("the continued request lacks the first or the new prompt".into());
    }
    for response in &script[..requests.saturating_sub(1)] {
        for id in call_ids(response) {
            if sent.matches(&format!("\"{id}\"")).count() != 2 {
                problem(format!("the continued request does not send call {id} with exactly one result"));
            }
        }
    }
    problems
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_at_twenty_moments_then_continue_keeps_every_completed_turn_and_pairs_every_call() {
    let moments: Vec<Moment> = (1..=8).map(Moment::Requests).chain((3..=14).map(Moment::Lines)).collect();
    assert_eq!(moments.len(), 20);
    let mut problems = Vec::new();
    for moment in moments {
        problems.extend(kill_and_continue(moment).await);
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
