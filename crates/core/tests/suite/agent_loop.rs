//! The agent loop against `lathe-mock` scripted mode over real HTTP, asserting on the requests the
//! mock received and on the ledger.

use std::path::Path;
use std::time::{Duration, Instant};

use lathe_core::session::{self, SessionWriter};
use lathe_core::{Agent, AgentSettings};
use lathe_mock::{LoggedRequest, MockServer, Mode, Script};
use lathe_policy::PermissionMode;
use lathe_protocol::{
    AgentEvent, LedgerItem, StopCause, SystemBlock, ThinkingFormat, ToolResult, ToolStatus, UserMessage,
};
use lathe_provider::{Protocol, ProviderConfig, RetryConfig};
use lathe_tools::{ToolContext, ToolRegistry};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

struct Run {
    cause: StopCause,
    requests: Vec<LoggedRequest>,
    ledger: Vec<LedgerItem>,
    events: Vec<AgentEvent>,
}

fn settings(mode: PermissionMode, max_turns: u32) -> AgentSettings {
    AgentSettings {
        model: "mock-model".into(),
        max_turns,
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

async fn agent_for(
    server: &MockServer,
    workspace: &Path,
    settings: AgentSettings,
    session: Option<SessionWriter>,
) -> Agent {
    let config = ProviderConfig {
        protocol: Protocol::Anthropic,
        base_url: Some(server.url()),
        model: "mock-model".into(),
        retry: RetryConfig { max_retries: 0, ..RetryConfig::default() },
        ..ProviderConfig::default()
    };
    let provider = lathe_provider::build_provider(&config).expect("provider");
    let mut ctx = ToolContext::new(workspace.to_path_buf());
    ctx.spill_dir = workspace.join(".spill");
    let system = vec![SystemBlock { text: "You are a test.".into(), cache_breakpoint: true }];
    Agent::new(provider, ToolRegistry::builtin(), ctx, system, Vec::new(), session, settings)
}

async fn run_script(turns: Value, workspace: &Path, settings: AgentSettings) -> Run {
    let server = MockServer::start(Mode::Scripted(
        Script::from_json(&json!({ "turns": turns }).to_string()).expect("script"),
    ))
    .await
    .expect("mock");
    let mut agent = agent_for(&server, workspace, settings, None).await;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let cause = agent.run(UserMessage::text("do the task"), &tx, &CancellationToken::new()).await;
    drop(tx);
    let mut events = Vec::new();
    while let Some(event) = rx.recv().await {
        events.push(event);
    }
    Run { cause, requests: server.requests(), ledger: agent.ledger().to_vec(), events }
}

fn results(ledger: &[LedgerItem]) -> Vec<&ToolResult> {
    ledger
        .iter()
        .filter_map(|item| match item {
            LedgerItem::ToolResult(result) => Some(result),
            _ => None,
        })
        .collect()
}

fn assert_paired(ledger: &[LedgerItem]) {
    let unpaired = LedgerItem::unpaired_calls(ledger);
    assert!(unpaired.is_empty(), "calls without results: {unpaired:?}");
}

/// The `tool_result` blocks of an Anthropic request body.
fn tool_results_sent(request: &LoggedRequest) -> Vec<Value> {
    request.body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|message| message["content"].as_array().cloned().unwrap_or_default())
        .filter(|block| block["type"] == "tool_result")
        .collect()
}

fn call(id: &str, name: &str, arguments: Value) -> Value {
    json!({"id": id, "name": name, "arguments": arguments})
}

#[tokio::test]
async fn a_direct_answer_makes_one_request() {
    let dir = tempfile::tempdir().expect("tmp");
    let run =
        run_script(json!([{"text": "Hello!"}]), dir.path(), settings(PermissionMode::Default, 50)).await;
    assert_eq!(run.cause, StopCause::Completed);
    assert_eq!(run.requests.len(), 1);
    let finished = run.events.iter().find_map(|e| match e {
        AgentEvent::Finished { final_text, .. } => Some(final_text.clone()),
        _ => None,
    });
    assert_eq!(finished.as_deref(), Some("Hello!"));
}

#[tokio::test]
async fn a_read_then_answer_makes_two_requests_and_binds_the_result_to_the_call_id() {
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::write(dir.path().join("notes.txt"), "alpha\nbeta\n").expect("write");
    let run = run_script(
        json!([
            {"tool_calls": [call("toolu_read1", "read_file", json!({"path": "notes.txt"}))]},
            {"text": "The first line is alpha."}
        ]),
        dir.path(),
        settings(PermissionMode::Default, 50),
    )
    .await;
    assert_eq!(run.cause, StopCause::Completed);
    assert_eq!(run.requests.len(), 2);
    let sent = tool_results_sent(&run.requests[1]);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["tool_use_id"], "toolu_read1");
    assert!(sent[0].to_string().contains("alpha"), "{}", sent[0]);
    assert_paired(&run.ledger);
}

