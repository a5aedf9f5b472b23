//! The local executor: up to N `lathe batch-task` processes at a time on this machine.

use std::ops::ControlFlow;
use std::path::Path;
use std::process::Stdio;

use serde_json::{Value, json};
use tokio::task::JoinSet;

use super::tasks::Task;

/// Runs `tasks` with at most `workers` at a time; `on_start` is called as each starts, `on_row`
/// with each result row as it ends. When `on_row` breaks, the tasks still running are killed
/// (their agents with them) and no more start.
pub async fn run(
    tasks: &[Task],
    out: &Path,
    workers: usize,
    on_start: &mut dyn FnMut(&Task),
    on_row: &mut dyn FnMut(Value) -> ControlFlow<()>,
) {
    let mut queue = tasks.iter();
    let mut running = JoinSet::new();
    loop {
        while running.len() < workers.max(1) {
            let Some(task) = queue.next() else { break };
            on_start(task);
            let (task, out) = (task.clone(), out.to_path_buf());
            running.spawn(async move { one(&task, &out).await });
        }
        let Some(joined) = running.join_next().await else { return };
        let row =
            joined.unwrap_or_else(|error| json!({"id": null, "status": "error", "error": error.to_string()}));
        if on_row(row).is_break() {
            running.abort_all();
            while running.join_next().await.is_some() {}
            return;
        }
    }
}

/// One task as a `lathe batch-task` child (killed with this process); its row, or an `error`
/// row when it printed none.
async fn one(task: &Task, out: &Path) -> Value {
    let failed = |message: String| {
        json!({"id": task.id, "status": "error", "subtype": "error_executor", "turns": 0, "tool_calls": 0,
               "input_tokens": 0, "cached_tokens": 0, "output_tokens": 0, "cost_usd": 0.0,
               "agent_s": 0.0, "test_s": null, "patch_bytes": 0, "attempt": 1, "node": "local",
               "model": task.model, "wall_s": 0.0, "error": message})
    };
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(error) => return failed(format!("cannot find the lathe binary: {error}")),
    };
    let json = match serde_json::to_string(task) {
        Ok(json) => json,
        Err(error) => return failed(error.to_string()),
    };
    let mut command = tokio::process::Command::new(exe);
    command.args(["batch-task", "--task-json", &json, "--attempt", "1", "--node", "local", "--out"]).arg(out);
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
    lathe_process::die_with_parent(&mut command);
    let output = match command.output().await {
        Ok(output) => output,
        Err(error) => return failed(format!("cannot start lathe batch-task: {error}")),
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let row = stdout.lines().rev().find(|line| !line.trim().is_empty()).and_then(|line| {
        serde_json::from_str::<Value>(line).ok().filter(|row| row["id"].as_str() == Some(task.id.as_str()))
    });
    match row {
        Some(row) if output.status.success() => row,
        _ => {
            let stderr = String::from_utf8_lossy(&output.stderr);
            failed(format!(
                "lathe batch-task ended with {} and no result row: {}",
                output.status,
                stderr.trim()
            ))
        }
    }
}
