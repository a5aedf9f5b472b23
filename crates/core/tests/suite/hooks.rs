//! Hooks in the loop with an interactive approver: a permission prompt fires Notification hooks, and
//! a PreToolUse `ask` reaches the approver even in bypass mode.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use lathe_core::hooks::{HookSession, HookTable, Hooks};
use lathe_core::{Agent, AgentSettings, Approver};
use lathe_mock::{MockServer, Mode, Script};
use lathe_policy::PermissionMode;
use lathe_protocol::{PermissionAnswer, SystemBlock, ThinkingFormat, ToolCall, UserMessage};
use lathe_provider::{Protocol, ProviderConfig, RetryConfig};
use lathe_tools::{ToolContext, ToolRegistry};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Allows every call and records the reasons it was asked with.
#[derive(Default)]
struct Recorder(Mutex<Vec<String>>);

impl Approver for Recorder {
    fn ask<'a>(
        &'a self,
        _call: &'a ToolCall,
        reason: &'a str,
        _suggestion: Option<&'a str>,
        _preview: Option<&'a lathe_protocol::ToolPreview>,
    ) -> BoxFuture<'a, PermissionAnswer> {
        if let Ok(mut asked) = self.0.lock() {
            asked.push(reason.to_string());
        }
        Box::pin(async { PermissionAnswer::AllowOnce })
    }
}

async fn run(mode: PermissionMode, hooks: Value, workspace: &std::path::Path) -> Vec<String> {
    let turns = json!([
        {"tool_calls": [{"id": "c1", "name": "shell", "arguments": {"command": "echo hi > out.txt"}}]},
        {"text": "done"}
    ]);
    let server = MockServer::start(Mode::Scripted(
        Script::from_json(&json!({"turns": turns}).to_string()).expect("script"),
    ))
    .await
    .expect("mock");
    let config = ProviderConfig {
        protocol: Protocol::Anthropic,
        base_url: Some(server.url()),
        model: "mock-model".into(),
        retry: RetryConfig { max_retries: 0, ..RetryConfig::default() },
        ..ProviderConfig::default()
    };
    let provider = lathe_provider::build_provider(&config).expect("provider");
    let settings = AgentSettings {
        model: "mock-model".into(),
        max_turns: 5,
        max_calls_per_response: lathe_core::guards::DEFAULT_MAX_CALLS_PER_RESPONSE,
        max_cost_usd: None,
        max_output_tokens: 1024,
        permission_mode: mode,
        temperature: None,
        prompt_caching: false,
        model_info: lathe_provider::catalog::lookup("claude-sonnet-4-5"),
        thinking_format: ThinkingFormat::Anthropic,
        context: lathe_core::ContextSettings::default(),
    };
    let mut table = HookTable::default();
    let mut warnings = Vec::new();
    table.add_settings(&json!({ "hooks": hooks }), "test", &mut warnings);
    assert!(warnings.is_empty(), "{warnings:?}");
    let hooks = Hooks::new(table, HookSession { cwd: workspace.to_path_buf(), ..HookSession::default() });
    let recorder = Arc::new(Recorder::default());
    let system = vec![SystemBlock { text: "test".into(), cache_breakpoint: false }];
    let mut agent = Agent::new(
        provider,
        ToolRegistry::builtin(),
        ToolContext::new(workspace.to_path_buf()),
        system,
        Vec::new(),
        None,
        settings,
    )
    .with_hooks(hooks)
    .with_approver(recorder.clone());
    let (tx, _rx) = mpsc::unbounded_channel();
    agent.run(UserMessage::text("go"), &tx, &CancellationToken::new()).await;
    recorder.0.lock().map(|asked| asked.clone()).unwrap_or_default()
}

#[tokio::test]
async fn a_permission_prompt_fires_notification_hooks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let hooks = json!({"Notification": [{"hooks": [{"command": "cat > notification.json"}]}]});
    let asked = run(PermissionMode::Default, hooks, dir.path()).await;
    assert_eq!(asked.len(), 1);
    let path = dir.path().join("notification.json");
    for _ in 0..500 {
        if std::fs::read_to_string(&path).is_ok_and(|text| text.ends_with('}')) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let input: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("notification")).expect("json");
    assert_eq!(input["hook_event_name"], "Notification");
    assert_eq!(input["message"], "Lathe needs your permission to use shell");
    assert!(dir.path().join("out.txt").exists());
}