#[tokio::test]
async fn invalid_arguments_and_unknown_tools_get_error_results_and_nothing_runs() {
    let dir = tempfile::tempdir().expect("tmp");
    let run = run_script(
        json!([
            {"tool_calls": [
                call("c1", "write_file", json!({"path": "created.txt"})),
                call("c2", "frobnicate", json!({"x": 1})),
                call("c3", "shell", json!({"command": 42}))
            ]},
            {"text": "ok"}
        ]),
        dir.path(),
        settings(PermissionMode::Bypass, 50),
    )
    .await;
    assert_eq!(run.cause, StopCause::Completed);
    assert!(!dir.path().join("created.txt").exists());
    let results = results(&run.ledger);
    assert_eq!(results.len(), 3);
    assert!(results.iter().all(|r| r.is_error && r.status == ToolStatus::Failed), "{results:?}");
    assert!(results[0].text_content().contains("content"), "{}", results[0].text_content());
    assert!(results[1].text_content().contains("unknown tool"), "{}", results[1].text_content());
    let sent = tool_results_sent(&run.requests[1]);
    assert!(sent.iter().all(|r| r["is_error"] == true), "{sent:?}");
}

#[tokio::test]
async fn arguments_that_are_not_an_object_are_reported_with_what_arrived() {
    let dir = tempfile::tempdir().expect("tmp");
    let run = run_script(
        json!([{"tool_calls": [call("c1", "shell", json!("rm -rf /tmp/x"))]}, {"text": "ok"}]),
        dir.path(),
        settings(PermissionMode::Bypass, 50),
    )
    .await;
    let result = results(&run.ledger)[0];
    assert_eq!(result.status, ToolStatus::Failed);
    let text = result.text_content();
    assert!(text.contains("rm -rf /tmp/x") && text.contains("JSON object"), "{text}");
}

#[tokio::test]
async fn three_identical_failing_calls_stop_with_no_progress() {
    let dir = tempfile::tempdir().expect("tmp");
    let failing = |id: &str| json!({"tool_calls": [call(id, "read_file", json!({"path": "missing.txt"}))]});
    let run = run_script(
        json!([failing("c1"), failing("c2"), failing("c3"), failing("c4"), {"text": "never"}]),
        dir.path(),
        settings(PermissionMode::Default, 50),
    )
    .await;
    assert!(
        matches!(&run.cause, StopCause::NoProgress { detail } if detail.contains("read_file")),
        "{:?}",
        run.cause
    );
    assert_eq!(run.requests.len(), 3);
    assert_paired(&run.ledger);
}

#[tokio::test]
async fn max_turns_stops_after_that_many_requests_with_a_valid_ledger() {
    let dir = tempfile::tempdir().expect("tmp");
    let turn = |id: &str| json!({"tool_calls": [call(id, "list_dir", json!({"path": "."}))]});
    let run = run_script(
        json!([turn("c1"), turn("c2"), turn("c3"), turn("c4"), turn("c5")]),
        dir.path(),
        settings(PermissionMode::Default, 3),
    )
    .await;
    assert_eq!(run.cause, StopCause::MaxTurns { max_turns: 3 });
    assert_eq!(run.requests.len(), 3);
    assert_paired(&run.ledger);
}

#[tokio::test]
async fn headless_default_mode_denies_edits_and_says_so() {
    let dir = tempfile::tempdir().expect("tmp");
    let run = run_script(
        json!([
            {"tool_calls": [call("c1", "write_file", json!({"path": "x.txt", "content": "hi"}))]},
            {"text": "could not write"}
        ]),
        dir.path(),
        settings(PermissionMode::Default, 50),
    )
    .await;
    assert!(!dir.path().join("x.txt").exists());
    let result = results(&run.ledger)[0];
    assert_eq!(result.status, ToolStatus::Denied);
    assert!(result.text_content().contains("permission"), "{}", result.text_content());
    let receipt = result.receipt.as_ref().expect("receipt");
    assert!(receipt.decision.starts_with("deny"), "{}", receipt.decision);
}

