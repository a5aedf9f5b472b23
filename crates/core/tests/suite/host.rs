//! The session host: a session started with `SessionBuilder` against lathe-mock over loopback,
//! driven only by ops and observed only through events, as a front end does.

use std::path::{Path, PathBuf};
use std::time::Duration;

use lathe_core::host::{Flags, Interaction, SessionBuilder, SessionChoice, SessionHandle};
use lathe_mock::{LoggedRequest, MockServer, Mode, Script};
use lathe_protocol::{AgentEvent, AgentOp, Content, PermissionAnswer, PermissionMode, StopCause};
use serde_json::{Value, json};

/// A workspace and a Lathe home in a temp dir, and a scripted mock.
pub struct Setup {
    pub _tmp: tempfile::TempDir,
    pub home: PathBuf,
    pub workspace: PathBuf,
    pub server: MockServer,
}

pub async fn setup(turns: Value) -> Setup {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("home");
    let workspace = tmp.path().join("ws");
    std::fs::create_dir_all(&home).expect("home");
    std::fs::create_dir_all(&workspace).expect("ws");
    std::fs::write(home.join("config.toml"), "[retry]\nmax_retries = 0\n").expect("config");
    let script = Script::from_json(&json!({ "turns": turns }).to_string()).expect("script");
    let server = MockServer::start(Mode::Scripted(script)).await.expect("mock");
    Setup { _tmp: tmp, home, workspace, server }
}

impl Setup {
    pub fn flags(&self, mode: &str, session: SessionChoice) -> Flags {
        Flags {
            dir: Some(self.workspace.clone()),
            provider: Some("anthropic".into()),
            base_url: Some(self.server.url()),
            permission_mode: Some(mode.into()),
            session,
            ..Flags::default()
        }
    }

    pub async fn start(&self, mode: &str, session: SessionChoice, interaction: Interaction) -> SessionHandle {
        SessionBuilder::new(self.flags(mode, session))
            .interaction(interaction)
            .home(self.home.clone())
            .start()
            .await
            .expect("session starts")
    }
}

/// The next event, failing after 20 s.
pub async fn next(session: &mut SessionHandle) -> AgentEvent {
    tokio::time::timeout(Duration::from_secs(20), session.events.recv())
        .await
        .expect("an event within 20 s")
        .expect("the event stream is open")
}

/// Events until (and including) the first one `stop` accepts.
pub async fn until(session: &mut SessionHandle, stop: impl Fn(&AgentEvent) -> bool) -> Vec<AgentEvent> {
    let mut seen = Vec::new();
    loop {
        let event = next(session).await;
        let done = stop(&event);
        seen.push(event);
        if done {
            return seen;
        }
    }
}

pub fn is_finished(event: &AgentEvent) -> bool {
    matches!(event, AgentEvent::Finished { .. })
}

pub fn say(session: &SessionHandle, text: &str) {
    session.ops.send(AgentOp::UserInput { content: vec![Content::text(text)] }).expect("op");
}

pub fn call(id: &str, name: &str, arguments: Value) -> Value {
    json!({"id": id, "name": name, "arguments": arguments})
}

