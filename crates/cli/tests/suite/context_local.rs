//! The embedded local model (8 192-token window) resuming a session that no longer fits: the
//! conversation is compacted by the local model itself and the run succeeds, instead of failing
//! with the window error. Needs the `local` feature and the 0.5B model (`lathe model fetch 0.5b`).

use std::path::Path;
use std::process::{Command, Output, Stdio};

use lathe_mock::{MockServer, Mode, Script};
use serde_json::{Value, json};

/// A command whose output is ~13 KB (≈ 3 300 tokens): three of them overflow an 8k window.
fn listing(start: u32) -> String {
    format!("seq {start} {} | sed 's/^/row /'", start + 1_199)
}

async fn lathe(home: &Path, workspace: &Path, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_lathe"));
    command
        .args(args)
        .arg("-C")
        .arg(workspace)
        .env("LATHE_HOME", home)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("LATHE_PROVIDER")
        .stdin(Stdio::null());
    // Off the runtime's thread: the scripted server answers on this runtime.
    tokio::task::spawn_blocking(move || command.output()).await.expect("join").expect("run lathe")
}

#[tokio::test]
async fn a_local_session_whose_outputs_overflow_its_8k_window_compacts_instead_of_failing() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (home, workspace) = (tmp.path().join("home"), tmp.path().join("ws"));
    std::fs::create_dir_all(&home).expect("home");
    std::fs::create_dir_all(&workspace).expect("ws");
    std::fs::write(workspace.join("notes.txt"), "Ship the 0.2 release on Friday\nThen rest\n")
        .expect("notes");

    // The first part of the session: three long command outputs, through a scripted provider.
    let calls: Vec<Value> = (0..3u32)
        .map(|i| {
            json!({"tool_calls": [{"id": format!("call_{i}"), "name": "shell",
                                   "arguments": {"command": listing(100_000 + i * 10_000)}}]})
        })
        .chain([json!({"text": "Listed all three."})])
        .collect();
    let script = Script::from_json(&json!({"turns": calls}).to_string()).expect("script");
    let server = MockServer::start(Mode::Scripted(script)).await.expect("mock");
    let first = lathe(
        &home,
        &workspace,
        &["-p", "List the three ranges.", "--provider", "anthropic", "--base-url", &server.url(), "--yolo"],
    )
    .await;
    assert_eq!(first.status.code(), Some(0), "{}", String::from_utf8_lossy(&first.stderr));

    // The same session continued on the local model: its history is larger than the window.
    let out = lathe(
        &home,
        &workspace,
        &[
            "-p",
            "What is the first line of notes.txt?",
            "--continue",
            "--provider",
            "local",
            "--model",
            "0.5b",
            "--yolo",
            "--max-turns",
            "4",
            "--output-format",
            "stream-json",
        ],
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect();
    let result = events.last().expect("a result line");
    assert!(events.iter().any(|event| event["type"] == "compacted"), "no compaction: {result}\n{stderr}");
    assert_ne!(result["error"]["kind"], "context_window_exceeded", "{result}\n{stderr}");
    assert!(
        matches!(result["subtype"].as_str(), Some("success" | "error_max_turns")),
        "the run goes on after the compaction: {result}\n{stderr}"
    );
    let context = events
        .iter()
        .rfind(|event| event["type"] == "usage" && !event["context"].is_null())
        .expect("a usage line with context");
    assert_eq!(context["context"]["window_tokens"], 8_192, "{context}");
}