#[tokio::test]
async fn accept_edits_covers_only_the_workspace() {
    // Not under the temp dir, which file tools may write too.
    let dir = lathe_mock::fixture::outside_tempdir(env!("CARGO_TARGET_TMPDIR"));
    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(&workspace).expect("ws");
    std::os::unix::fs::symlink(dir.path(), workspace.join("out")).expect("symlink");
    let outside = dir.path().join("outside.txt");
    assert!(!lathe_mock::fixture::inside_a_temp_dir(&outside), "{} is inside a temp dir", outside.display());
    let run = run_script(
        json!([
            {"tool_calls": [
                call("c1", "write_file", json!({"path": "inside.txt", "content": "ok"})),
                call("c2", "write_file", json!({"path": outside.display().to_string(), "content": "no"})),
                call("c3", "write_file", json!({"path": "../escape.txt", "content": "no"})),
                call("c4", "write_file", json!({"path": "out/via-link.txt", "content": "no"}))
            ]},
            {"text": "done"}
        ]),
        &workspace,
        settings(PermissionMode::AcceptEdits, 50),
    )
    .await;
    assert!(workspace.join("inside.txt").exists());
    assert!(!outside.exists());
    assert!(!dir.path().join("escape.txt").exists());
    assert!(!dir.path().join("via-link.txt").exists());
    let statuses: Vec<ToolStatus> = results(&run.ledger).iter().map(|r| r.status).collect();
    assert_eq!(
        statuses,
        vec![ToolStatus::Completed, ToolStatus::Denied, ToolStatus::Denied, ToolStatus::Denied]
    );
}

#[tokio::test]
async fn a_tool_call_cut_off_by_max_tokens_is_not_run_and_the_model_is_told() {
    let dir = tempfile::tempdir().expect("tmp");
    let run = run_script(
        json!([
            {"tool_calls": [{"id": "c1", "name": "write_file", "raw_arguments": "{\"path\": \"big.txt\", \"content\": \"abc",
                             "complete": false}],
             "stop": "max_tokens"},
            {"text": "I will write it in parts."}
        ]),
        dir.path(),
        settings(PermissionMode::Bypass, 50),
    )
    .await;
    assert_eq!(run.cause, StopCause::Completed);
    assert!(!dir.path().join("big.txt").exists());
    let sent = tool_results_sent(&run.requests[1]);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["is_error"], true);
    assert!(sent[0].to_string().contains("cut off by the output token limit"), "{}", sent[0]);
}

#[tokio::test]
async fn a_text_answer_cut_by_max_tokens_is_continued() {
    let dir = tempfile::tempdir().expect("tmp");
    let run = run_script(
        json!([{"text": "Part one", "stop": "max_tokens"}, {"text": " and part two."}]),
        dir.path(),
        settings(PermissionMode::Default, 50),
    )
    .await;
    assert_eq!(run.cause, StopCause::Completed);
    assert_eq!(run.requests.len(), 2);
    let last_message =
        run.requests[1].body["messages"].as_array().and_then(|m| m.last().cloned()).expect("message");
    assert_eq!(last_message["role"], "user");
    assert!(last_message.to_string().contains("cut off"), "{last_message}");
    assert_eq!(final_text(&run.events), "Part one and part two.");
}

fn final_text(events: &[AgentEvent]) -> String {
    events
        .iter()
        .find_map(|e| match e {
            AgentEvent::Finished { final_text, .. } => Some(final_text.clone()),
            _ => None,
        })
        .expect("finished event")
}

#[tokio::test]
async fn repeated_call_ids_from_the_model_are_made_unique() {
    let dir = tempfile::tempdir().expect("tmp");
    let run = run_script(
        json!([
            {"tool_calls": [call("same", "list_dir", json!({"path": "."})), call("same", "glob", json!({"pattern": "*"}))]},
            {"tool_calls": [call("same", "list_dir", json!({"path": "."}))]},
            {"text": "done"}
        ]),
        dir.path(),
        settings(PermissionMode::Default, 50),
    )
    .await;
    assert_eq!(run.cause, StopCause::Completed);
    assert_paired(&run.ledger);
    let ids: Vec<String> = results(&run.ledger).iter().map(|r| r.call_id.clone()).collect();
    assert_eq!(ids.len(), 3);
    let unique: std::collections::HashSet<&String> = ids.iter().collect();
    assert_eq!(unique.len(), 3, "{ids:?}");
    let sent: Vec<Value> =
        tool_results_sent(&run.requests[2]).iter().map(|r| r["tool_use_id"].clone()).collect();
    assert_eq!(sent.len(), 3);
}

