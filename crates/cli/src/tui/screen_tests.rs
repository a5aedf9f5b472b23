//! Snapshot tests of whole screens: states driven by agent events and keys, drawn through the
//! real inline-terminal code onto a ratatui `TestBackend`; each snapshot shows the scrollback (what
//! stays in the terminal) and the visible screen.

use crossterm::event::{KeyCode, KeyModifiers};
use lathe_protocol::PermissionMode;
use lathe_protocol::{
    AgentEvent, AgentOp, AssistantMessage, Content, ContextUsage, PermissionAnswer, Receipt, ResultView,
    RunStats, StopCause, StopReason, ToolCall, ToolResult, ToolStatus, Usage,
};
use pretty_assertions::assert_eq;
use ratatui::style::Color;
use serde_json::json;

use super::picker::SessionRow;
use super::state::Action;
use super::test_screen::Screen;

fn call(id: &str, name: &str, arguments: serde_json::Value) -> ToolCall {
    ToolCall { id: id.into(), name: name.into(), arguments, incomplete: None }
}

fn result(id: &str, text: &str, is_error: bool, status: ToolStatus) -> ToolResult {
    ToolResult {
        call_id: id.into(),
        content: vec![Content::text(text)],
        is_error,
        status,
        receipt: Some(Receipt::default()),
    }
}

/// `result` with the exit code its receipt records, as a command's result has.
fn exited(mut result: ToolResult, code: i32) -> ToolResult {
    result.receipt = Some(Receipt { exit_code: Some(code), ..Receipt::default() });
    result
}

/// A call's start as the executor announces it: with its tool's one-line summary.
fn started(call: ToolCall) -> AgentEvent {
    let summary = lathe_tools::ToolRegistry::builtin()
        .get(&call.name)
        .map(|tool| tool.summary(&call.arguments))
        .unwrap_or_default();
    AgentEvent::ToolCallStarted { call, summary }
}

/// The preview the call's tool gives for a permission request, in the workspace `/w`.
fn preview_of(call: &ToolCall) -> Option<lathe_protocol::ToolPreview> {
    let ctx = lathe_tools::ToolContext::new("/w".into());
    lathe_tools::ToolRegistry::builtin().get(&call.name).and_then(|tool| tool.preview(&call.arguments, &ctx))
}

fn assistant(content: Vec<Content>, stop: StopReason) -> AgentEvent {
    AgentEvent::AssistantMessage {
        message: AssistantMessage {
            content,
            stop,
            usage: Usage::default(),
            model: "claude-sonnet-4-5".into(),
        },
    }
}

fn finished(screen: &mut Screen) {
    screen.event(AgentEvent::Finished {
        cause: StopCause::Completed,
        stats: RunStats::default(),
        final_text: String::new(),
        report: None,
    });
}

/// Sends `text` in pieces of `size` characters.
fn stream(screen: &mut Screen, text: &str, size: usize) {
    let chars: Vec<char> = text.chars().collect();
    for piece in chars.chunks(size) {
        screen.event(AgentEvent::TextDelta { text: piece.iter().collect() });
    }
}

fn prompt(screen: &mut Screen, text: &str) {
    screen.type_text(text);
    let actions = screen.key(KeyCode::Enter);
    assert_eq!(actions, vec![Action::Remember(text.into()), Action::Prompt(text.into())]);
    screen.event(AgentEvent::TurnStarted { turn: 1 });
}

const ANSWER: &str = "Here is the function:\n\n```rust\nfn greet(name: &str) -> String {\n    format!(\"Hello, {name}!\")\n}\n```\n\nCall it with `greet(\"Ada\")`. It:\n\n- returns a **new** `String`\n- never panics\n";

