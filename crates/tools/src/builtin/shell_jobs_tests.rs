#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use crate::ToolError;
use crate::test_support::Workspace;
use crate::tool::DynTool;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// Liveness guard: a hung call fails the test instead of hanging it.
async fn call(ws: &Workspace, tool: &str, args: Value) -> Result<crate::ToolOutput, ToolError> {
    tokio::time::timeout(Duration::from_secs(40), ws.call(tool, args)).await.expect("the call returned")
}

async fn ok(ws: &Workspace, tool: &str, args: Value) -> crate::ToolOutput {
    call(ws, tool, args).await.unwrap_or_else(|e| panic!("{tool}: {e}"))
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

#[tokio::test]
async fn a_background_job_is_started_read_and_killed() {
    let ws = Workspace::new();
    let started =
        ok(&ws, "shell", json!({"command": "echo ready; sleep 30", "run_in_background": true})).await;
    let text = started.text_content();
    assert!(text.starts_with("started job1 (pid "), "{text}");
    assert!(text.contains(") in the background: echo ready; sleep 30\n"), "{text}");
    assert!(
        text.contains(&format!("All of its output also goes to {}", ws.spill.path().display())),
        "{text}"
    );
    assert_eq!((started.is_error, started.exit_code), (false, None));

    let read = ok(&ws, "shell_output", json!({"id": "job1", "wait_ms": 20_000})).await;
    let text = read.text_content();
    assert!(text.starts_with("[job1 is running ("), "{text}");
    assert!(text.ends_with(" s so far): echo ready; sleep 30]\nready"), "{text}");
    let again = ok(&ws, "shell_output", json!({"id": "job1"})).await.text_content();
    assert!(again.ends_with("]\n(no new output)"), "{again}");

    let killed = ok(&ws, "shell_kill", json!({"id": "job1"})).await;
    let text = killed.text_content();
    assert!(first_line(&text).starts_with("[job1 was stopped after "), "{text}");
    assert!(text.ends_with("(no new output)"), "{text}");
    assert_eq!(ws.ctx.jobs.list()[0].state, crate::builtin::JobState::Killed);
    let twice = ok(&ws, "shell_kill", json!({"id": "job1"})).await.text_content();
    assert!(twice.starts_with("[job1 was stopped after "), "killing an ended job reports it: {twice}");
}

#[tokio::test]
async fn waiting_returns_what_comes_later_and_the_exit_code_at_the_end() {
    let ws = Workspace::new();
    ok(
        &ws,
        "shell",
        json!({"command": "until [ -e go ]; do sleep 0.02; done; echo late; exit 4", "run_in_background": true}),
    )
    .await;
    let quiet = ok(&ws, "shell_output", json!({"id": "job1", "wait_ms": 50})).await.text_content();
    assert!(quiet.starts_with("[job1 is running") && quiet.ends_with("(no new output)"), "{quiet}");
    ws.put("go", "");
    let mut text = String::new();
    let mut last = None;
    // The job writes `late` and exits: one read or two, the end is seen with the code.
    for _ in 0..2 {
        let read = ok(&ws, "shell_output", json!({"id": "job1", "wait_ms": 20_000})).await;
        text.push_str(&read.text_content());
        let done = read.exit_code.is_some();
        last = Some(read);
        if done {
            break;
        }
    }
    let last = last.unwrap();
    assert!(text.contains("late"), "{text}");
    assert!(first_line(&last.text_content()).starts_with("[job1 exited with code 4 after "), "{text}");
    assert_eq!((last.exit_code, last.is_error), (Some(4), true));
}

#[tokio::test]
async fn a_filter_shows_matching_lines_and_waits_for_one() {
    let ws = Workspace::new();
    ok(
        &ws,
        "shell",
        json!({"command": "echo noise 1; echo noise 2; until [ -e go ]; do sleep 0.02; done; echo 'GET /a 200'; \
                          echo noise 3; echo 'GET /b 404'; sleep 30",
               "run_in_background": true}),
    )
    .await;
    let none = ok(&ws, "shell_output", json!({"id": "job1", "filter": "^GET", "wait_ms": 100})).await;
    assert!(none.text_content().ends_with("(no new output matching /^GET/)"), "{}", none.text_content());
    ws.put("go", "");
    let mut seen = String::new();
    while !seen.contains("/b 404") {
        let read = ok(&ws, "shell_output", json!({"id": "job1", "filter": "^GET", "wait_ms": 20_000})).await;
        let text = read.text_content();
        seen.push_str(text.split_once("]\n").map_or("", |(_, rest)| rest));
        seen.push('\n');
    }
    assert_eq!(
        seen.split('\n').filter(|line| !line.is_empty()).collect::<Vec<_>>(),
        ["GET /a 200", "GET /b 404"]
    );
    let error = call(&ws, "shell_output", json!({"id": "job1", "filter": "(unclosed"})).await.unwrap_err();
    assert!(error.to_string().starts_with("shell_output: filter is not a valid regex: "), "{error}");
    ok(&ws, "shell_kill", json!({"id": "job1"})).await;
}

#[tokio::test]
async fn an_unknown_id_says_which_jobs_this_session_has() {
    let ws = Workspace::new();
    let error = call(&ws, "shell_output", json!({"id": "job1"})).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "shell_output: no job job1 in this session; it has none (jobs end with the session that started them)"
    );
    ok(&ws, "shell", json!({"command": "true", "run_in_background": true})).await;
    let error = call(&ws, "shell_kill", json!({"id": "job7"})).await.unwrap_err();
    assert_eq!(error.to_string(), "shell_kill: no job job7 in this session; its jobs are job1");
    let error = call(&ws, "shell_output", json!({"id": "job1", "wait_ms": 30_001})).await.unwrap_err();
    assert!(matches!(error, ToolError::InvalidArguments { .. }), "{error}");
}