#[tokio::test]
async fn cost_counts_cached_input_once_for_openai_style_usage() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut settings = settings(PermissionMode::Default, 50);
    settings.model_info = lathe_provider::catalog::lookup("gpt-4.1");
    settings.model_info.input_includes_cache_reads = true;
    let (input, cached) = (settings.model_info.price.input, settings.model_info.price.cache_read);
    let run = run_script(
        json!([{"text": "hi", "usage": {"input_tokens": 100000, "output_tokens": 0, "cache_read_input_tokens": 90000}}]),
        dir.path(),
        settings,
    )
    .await;
    let cost = run
        .events
        .iter()
        .find_map(|e| match e {
            AgentEvent::Finished { stats, .. } => Some(stats.cost_usd),
            _ => None,
        })
        .expect("finished");
    let expected = (10_000.0 * input + 90_000.0 * cached) / 1_000_000.0;
    assert!((cost - expected).abs() < 1e-9, "cost {cost} expected {expected}");
}

#[tokio::test]
async fn a_response_that_fails_mid_stream_is_not_stored() {
    let dir = tempfile::tempdir().expect("tmp");
    let run = run_script(
        json!([{"thinking": {"text": "let me think about this", "signature": "SIG", "chunks": 4}, "text": "partial answer",
                "drop_after_events": 6}]),
        dir.path(),
        settings(PermissionMode::Default, 50),
    )
    .await;
    assert!(matches!(run.cause, StopCause::Error { .. }), "{:?}", run.cause);
    assert!(!run.ledger.iter().any(|item| matches!(item, LedgerItem::Assistant(_))), "{:?}", run.ledger);
    assert!(matches!(run.ledger.last(), Some(LedgerItem::Meta(lathe_protocol::Meta::RequestFailed { .. }))));
}

#[tokio::test]
async fn cancel_during_a_shell_call_kills_the_group_and_pairs_every_call() {
    let dir = tempfile::tempdir().expect("tmp");
    let pid_file = dir.path().join("grandchild.pid");
    let script = json!([
        {"tool_calls": [
            call("c1", "shell", json!({"command": format!("sleep 30 & echo $! > {}; wait", pid_file.display())})),
            call("c2", "write_file", json!({"path": "after.txt", "content": "never"}))
        ]},
        {"text": "never reached"}
    ]);
    let server = MockServer::start(Mode::Scripted(
        Script::from_json(&json!({ "turns": script }).to_string()).expect("script"),
    ))
    .await
    .expect("mock");
    let sessions = dir.path().join("sessions");
    let writer = SessionWriter::open(&sessions, "s1").expect("session");
    let session_path = writer.path().to_path_buf();
    let mut agent = agent_for(&server, dir.path(), settings(PermissionMode::Bypass, 50), Some(writer)).await;
    let (tx, _rx) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let watched = pid_file.clone();
    let cancelled_at = tokio::spawn(async move {
        // The state, not a time: the grandchild has started and its pid is written.
        while !std::fs::read_to_string(&watched).is_ok_and(|pid| pid.trim().parse::<i32>().is_ok()) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        trigger.cancel();
        Instant::now()
    });
    let cause = agent.run(UserMessage::text("go"), &tx, &cancel).await;
    let returned = Instant::now();
    let cancelled_at = cancelled_at.await.expect("join");
    assert_eq!(cause, StopCause::Cancelled);
    assert!(
        returned.duration_since(cancelled_at) < Duration::from_secs(1),
        "took {:?}",
        returned - cancelled_at
    );

    let pid: i32 = std::fs::read_to_string(&pid_file).expect("pid").trim().parse().expect("pid number");
    let gone = || !Path::new(&format!("/proc/{pid}")).exists() || is_zombie(pid);
    for _ in 0..250 {
        if gone() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(gone(), "grandchild {pid} still running");

    assert!(!dir.path().join("after.txt").exists());
    let ledger = agent.ledger();
    assert_paired(ledger);
    let statuses: Vec<ToolStatus> = results(ledger).iter().map(|r| r.status).collect();
    assert_eq!(statuses, vec![ToolStatus::Interrupted, ToolStatus::Interrupted]);
    assert_eq!(server.requests().len(), 1);
    // The session file holds the same valid ledger.
    let loaded = session::load(&session_path).expect("load");
    assert!(loaded.warnings.is_empty());
    assert_paired(&loaded.items);
}

fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.split_whitespace().nth(2) == Some("Z"))
}

