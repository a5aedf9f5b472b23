//! The `lathe-mock` binary: first stdout line, serving, help text, and bad input.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::json;

/// Kills the child when the test ends, pass or fail.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn prints_its_address_first_and_serves_the_script() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.json");
    std::fs::write(&script, json!({"turns": [{"text": "from the binary"}]}).to_string()).unwrap();
    let log = dir.path().join("log.jsonl");
    let mut child = Child(
        Command::new(env!("CARGO_BIN_EXE_lathe-mock"))
            .arg("--log")
            .arg(&log)
            .arg("scripted")
            .arg(&script)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let stdout = child.0.stdout.take().unwrap();
    let line = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        line
    });
    let line = tokio::time::timeout(std::time::Duration::from_secs(30), line).await.unwrap().unwrap();
    let url = line.trim().strip_prefix("listening on ").unwrap_or_else(|| panic!("first line: {line:?}"));
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let body: serde_json::Value = super::http_client()
        .post(format!("{url}/v1/messages"))
        .json(&json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(body["content"][0]["text"], "from the binary");
    let logged = std::fs::read_to_string(&log).unwrap();
    assert_eq!(logged.lines().count(), 1);
}

#[test]
fn help_documents_the_three_modes() {
    let out = Command::new(env!("CARGO_BIN_EXE_lathe-mock")).arg("--help").output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "scripted",
        "cassette",
        "replay",
        "--port",
        "--log",
        "listening on",
        "lathe-mock scripted turns.json",
        "lathe-mock cassette",
        "replay ../shared/replay/R2.json",
    ] {
        assert!(help.contains(needle), "--help lacks {needle:?}:\n{help}");
    }
}

#[test]
fn a_missing_script_is_a_clear_error_not_a_panic() {
    let out = Command::new(env!("CARGO_BIN_EXE_lathe-mock"))
        .args(["scripted", "/nonexistent/turns.json"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("/nonexistent/turns.json"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}