#[tokio::test]
async fn a_chatty_jobs_output_is_capped_and_spilled() {
    let ws = Workspace::new();
    ok(&ws, "shell", json!({"command": "seq 1 20000; echo done", "run_in_background": true})).await;
    for _ in 0..1000 {
        if !ws.ctx.jobs.list()[0].state.is_running() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let read = ok(&ws, "shell_output", json!({"id": "job1"})).await;
    let text = read.text_content();
    assert!(text.chars().count() <= super::MAX_OUTPUT_CHARS, "{} chars", text.chars().count());
    assert!(text.starts_with("[job1 exited with code 0 after "), "{}", &text[..200]);
    assert!(text.contains("\n1\n2\n3\n") && text.ends_with("\n20000\ndone"), "head and tail are kept");
    let spill = read.spill_path.expect("the whole read is spilled");
    let spilled = std::fs::read_to_string(spill).unwrap();
    assert!(spilled.starts_with("1\n2\n") && spilled.ends_with("20000\ndone\n"));
    assert!(text.contains("chars omitted; full output"), "the marker names the spill file");
    let log = ws.ctx.jobs.list()[0].log.clone().unwrap();
    let logged = std::fs::read_to_string(log).unwrap();
    assert_eq!(logged.lines().count(), 20_001);
}

#[tokio::test]
async fn an_interrupted_wait_returns_at_once_and_leaves_the_job_running() {
    let ws = Workspace::new();
    ok(&ws, "shell", json!({"command": "sleep 30", "run_in_background": true})).await;
    ws.ctx.cancel.cancel();
    let error = call(&ws, "shell_output", json!({"id": "job1", "wait_ms": 30_000})).await.unwrap_err();
    assert!(matches!(error, ToolError::Cancelled), "{error}");
    assert!(ws.ctx.jobs.list()[0].state.is_running());
    assert_eq!(ws.ctx.jobs.end_all().await.len(), 1);
}

#[test]
fn the_job_tools_take_an_id_and_need_no_approval() {
    let ws = Workspace::new();
    let registry = crate::ToolRegistry::builtin();
    for (tool, effect) in [("shell_output", crate::Effect::ReadOnly), ("shell_kill", crate::Effect::Mutating)]
    {
        let tool = registry.get(tool).unwrap();
        assert_eq!(tool.effect(&json!({})), effect);
        assert_eq!(tool.access(&json!({"id": "job1"}), &ws.ctx).unwrap(), crate::Access::Session);
        assert_eq!(tool.summary(&json!({"id": "job1", "filter": "GET"})), "job1 /GET/");
    }
    let size = |name: &str| serde_json::to_string(&registry.get(name).unwrap().spec()).unwrap().len();
    assert!(
        size("shell_output") <= 500 && size("shell_kill") <= 500,
        "{} {}",
        size("shell_output"),
        size("shell_kill")
    );
}

#[tokio::test]
async fn the_foreground_only_shell_has_no_background_option() {
    let ws = Workspace::new().with_tool(std::sync::Arc::new(super::ForegroundShell(super::Shell::default())));
    let registry_shell = crate::ToolRegistry::builtin().get("shell").unwrap().spec();
    let ws_shell = ws.call("shell", json!({"command": "echo hi"})).await.unwrap();
    assert_eq!(ws_shell.text_content(), "hi\nexit code: 0");
    let fg = ws.call("shell", json!({"command": "echo fg", "run_in_background": true})).await.unwrap();
    assert_eq!(
        fg.text_content(),
        "fg\nexit code: 0",
        "an unknown field is ignored: it runs in the foreground"
    );
    let foreground = super::ForegroundShell(super::Shell::default()).spec();
    assert!(registry_shell.input_schema["properties"].get("run_in_background").is_some());
    assert_eq!(foreground.input_schema["properties"].get("run_in_background"), None);
    assert_eq!(foreground.description, registry_shell.description);
    assert!(ws.ctx.jobs.list().is_empty());
}