#[tokio::test]
async fn a_pre_tool_use_ask_reaches_the_approver_even_in_bypass_mode() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ask = json!({"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "shell needs a look"}});
    let hooks = json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{"command": format!("echo '{ask}'")}]}]});
    let asked = run(PermissionMode::Bypass, hooks, dir.path()).await;
    assert_eq!(asked, vec!["a PreToolUse hook asks: shell needs a look".to_string()]);
}

#[tokio::test]
async fn pre_compact_hooks_run_before_a_compaction_with_its_trigger_and_focus() {
    use lathe_core::context::SUMMARY_REQUEST_MARKER;
    use lathe_core::host::{Flags, SessionBuilder, SessionChoice, SessionHandle};
    use lathe_protocol::{AgentEvent, AgentOp, Content};

    use super::context::{SUMMARY, TASK, seed_files};

    let tmp = tempfile::tempdir().expect("tmp");
    let (home, workspace) = (tmp.path().join("home"), tmp.path().join("ws"));
    std::fs::create_dir_all(&home).expect("home");
    seed_files(&workspace, 3);
    std::fs::write(home.join("config.toml"), "[retry]\nmax_retries = 0\n").expect("config");
    // The manual hook records its input; the auto one must not run for `/compact`.
    let hooks = json!({"hooks": {"PreCompact": [
        {"matcher": "manual", "hooks": [{"type": "command", "command": "cat > pre-compact.json"}]},
        {"matcher": "auto", "hooks": [{"type": "command", "command": "touch auto-ran"}]}
    ]}});
    std::fs::write(home.join("settings.json"), hooks.to_string()).expect("settings");
    let read = |i: usize| {
        json!({"tool_calls": [{"id": format!("call_{i}"), "name": "read_file",
                               "arguments": {"path": format!("src/f{i:03}.txt")}}]})
    };
    let server = MockServer::start(Mode::Scripted(
        Script::from_json(
            &json!({
                "side_replies": [{"when_last_user_contains": SUMMARY_REQUEST_MARKER, "text": SUMMARY}],
                "turns": [read(0), read(1), read(2), {"text": "read them"}]
            })
            .to_string(),
        )
        .expect("script"),
    ))
    .await
    .expect("mock");
    let flags = Flags {
        dir: Some(workspace.clone()),
        provider: Some("anthropic".into()),
        base_url: Some(server.url()),
        session: SessionChoice::New,
        ..Flags::default()
    };
    let mut session = SessionBuilder::new(flags).home(home.clone()).start().await.expect("session");
    let wait = async |session: &mut SessionHandle, stop: fn(&AgentEvent) -> bool| loop {
        let event = tokio::time::timeout(std::time::Duration::from_secs(20), session.events.recv())
            .await
            .expect("an event within 20 s")
            .expect("open");
        if stop(&event) {
            return;
        }
    };
    session.ops.send(AgentOp::UserInput { content: vec![Content::text(TASK)] }).expect("op");
    wait(&mut session, |event| matches!(event, AgentEvent::Finished { .. })).await;
    assert!(!workspace.join("pre-compact.json").exists(), "no compaction yet");
    session.ops.send(AgentOp::Compact { focus: Some("the checksum lines".into()) }).expect("op");
    wait(&mut session, |event| matches!(event, AgentEvent::Compacted { .. })).await;
    let input: Value = serde_json::from_str(
        &std::fs::read_to_string(workspace.join("pre-compact.json"))
            .expect("the hook ran before the compaction"),
    )
    .expect("json");
    assert_eq!(input["hook_event_name"], "PreCompact");
    assert_eq!(input["trigger"], "manual");
    assert_eq!(input["custom_instructions"], "the checksum lines");
    assert!(!workspace.join("auto-ran").exists(), "the auto matcher does not match a manual compaction");
    session.ops.send(AgentOp::Quit).expect("quit");
}
