//! Interactive approvals: an ask goes to the front end's approver; "always" stores a prefix rule in
//! `.lathe/settings.local.json` that later sessions read; leaving plan mode is an explicit step.

use std::path::Path;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use lathe_core::{Agent, AgentSettings, Approver};
use lathe_mock::{MockServer, Mode, Script};
use lathe_policy::settings::{load, settings_files};
use lathe_policy::{PermissionMode, Policy, PolicyConfig, SandboxMode};
use lathe_protocol::{
    AgentEvent, LedgerItem, PermissionAnswer, SystemBlock, ThinkingFormat, ToolCall, ToolResult, ToolStatus,
    UserMessage,
};
use lathe_provider::{Protocol, ProviderConfig, RetryConfig};
use lathe_tools::{ToolContext, ToolRegistry};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Answers asks from a queue and records what it was asked.
#[derive(Default)]
struct Scripted {
    answers: Mutex<Vec<PermissionAnswer>>,
    asked: Mutex<Vec<(String, Option<String>)>>,
}

impl Approver for Scripted {
    fn ask<'a>(
        &'a self,
        call: &'a ToolCall,
        _reason: &'a str,
        suggestion: Option<&'a str>,
        _preview: Option<&'a lathe_protocol::ToolPreview>,
    ) -> BoxFuture<'a, PermissionAnswer> {
        let command = call.arguments["command"].as_str().unwrap_or("").to_string();
        self.asked.lock().expect("lock").push((command, suggestion.map(str::to_string)));
        let answer =
            self.answers.lock().expect("lock").pop().unwrap_or(PermissionAnswer::Deny { feedback: None });
        Box::pin(async move { answer })
    }
}

fn settings(mode: PermissionMode) -> AgentSettings {
    AgentSettings {
        model: "mock-model".into(),
        max_turns: 10,
        max_calls_per_response: lathe_core::guards::DEFAULT_MAX_CALLS_PER_RESPONSE,
        max_cost_usd: None,
        max_output_tokens: 1024,
        permission_mode: mode,
        temperature: None,
        prompt_caching: false,
        model_info: lathe_provider::catalog::lookup("claude-sonnet-4-5"),
        thinking_format: ThinkingFormat::Anthropic,
        context: lathe_core::ContextSettings::default(),
    }
}

/// The session's policy as the CLI builds it: the six settings files of `ws` (home = `home`).
fn policy(ws: &Path, home: &Path, mode: PermissionMode) -> Arc<Policy> {
    let files = settings_files(Some(&home.join(".claude")), Some(home), &home.join(".lathe"), ws);
    let loaded = load(&files, Some(home));
    assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
    Arc::new(Policy::new(PolicyConfig {
        protected_dirs: Vec::new(),
        mode,
        workspace: ws.to_path_buf(),
        home: Some(home.to_path_buf()),
        settings: loaded,
        protected: files.into_iter().map(|f| f.path).collect(),
        plan_file: Some(home.join(".lathe/plans/s.md")),
        sandbox: SandboxMode::Off,
        network: Default::default(),
    }))
}