/// The text of every message of an Anthropic request body, for "was this sent" checks.
pub fn sent_text(request: &LoggedRequest) -> String {
    request.body["messages"].to_string()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

#[tokio::test]
async fn the_session_starts_with_session_started_and_a_resume_records_the_model_switch() {
    let env = setup(json!([{"text": "first"}, {"text": "second"}])).await;
    let mut session = env.start("default", SessionChoice::New, Interaction::Headless).await;
    let AgentEvent::SessionStarted {
        session_id,
        model,
        tools,
        permission_mode,
        session_file,
        resumed_turns,
        ..
    } = next(&mut session).await
    else {
        panic!("the first event is not SessionStarted");
    };
    assert_eq!(session_id, session.info.id);
    assert_eq!(model, "claude-sonnet-4-5");
    assert!(tools.iter().any(|tool| tool == "shell"), "{tools:?}");
    assert_eq!(permission_mode, PermissionMode::Default);
    assert_eq!(resumed_turns, 0);
    let file = PathBuf::from(session_file.expect("saved"));
    say(&session, "hello");
    let events = until(&mut session, is_finished).await;
    assert!(matches!(events.last(), Some(AgentEvent::Finished { cause: StopCause::Completed, .. })));
    session.ops.send(AgentOp::Quit).expect("quit");
    assert!(session.events.recv().await.is_none(), "the stream closes after Quit");

    let mut flags = env.flags("default", SessionChoice::Continue);
    flags.model = Some("claude-haiku-4-5".into());
    let mut resumed = SessionBuilder::new(flags).home(env.home.clone()).start().await.expect("resume");
    let AgentEvent::SessionStarted { session_id, resumed_turns, .. } = next(&mut resumed).await else {
        panic!("first event");
    };
    assert_eq!(session_id, session.info.id);
    assert_eq!(resumed_turns, 1);
    say(&resumed, "again");
    until(&mut resumed, is_finished).await;
    let lines = read(&file);
    assert!(lines.contains(r#""meta":"model_switch","model":"claude-haiku-4-5""#), "{lines}");
    let requests = env.server.requests();
    assert_eq!(requests[1].body["model"], "claude-haiku-4-5");
    assert!(sent_text(&requests[1]).contains("hello") && sent_text(&requests[1]).contains("first"));
}

#[tokio::test]
async fn an_interactive_permission_request_is_answered_by_an_op() {
    let env = setup(json!([
        {"tool_calls": [call("c1", "shell", json!({"command": "echo ran > ran.txt"}))]},
        {"tool_calls": [call("c2", "shell", json!({"command": "echo no > no.txt"}))]},
        {"text": "done"}
    ]))
    .await;
    let mut session = env.start("default", SessionChoice::New, Interaction::Interactive).await;
    say(&session, "run things");
    let ask = |id: &'static str| move |event: &AgentEvent| matches!(event, AgentEvent::PermissionRequest { call, .. } if call.id == id);
    let events = until(&mut session, ask("c1")).await;
    let Some(AgentEvent::PermissionRequest { reason, .. }) = events.last() else { panic!("no request") };
    assert!(reason.contains("ran.txt"), "the request names what the command writes: {reason}");
    assert!(!env.workspace.join("ran.txt").exists(), "ran before the answer");
    let answer = |call_id: &str, answer| AgentOp::Permission { call_id: call_id.into(), answer };
    session.ops.send(answer("c1", PermissionAnswer::AllowOnce)).expect("op");
    until(&mut session, ask("c2")).await;
    let deny = PermissionAnswer::Deny { feedback: Some("use printf instead".into()) };
    session.ops.send(answer("c2", deny)).expect("op");
    let events = until(&mut session, is_finished).await;
    assert!(matches!(events.last(), Some(AgentEvent::Finished { cause: StopCause::Completed, .. })));
    assert_eq!(read(&env.workspace.join("ran.txt")), "ran\n");
    assert!(!env.workspace.join("no.txt").exists());
    let last = env.server.requests().pop().expect("request");
    assert!(sent_text(&last).contains("use printf instead"), "{}", sent_text(&last));
}

#[tokio::test]
async fn cancel_answers_a_waiting_permission_request_and_the_session_takes_the_next_prompt() {
    let env = setup(json!([
        {"tool_calls": [call("c1", "write_file", json!({"path": "x.txt", "content": "x"}))]},
        {"text": "after cancel"}
    ]))
    .await;
    let mut session = env.start("default", SessionChoice::New, Interaction::Interactive).await;
    say(&session, "write");
    until(&mut session, |event| matches!(event, AgentEvent::PermissionRequest { .. })).await;
    session.ops.send(AgentOp::Cancel).expect("cancel");
    let events = until(&mut session, is_finished).await;
    assert!(matches!(events.last(), Some(AgentEvent::Finished { cause: StopCause::Cancelled, .. })));
    assert!(!env.workspace.join("x.txt").exists());
    say(&session, "next");
    let events = until(&mut session, is_finished).await;
    let Some(AgentEvent::Finished { final_text, .. }) = events.last() else { panic!("finished") };
    assert_eq!(final_text, "after cancel");
}

#[tokio::test]
async fn headless_denies_what_would_ask_and_set_mode_changes_it_for_the_next_turn() {
    let env = setup(json!([
        {"tool_calls": [call("c1", "write_file", json!({"path": "a.txt", "content": "a"}))]},
        {"text": "denied"},
        {"tool_calls": [call("c2", "write_file", json!({"path": "b.txt", "content": "b"}))]},
        {"text": "written"}
    ]))
    .await;
    let mut session = env.start("default", SessionChoice::New, Interaction::Headless).await;
    say(&session, "write a");
    let events = until(&mut session, is_finished).await;
    assert!(
        events.iter().any(|event| matches!(event, AgentEvent::ToolResult { result, .. } if result.is_error))
    );
    assert!(!env.workspace.join("a.txt").exists());
    session.ops.send(AgentOp::SetMode { mode: PermissionMode::AcceptEdits }).expect("op");
    assert_eq!(next(&mut session).await, AgentEvent::ModeChanged { mode: PermissionMode::AcceptEdits });
    // An unknown mode is refused where it is typed (the op carries only real modes), naming it.
    let unknown = "sometimes".parse::<PermissionMode>().expect_err("unknown mode");
    assert!(unknown.to_string().contains("sometimes"), "{unknown}");
    say(&session, "write b");
    until(&mut session, is_finished).await;
    assert_eq!(read(&env.workspace.join("b.txt")), "b");
}

#[tokio::test]
async fn an_unwritable_session_directory_warns_and_the_run_still_works() {
    let env = setup(json!([{"text": "fine"}])).await;
    // A file where the sessions folder should be: nothing can be created under it.
    std::fs::write(env.home.join("sessions"), "not a folder").expect("block");
    let mut session = env.start("default", SessionChoice::New, Interaction::Headless).await;
    let AgentEvent::SessionStarted { session_file, .. } = next(&mut session).await else { panic!("first") };
    assert_eq!(session_file, None);
    let AgentEvent::Warning { message } = next(&mut session).await else { panic!("no warning") };
    assert!(message.contains("nothing of this session is saved"), "{message}");
    say(&session, "hi");
    let events = until(&mut session, is_finished).await;
    let Some(AgentEvent::Finished { cause, final_text, .. }) = events.last() else { panic!("finished") };
    assert_eq!((cause, final_text.as_str()), (&StopCause::Completed, "fine"));
}

#[tokio::test]
async fn a_hook_input_carries_the_permission_mode_in_force_after_a_mode_change() {
    let env = setup(json!([
        {"tool_calls": [call("c1", "shell", json!({"command": "true"}))]},
        {"text": "one"},
        {"tool_calls": [call("c2", "shell", json!({"command": "true"}))]},
        {"text": "two"}
    ]))
    .await;
    let hooks = json!({"hooks": {"PreToolUse": [{"matcher": "Bash",
        "hooks": [{"type": "command", "command": "cat >> ../modes.jsonl; echo >> ../modes.jsonl"}]}]}});
    std::fs::create_dir_all(env.workspace.join(".claude")).expect("dir");
    std::fs::write(env.workspace.join(".claude/settings.json"), hooks.to_string()).expect("settings");
    let mut session = env.start("default", SessionChoice::New, Interaction::Headless).await;
    say(&session, "one");
    until(&mut session, is_finished).await;
    session.ops.send(AgentOp::SetMode { mode: PermissionMode::AcceptEdits }).expect("op");
    assert_eq!(next(&mut session).await, AgentEvent::ModeChanged { mode: PermissionMode::AcceptEdits });
    say(&session, "two");
    until(&mut session, is_finished).await;
    let inputs = read(&env.workspace.join("../modes.jsonl"));
    let modes: Vec<String> = inputs
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str::<Value>(line).expect("hook input")["permission_mode"].to_string())
        .collect();
    assert_eq!(modes, ["\"default\"", "\"acceptEdits\""], "{inputs}");
}

#[tokio::test]
async fn a_permission_request_carries_the_tools_preview_and_the_call_its_summary() {
    let env = setup(json!([
        {"tool_calls": [call("r1", "read_file", json!({"path": "src/lib.rs"}))]},
        {"tool_calls": [call("e1", "edit_file", json!({"path": "src/lib.rs", "old_string": "a + b", "new_string": "b + a"}))]},
        {"text": "after cancel"}
    ]))
    .await;
    std::fs::create_dir_all(env.workspace.join("src")).expect("src");
    std::fs::write(env.workspace.join("src/lib.rs"), "fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n")
        .expect("file");
    let mut session = env.start("default", SessionChoice::New, Interaction::Interactive).await;
    say(&session, "swap them");
    let events = until(&mut session, |event| matches!(event, AgentEvent::PermissionRequest { .. })).await;
    let started = events.iter().rev().find_map(|event| {
        if let AgentEvent::ToolCallStarted { summary, .. } = event { Some(summary.as_str()) } else { None }
    });
    assert_eq!(started, Some("src/lib.rs"));
    let Some(AgentEvent::PermissionRequest { preview, .. }) = events.last() else { panic!("no request") };
    let expected = "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,3 +1,3 @@\n fn add(a: i32, b: i32) -> i32 {\n-    a + b\n+    b + a\n }\n";
    assert_eq!(
        preview,
        &Some(lathe_protocol::ToolPreview::Diff {
            path: "src/lib.rs".into(),
            unified: expected.into(),
            change: lathe_protocol::FileChange::Edit,
        })
    );
    session.ops.send(AgentOp::Cancel).expect("cancel");
    until(&mut session, is_finished).await;
}