#[test]
fn streaming_answer_with_a_code_block() {
    let mut screen = Screen::new(60, 14);
    prompt(&mut screen, "add a greeting function");
    screen.at(1_200);
    let cut = ANSWER.find("    format").unwrap_or(0) + 10;
    stream(&mut screen, &ANSWER[..cut], 7);
    insta::assert_snapshot!("streaming_mid_code_block", screen.text());

    screen.at(2_600);
    stream(&mut screen, &ANSWER[cut..], 7);
    screen.event(assistant(vec![Content::text(ANSWER)], StopReason::EndTurn));
    finished(&mut screen);
    insta::assert_snapshot!("streaming_finished", screen.text());

    // The code is highlighted (the keyword in a theme color), inline code is cyan.
    let keyword = screen.cell("fn greet", 0).map(|c| c.fg);
    assert!(matches!(keyword, Some(Color::Rgb(..))), "code is highlighted: {keyword:?}");
    assert_eq!(screen.cell("greet(\"Ada\")", 0).map(|c| c.fg), Some(Color::Cyan));
}

#[test]
fn reasoning_is_dimmed_and_answer_follows() {
    let mut screen = Screen::new(50, 10);
    prompt(&mut screen, "why?");
    screen.event(AgentEvent::ThinkingDelta { text: "The user asks why. Check the log first.\n".into() });
    stream(&mut screen, "Because the cache was stale.", 5);
    screen.event(assistant(vec![Content::text("Because the cache was stale.")], StopReason::EndTurn));
    finished(&mut screen);
    let text = screen.all_text();
    assert!(text.contains("The user asks why. Check the log first."), "{text}");
    assert!(text.contains("Because the cache was stale."), "{text}");
    let thinking = screen.cell("The user asks", 0).map(|c| c.modifier);
    assert!(thinking.is_some_and(|m| m.contains(ratatui::style::Modifier::DIM)), "reasoning is dimmed");
    let answer = screen.cell("Because", 0).map(|c| c.modifier);
    assert!(answer.is_some_and(|m| !m.contains(ratatui::style::Modifier::DIM)), "the answer is not");
}

#[test]
fn tool_lines_with_results() {
    let mut screen = Screen::new(72, 30);
    prompt(&mut screen, "run the tests");
    let read = call("c1", "read_file", json!({"path": "src/lib.rs"}));
    let test = call("c2", "shell", json!({"command": "cargo test"}));
    let failing = call("c3", "shell", json!({"command": "grep -r TODO src"}));
    let denied = call("c4", "write_file", json!({"path": "/etc/hosts", "content": "x"}));
    screen.event(assistant(
        vec![Content::ToolCall(read.clone()), Content::ToolCall(test.clone())],
        StopReason::ToolUse,
    ));
    screen.at(100).event(started(read));
    screen.at(130).event(AgentEvent::ToolResult {
        result: result(
            "c1",
            "     1\tpub fn add() {}\n     2\t\n     3\tfn helper() {}\n",
            false,
            ToolStatus::Completed,
        ),
        tool: "read_file".into(),
        elapsed_ms: 30,
        view: Some(ResultView::Line { text: "read 3 lines".into() }),
    });
    screen.at(140).event(started(test));
    screen.at(1_900);
    screen.draw();
    insta::assert_snapshot!("tool_running", screen.text());
    let output = (1..=8).map(|i| format!("test case_{i} ... ok")).collect::<Vec<_>>().join("\n");
    screen.event(AgentEvent::ToolResult {
        result: exited(result("c2", &format!("{output}\nexit code: 0"), false, ToolStatus::Completed), 0),
        tool: "shell".into(),
        elapsed_ms: 1_760,
        view: None,
    });
    screen.event(started(failing));
    screen.event(AgentEvent::ToolResult {
        result: exited(
            result("c3", "(no output)\nexit code: 1 (no lines matched)", true, ToolStatus::Completed),
            1,
        ),
        tool: "shell".into(),
        elapsed_ms: 12,
        view: None,
    });
    screen.event(started(denied));
    screen.event(AgentEvent::ToolResult {
        result: result("c4", "denied by the user: write it under ./config instead", true, ToolStatus::Denied),
        tool: "write_file".into(),
        elapsed_ms: 0,
        view: None,
    });
    insta::assert_snapshot!("tool_results", screen.text());
}