async fn run(
    ws: &Path,
    home: &Path,
    calls: Vec<Value>,
    approver: Arc<Scripted>,
) -> (Vec<ToolResult>, Vec<AgentEvent>) {
    let turns = json!([{ "tool_calls": calls }, { "text": "done" }]);
    let server = MockServer::start(Mode::Scripted(
        Script::from_json(&json!({ "turns": turns }).to_string()).expect("script"),
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
    let mut ctx = ToolContext::new(ws.to_path_buf());
    ctx.spill_dir = home.join("spill");
    let system = vec![SystemBlock { text: "You are a test.".into(), cache_breakpoint: true }];
    let mut agent = Agent::new(
        provider,
        ToolRegistry::builtin(),
        ctx,
        system,
        Vec::new(),
        None,
        settings(PermissionMode::Default),
    )
    .with_policy(policy(ws, home, PermissionMode::Default))
    .with_approver(approver);
    let (tx, mut rx) = mpsc::unbounded_channel();
    agent.run(UserMessage::text("go"), &tx, &CancellationToken::new()).await;
    drop(tx);
    let mut events = Vec::new();
    while let Some(event) = rx.recv().await {
        events.push(event);
    }
    let results = agent
        .ledger()
        .iter()
        .filter_map(|item| match item {
            LedgerItem::ToolResult(result) => Some(result.clone()),
            _ => None,
        })
        .collect();
    (results, events)
}

fn shell(id: &str, command: &str) -> Value {
    json!({"id": id, "name": "shell", "arguments": {"command": command}})
}

fn dirs() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let tmp = lathe_mock::fixture::outside_tempdir(env!("CARGO_TARGET_TMPDIR"));
    let base = tmp.path().canonicalize().expect("canonical");
    let (ws, home) = (base.join("ws"), base.join("home"));
    std::fs::create_dir_all(&ws).expect("ws");
    std::fs::create_dir_all(&home).expect("home");
    (tmp, ws, home)
}

#[tokio::test]
async fn always_stores_a_prefix_rule_that_later_sessions_honour() {
    let (_tmp, ws, home) = dirs();
    let first = Arc::new(Scripted {
        answers: Mutex::new(vec![PermissionAnswer::AllowAlways]),
        ..Scripted::default()
    });
    let (results, _) = run(&ws, &home, vec![shell("c1", "cargo test --lib")], first.clone()).await;
    assert_eq!(results[0].status, ToolStatus::Completed, "{}", results[0].text_content());
    assert_eq!(
        *first.asked.lock().expect("lock"),
        [("cargo test --lib".to_string(), Some("Bash(cargo test *)".to_string()))]
    );
    let stored: Value = serde_json::from_str(
        &std::fs::read_to_string(ws.join(".lathe/settings.local.json")).expect("stored"),
    )
    .expect("json");
    assert_eq!(stored, json!({"permissions": {"allow": ["Bash(cargo test *)"]}}));

    // A later session: the stored prefix covers other cargo test runs; a chained rm still asks.
    let later = Arc::new(Scripted::default());
    let (results, _) = run(
        &ws,
        &home,
        vec![shell("c1", "cargo test -p x"), shell("c2", "cargo test; rm -rf /")],
        later.clone(),
    )
    .await;
    assert_eq!(results[0].status, ToolStatus::Completed, "{}", results[0].text_content());
    assert_eq!(results[1].status, ToolStatus::Denied);
    assert_eq!(*later.asked.lock().expect("lock"), [("cargo test; rm -rf /".to_string(), None)]);
    assert!(
        results[1].receipt.as_ref().is_some_and(|r| r.decision.contains("the user")),
        "{:?}",
        results[1].receipt
    );
}

#[tokio::test]
async fn always_never_stores_an_over_broad_rule() {
    let (_tmp, ws, home) = dirs();
    let approver = Arc::new(Scripted {
        answers: Mutex::new(vec![PermissionAnswer::AllowAlways]),
        ..Scripted::default()
    });
    let (results, events) =
        run(&ws, &home, vec![shell("c1", "python3 -c 'print(41 + 1)'")], approver.clone()).await;
    assert_eq!(results[0].status, ToolStatus::Completed);
    assert!(results[0].text_content().contains("42"));
    assert_eq!(approver.asked.lock().expect("lock")[0].1, None);
    assert!(!ws.join(".lathe/settings.local.json").exists());
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::Warning { message } if message.contains("approved once")))
    );
}

#[test]
fn always_leaves_a_local_settings_file_it_cannot_parse_untouched() {
    let (_tmp, ws, _home) = dirs();
    std::fs::create_dir_all(ws.join(".lathe")).expect("dir");
    for broken in ["[1, 2", "{\"permissions\": 3}", "\"text\"", "{\"permissions\": {\"allow\": {}}}"] {
        std::fs::write(ws.join(".lathe/settings.local.json"), broken).expect("write");
        let error =
            lathe_policy::settings::remember(&ws, &["Bash(cargo test *)".to_string()]).expect_err(broken);
        assert!(error.to_string().contains("settings.local.json"), "{error}");
        assert_eq!(std::fs::read_to_string(ws.join(".lathe/settings.local.json")).expect("read"), broken);
    }
}

#[tokio::test]
async fn leaving_plan_mode_is_an_explicit_step() {
    let (_tmp, ws, home) = dirs();
    let policy = policy(&ws, &home, PermissionMode::Plan);
    let write = lathe_policy::Access::Write(vec![ws.join("src/main.rs")]);
    assert_eq!(policy.decide("write_file", &write).verdict, lathe_policy::Verdict::Deny);
    let plan = lathe_policy::Access::Write(vec![home.join(".lathe/plans/s.md")]);
    assert_eq!(policy.decide("write_file", &plan).verdict, lathe_policy::Verdict::Allow);
    policy.set_mode(PermissionMode::AcceptEdits);
    assert_eq!(policy.decide("write_file", &write).verdict, lathe_policy::Verdict::Allow);
}
