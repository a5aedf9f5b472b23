//! The embedded model does the same in every directory: one task in five workspaces whose paths
//! differ in name, length and depth gives the same tool calls and the same answer, byte for byte
//! (greedy decoding; the workspace's path and the date are not in its prompt). Needs the `local`
//! feature and the 0.5B model (`lathe model fetch 0.5b`).

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

const TASK: &str = "Fix the typo in greet.py so that it prints Hello, world!";

async fn run(home: &Path, workspace: &Path) -> Output {
    std::fs::create_dir_all(workspace).expect("workspace");
    std::fs::write(workspace.join("greet.py"), "def greet():\n    print(\"Helo, world!\")\n\n\ngreet()\n")
        .expect("greet.py");
    let mut command = Command::new(env!("CARGO_BIN_EXE_lathe"));
    command
        .args(["-p", TASK, "--provider", "local", "--model", "0.5b", "--yolo", "--sandbox", "off"])
        .args(["--max-turns", "6", "--memory", "off", "--output-format", "stream-json", "-C"])
        .arg(workspace)
        .env("LATHE_HOME", home)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("LATHE_PROVIDER")
        .stdin(Stdio::null());
    tokio::task::spawn_blocking(move || command.output()).await.expect("join").expect("run lathe")
}

/// The run's tool calls (name and arguments) and its result line's text and subtype, as text.
fn trace(output: &Output) -> String {
    let mut trace = String::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(event) = serde_json::from_str::<Value>(line) else { continue };
        match event["type"].as_str() {
            Some("tool_call") => trace.push_str(&format!("call {} {}\n", event["name"], event["arguments"])),
            Some("tool_result") => trace.push_str(&format!("result {}\n", event["output"])),
            Some("result") => trace.push_str(&format!("end {} {}\n", event["subtype"], event["result"])),
            _ => {}
        }
    }
    trace
}

#[tokio::test]
async fn one_task_in_five_directories_gives_the_same_calls_and_answer() {
    let tmp = tempfile::tempdir().expect("tmp");
    let home = tmp.path().join("home");
    // The first run fills the prompt cache of the model's system turn; the five compared runs
    // then all start from it.
    let warm = run(&home, &tmp.path().join("warm-up")).await;
    assert!(warm.status.code().is_some(), "{}", String::from_utf8_lossy(&warm.stderr));
    let names = ["a", "project-with-a-much-longer-name", "deep/er/still/ws", "Zz_9", "x.y-z"];
    let mut traces = Vec::new();
    for name in names {
        let workspace = tmp.path().join(name);
        let output = run(&home, &workspace).await;
        let trace = trace(&output);
        assert!(
            trace.contains("call "),
            "{name}: no call\n{trace}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            !trace.contains(&tmp.path().display().to_string()),
            "{name}: the path reached the model:\n{trace}"
        );
        traces.push((name, output.status.code(), trace));
    }
    let (first_name, first_code, first) = &traces[0];
    for (name, code, trace) in &traces[1..] {
        assert_eq!((code, trace), (first_code, first), "{name} differs from {first_name}");
    }
}