#[test]
fn edit_result_shows_a_colored_diff() {
    let mut screen = Screen::new(64, 20);
    prompt(&mut screen, "swap the operands");
    let old = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\nfn helper() {}\n";
    let new = "pub fn add(a: i32, b: i32) -> i32 {\n    b + a\n}\n\nfn helper() {}\n";
    let diff = similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header("a/src/lib.rs", "b/src/lib.rs")
        .to_string();
    let edit =
        call("e1", "edit_file", json!({"path": "src/lib.rs", "old_string": "a + b", "new_string": "b + a"}));
    screen.event(started(edit));
    screen.event(AgentEvent::ToolResult {
        result: result(
            "e1",
            &format!("Edited src/lib.rs: replaced 1 occurrence.\n{diff}"),
            false,
            ToolStatus::Completed,
        ),
        tool: "edit_file".into(),
        elapsed_ms: 4,
        view: Some(ResultView::Diff { path: "src/lib.rs".into(), unified: diff.clone() }),
    });
    let create = call("w1", "write_file", json!({"path": "notes.txt", "content": "first\nsecond\n"}));
    let created = similar::TextDiff::from_lines("", "first\nsecond\n")
        .unified_diff()
        .header("a/notes.txt", "b/notes.txt")
        .to_string();
    screen.event(started(create));
    screen.event(AgentEvent::ToolResult {
        result: result("w1", "Created notes.txt (13 bytes, 2 lines).", false, ToolStatus::Completed),
        tool: "write_file".into(),
        elapsed_ms: 2,
        view: Some(ResultView::Diff { path: "notes.txt".into(), unified: created }),
    });
    insta::assert_snapshot!("edit_diff", screen.text());

    let removed = screen.cell("-     a + b", 6).map(|c| c.fg);
    let added = screen.cell("+     b + a", 6).map(|c| c.fg);
    assert_eq!((removed, added), (Some(Color::Red), Some(Color::Green)));
}

#[test]
fn permission_dialog_for_a_command() {
    let mut screen = Screen::new(70, 14);
    prompt(&mut screen, "clean up and test");
    let shell = call("s1", "shell", json!({"command": "rm -rf target/tmp && cargo test --workspace"}));
    screen.event(started(shell.clone()));
    screen.event(AgentEvent::PermissionRequest {
        preview: preview_of(&shell),
        call: shell,
        reason: "runs a command that is not read-only".into(),
        suggestion: Some("Bash(cargo test *)".into()),
    });
    insta::assert_snapshot!("permission_dialog", screen.text());

    // `n` asks for feedback; Enter sends it with the denial.
    assert_eq!(screen.key(KeyCode::Char('n')), Vec::new());
    screen.type_text("keep target/tmp");
    insta::assert_snapshot!("permission_feedback", screen.screen_text());
    let actions = screen.key(KeyCode::Enter);
    assert_eq!(
        actions,
        vec![Action::Op(AgentOp::Permission {
            call_id: "s1".into(),
            answer: PermissionAnswer::Deny { feedback: Some("keep target/tmp".into()) },
        })]
    );
    assert!(screen.state.dialog.is_none());
}

#[test]
fn permission_keys_answer_once_always_and_escape() {
    for (code, answer) in [
        (KeyCode::Char('y'), PermissionAnswer::AllowOnce),
        (KeyCode::Char('a'), PermissionAnswer::AllowAlways),
        (KeyCode::Esc, PermissionAnswer::Deny { feedback: None }),
    ] {
        let mut screen = Screen::new(60, 12);
        let shell = call("s1", "shell", json!({"command": "make"}));
        screen.event(started(shell.clone()));
        screen.event(AgentEvent::PermissionRequest {
            preview: preview_of(&shell),
            call: shell,
            reason: String::new(),
            suggestion: None,
        });
        let actions = screen.key(code);
        assert_eq!(actions, vec![Action::Op(AgentOp::Permission { call_id: "s1".into(), answer })]);
    }
}