#[tokio::test]
async fn two_read_only_calls_of_one_response_run_concurrently() {
    let dir = tempfile::tempdir().expect("tmp");
    for name in ["a.fifo", "b.fifo"] {
        let status =
            std::process::Command::new("mkfifo").arg(dir.path().join(name)).status().expect("mkfifo");
        assert!(status.success());
    }
    // The writer serves b first, then a. Reading a then b one after the other would deadlock: the
    // read of a waits for a writer that is itself waiting for a reader of b.
    let (a, b) = (dir.path().join("a.fifo"), dir.path().join("b.fifo"));
    let writer = std::thread::spawn(move || {
        std::fs::write(&b, "from b\n").expect("write b");
        std::fs::write(&a, "from a\n").expect("write a");
    });
    let run = tokio::time::timeout(
        Duration::from_secs(20),
        run_script(
            json!([
                {"tool_calls": [call("r1", "read_file", json!({"path": "a.fifo"})), call("r2", "read_file", json!({"path": "b.fifo"}))]},
                {"text": "read both"}
            ]),
            dir.path(),
            settings(PermissionMode::Default, 50),
        ),
    )
    .await
    .expect("reads of one response did not overlap (deadlock)");
    writer.join().expect("writer");
    assert_eq!(run.cause, StopCause::Completed);
    let results = results(&run.ledger);
    assert!(results[0].text_content().contains("from a"), "{}", results[0].text_content());
    assert!(results[1].text_content().contains("from b"), "{}", results[1].text_content());
}

#[tokio::test]
async fn mutating_calls_never_overlap_and_run_in_order() {
    let dir = tempfile::tempdir().expect("tmp");
    let step = |n: u32| format!("echo start{n} >> log.txt; sleep 0.3; echo end{n} >> log.txt");
    let run = run_script(
        json!([
            {"tool_calls": [
                call("s1", "shell", json!({"command": step(1)})),
                call("s2", "shell", json!({"command": step(2)})),
                call("w3", "write_file", json!({"path": "w.txt", "content": "x"})),
                call("s4", "shell", json!({"command": step(4)}))
            ]},
            {"text": "done"}
        ]),
        dir.path(),
        settings(PermissionMode::Bypass, 50),
    )
    .await;
    assert_eq!(run.cause, StopCause::Completed);
    let log = std::fs::read_to_string(dir.path().join("log.txt")).expect("log");
    assert_eq!(log, "start1\nend1\nstart2\nend2\nstart4\nend4\n");
    let ids: Vec<&str> = results(&run.ledger).iter().map(|r| r.call_id.as_str()).collect();
    assert_eq!(ids, vec!["s1", "s2", "w3", "s4"]);
}

#[tokio::test]
async fn every_item_is_persisted_to_the_session_file() {
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::write(dir.path().join("a.txt"), "x").expect("write");
    let server = MockServer::start(Mode::Scripted(
        Script::from_json(
            &json!({"turns": [{"tool_calls": [call("c1", "read_file", json!({"path": "a.txt"}))]}, {"text": "done"}]})
                .to_string(),
        )
        .expect("script"),
    ))
    .await
    .expect("mock");
    let writer = SessionWriter::open(&dir.path().join("sessions"), "s2").expect("session");
    let path = writer.path().to_path_buf();
    let mut agent = agent_for(&server, dir.path(), settings(PermissionMode::Default, 50), Some(writer)).await;
    let (tx, _rx) = mpsc::unbounded_channel();
    agent.run(UserMessage::text("go"), &tx, &CancellationToken::new()).await;
    let loaded = session::load(&path).expect("load");
    assert_eq!(loaded.items, agent.ledger().to_vec());
    assert_eq!(loaded.items.len(), 4);
}