#[test]
fn status_line_shows_model_mode_context_tokens_and_cost() {
    let mut screen = Screen::new(80, 4);
    screen.state.session.mode = Some(PermissionMode::AcceptEdits);
    let stats = RunStats {
        turns: 2,
        input_tokens: 30_500,
        output_tokens: 1_250,
        cost_usd: 0.1234,
        ..RunStats::default()
    };
    let last = Usage { input_tokens: Some(24_000), output_tokens: Some(600), ..Usage::default() };
    let context =
        ContextUsage { used_tokens: 24_600, window_tokens: 200_000, percent: 12.3, largest: Vec::new() };
    screen.event(AgentEvent::Usage { last, stats, context: Some(context.clone()) });
    insta::assert_snapshot!("status_line", screen.screen_text());

    // Before the session starts, the parts not known yet are left out with their separators.
    let mut starting = Screen::new(80, 4);
    starting.state.session.model.clear();
    starting.state.session.mode = None;
    starting.draw();
    assert_eq!(starting.screen_text().lines().last(), Some("ctx 0% · 0 tokens · $0.00"));

    // Narrow: parts drop from the right.
    let mut narrow = Screen::new(40, 4);
    narrow.event(AgentEvent::Usage { last, stats, context: Some(context.clone()) });
    assert_eq!(narrow.screen_text().lines().last(), Some("claude-sonnet-4-5 · default · ctx 12%"));
}

#[test]
fn resume_picker_lists_sessions_and_opens_the_chosen_one() {
    let mut screen = Screen::new(72, 12);
    let row = |id: &str, title: &str, when: &str, turns: u32, cost_usd: f64| SessionRow {
        id: id.into(),
        title: title.into(),
        when: when.into(),
        turns,
        cost_usd,
    };
    screen.state.open_sessions(vec![
        row("s3", "fix the flaky retry test in provider", "2026-11-30 17:55", 4, 0.31),
        row("s2", "add a --verbose flag", "2026-11-29 09:12", 1, 0.02),
        row(
            "s1",
            "why does test_parse fail? it worked yesterday and nothing changed",
            "2026-11-28 21:40",
            12,
            1.5,
        ),
    ]);
    screen.draw();
    screen.key(KeyCode::Down);
    insta::assert_snapshot!("resume_picker", screen.screen_text());
    assert_eq!(screen.key(KeyCode::Enter), vec![Action::ResumeSession("s2".into())]);
    assert!(screen.state.overlay.is_none());
}

#[test]
fn help_lists_commands_and_keys() {
    let mut screen = Screen::new(80, 30);
    screen.type_text("/help");
    let actions = screen.key(KeyCode::Enter);
    assert_eq!(actions, vec![Action::Remember("/help".into())]);
    insta::assert_snapshot!("help", screen.text());
}

#[test]
fn jobs_and_status_list_the_sessions_background_jobs() {
    let (Ok(runtime), Ok(dir)) = (tokio::runtime::Runtime::new(), tempfile::tempdir()) else {
        panic!("a runtime and a temp dir")
    };
    let mut ctx = lathe_tools::ToolContext::new(dir.path().to_path_buf());
    ctx.spill_dir = dir.path().join("spill");
    let mut screen = Screen::new(100, 30);
    screen.type_text("/jobs");
    screen.key(KeyCode::Enter);
    assert!(screen.all_text().contains("no background jobs in this session"), "{}", screen.all_text());
    let Some(shell) = lathe_tools::ToolRegistry::builtin().get("shell") else { panic!("shell is built in") };
    runtime.block_on(async {
        for command in ["sleep 30", "exit 3"] {
            let started = shell.call(json!({"command": command, "run_in_background": true}), &ctx).await;
            assert!(started.is_ok(), "{started:?}");
        }
        for _ in 0..1000 {
            if !ctx.jobs.list()[1].state.is_running() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    });
    screen.state.jobs = ctx.jobs.clone();
    screen.type_text("/jobs");
    screen.key(KeyCode::Enter);
    let text = screen.all_text();
    assert!(text.contains("background jobs (id, state, started ago, command):"), "{text}");
    let row = |id: &str| {
        text.lines().find(|line| line.trim_start().starts_with(id)).unwrap_or_default().to_string()
    };
    assert!(row("job1").starts_with("  job1  running ") && row("job1").ends_with("  sleep 30"), "{text}");
    assert!(row("job2").starts_with("  job2  exited 3") && row("job2").ends_with("  exit 3"), "{text}");
    screen.type_text("/status");
    screen.key(KeyCode::Enter);
    assert!(screen.all_text().contains("jobs 1 running (job1); /jobs lists them"), "{}", screen.all_text());
    assert_eq!(runtime.block_on(ctx.jobs.end_all()).len(), 1);
}

#[test]
fn unknown_command_gets_a_hint_and_no_model_call() {
    let mut screen = Screen::new(80, 10);
    screen.type_text("/halp me");
    let actions = screen.key(KeyCode::Enter);
    assert_eq!(actions, vec![Action::Remember("/halp me".into())]);
    let text = screen.all_text();
    assert!(text.contains("unknown command /halp (did you mean /help?); /help lists the commands"), "{text}");
}

#[test]
fn tiny_terminal_20_by_5_stays_usable() {
    let mut screen = Screen::new(20, 5);
    prompt(&mut screen, "explain the build in detail please");
    stream(&mut screen, ANSWER, 3);
    insta::assert_snapshot!("tiny_streaming", screen.text());
    let shell = call("s1", "shell", json!({"command": "cargo build --release --features local"}));
    screen.event(started(shell.clone()));
    screen.event(AgentEvent::PermissionRequest {
        preview: preview_of(&shell),
        call: shell,
        reason: "runs a command".into(),
        suggestion: None,
    });
    insta::assert_snapshot!("tiny_dialog", screen.screen_text());
    assert!(screen.screen_text().contains("esc no"), "the answer keys stay visible");
    screen.key(KeyCode::Char('y'));
    finished(&mut screen);
    screen.type_text("a long follow-up prompt that wraps several times");
    let text = screen.screen_text();
    assert!(text.lines().count() <= 5);
    assert!(text.contains("times"), "the cursor's row stays visible:\n{text}");
}

#[test]
fn resize_mid_stream_keeps_working() {
    let mut screen = Screen::new(60, 12);
    prompt(&mut screen, "go");
    stream(&mut screen, &ANSWER[..40], 4);
    screen.resize(24, 6);
    stream(&mut screen, &ANSWER[40..90], 4);
    screen.resize(1, 1);
    stream(&mut screen, &ANSWER[90..120], 4);
    screen.resize(100, 30);
    stream(&mut screen, &ANSWER[120..], 4);
    screen.event(assistant(vec![Content::text(ANSWER)], StopReason::EndTurn));
    finished(&mut screen);
    let text = screen.all_text();
    assert!(text.contains("never panics"), "{text}");
}

#[test]
fn a_ten_megabyte_paste_is_refused_with_a_message() {
    let mut screen = Screen::new(80, 10);
    let paste = "x".repeat(10 * 1024 * 1024);
    screen.state.on_paste(&paste, screen.now);
    screen.draw();
    assert!(screen.state.input.is_empty());
    assert!(
        screen.all_text().contains("paste of 10.0 MB refused: the limit is 1 MB"),
        "{}",
        screen.all_text()
    );
}

#[test]
fn a_large_paste_is_collapsed_and_sent_whole() {
    let mut screen = Screen::new(80, 10);
    let paste: String = (1..=300).map(|i| format!("line {i}\n")).collect();
    screen.state.on_paste(&paste, screen.now);
    screen.draw();
    assert!(screen.screen_text().contains("› [Pasted text #1 +300 lines]"), "{}", screen.screen_text());
    screen.type_text(" summarise");
    let actions = screen.key(KeyCode::Enter);
    let expected = format!("{paste} summarise");
    assert_eq!(actions, vec![Action::Remember(expected.clone()), Action::Prompt(expected)]);
}

#[test]
fn ctrl_c_cancels_a_turn_then_twice_exits_when_idle() {
    let mut screen = Screen::new(60, 8);
    prompt(&mut screen, "long task");
    let ctrl_c = |screen: &mut Screen| screen.key_with(KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert_eq!(ctrl_c(&mut screen), vec![Action::Op(AgentOp::Cancel)]);
    screen.event(AgentEvent::Finished {
        cause: StopCause::Cancelled,
        stats: RunStats::default(),
        final_text: String::new(),
        report: None,
    });
    assert!(screen.all_text().contains("Interrupted"));
    screen.at(10_000);
    assert_eq!(ctrl_c(&mut screen), Vec::new());
    assert!(screen.screen_text().contains("Press Ctrl+C again to exit"));
    screen.at(12_500);
    assert_eq!(ctrl_c(&mut screen), Vec::new(), "more than 2 s later: armed again, no exit");
    screen.at(13_000);
    assert_eq!(ctrl_c(&mut screen), vec![Action::Quit]);
}

#[test]
fn ctrl_d_on_empty_input_exits() {
    let mut screen = Screen::new(60, 8);
    screen.type_text("x");
    assert_eq!(screen.key_with(KeyCode::Char('d'), KeyModifiers::CONTROL), Vec::new());
    screen.key(KeyCode::Backspace);
    assert_eq!(screen.key_with(KeyCode::Char('d'), KeyModifiers::CONTROL), vec![Action::Quit]);
}

#[test]
fn prompt_typed_while_busy_is_queued_and_sent_after_the_turn() {
    let mut screen = Screen::new(60, 8);
    prompt(&mut screen, "first");
    screen.type_text("second");
    assert_eq!(screen.key(KeyCode::Enter), vec![Action::Remember("second".into())]);
    let actions = screen.event(AgentEvent::Finished {
        cause: StopCause::Completed,
        stats: RunStats::default(),
        final_text: String::new(),
        report: None,
    });
    assert_eq!(actions, vec![Action::Prompt("second".into())]);
}

#[test]
fn shift_tab_cycles_the_permission_mode() {
    let mut screen = Screen::new(60, 6);
    let mut seen = Vec::new();
    for _ in 0..3 {
        seen.extend(screen.key_with(KeyCode::BackTab, KeyModifiers::SHIFT));
    }
    assert_eq!(
        seen,
        vec![
            Action::SetMode(PermissionMode::AcceptEdits),
            Action::SetMode(PermissionMode::Plan),
            Action::SetMode(PermissionMode::Default)
        ]
    );
}

#[test]
fn permission_dialog_shows_the_tools_preview_or_else_the_arguments() {
    let mut screen = Screen::new(70, 16);
    let edit =
        call("e1", "edit_file", json!({"path": "src/lib.rs", "old_string": "a + b", "new_string": "b + a"}));
    screen.event(started(edit.clone()));
    let unified = "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,3 +1,3 @@\n fn add(a: i32, b: i32) -> i32 {\n-    a + b\n+    b + a\n }\n";
    screen.event(AgentEvent::PermissionRequest {
        call: edit,
        reason: "edits a file".into(),
        suggestion: None,
        preview: Some(lathe_protocol::ToolPreview::Diff {
            path: "src/lib.rs".into(),
            unified: unified.into(),
            change: lathe_protocol::FileChange::Edit,
        }),
    });
    let text = screen.screen_text();
    assert!(text.contains("Edit this file? (edit_file)"), "{text}");
    for row in ["1   fn add(a: i32, b: i32) -> i32 {", "2 -     a + b", "2 +     b + a", "3   }"] {
        assert!(text.contains(row), "`{row}`:\n{text}");
    }
    assert!(!text.contains("old_string"), "the arguments are not shown:\n{text}");

    let mut screen = Screen::new(70, 16);
    let other = call("m1", "mcp__db__drop", json!({"table": "users"}));
    screen.event(started(other.clone()));
    screen.event(AgentEvent::PermissionRequest {
        call: other,
        reason: String::new(),
        suggestion: None,
        preview: None,
    });
    let text = screen.screen_text();
    assert!(text.contains("Use mcp__db__drop?"), "{text}");
    assert!(text.contains("\"table\": \"users\""), "{text}");
}

#[test]
fn permission_dialog_for_a_fetch_offers_the_domain_rule() {
    let mut screen = Screen::new(70, 12);
    prompt(&mut screen, "read the tokio docs");
    let fetch = call("f1", "web_fetch", json!({"url": "https://docs.rs/tokio/latest/tokio/"}));
    screen.event(started(fetch.clone()));
    screen.event(AgentEvent::PermissionRequest {
        preview: preview_of(&fetch),
        call: fetch,
        reason: "fetches https://docs.rs/tokio/latest/tokio/".into(),
        suggestion: Some("WebFetch(domain:docs.rs)".into()),
    });
    insta::assert_snapshot!("permission_dialog_fetch", screen.text());
}
