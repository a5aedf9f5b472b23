//! Context management against `lathe-mock` playing a model with a small context window: pruning,
//! compaction, recovery from "prompt too long", and the shape of every request sent.

use std::path::Path;

use lathe_core::context::SUMMARY_REQUEST_MARKER;
use lathe_core::{Agent, AgentSettings, ContextSettings};
use lathe_mock::{LoggedRequest, MockServer, Mode, Script};
use lathe_policy::PermissionMode;
use lathe_protocol::{
    AgentEvent, CompactionTrigger, LedgerItem, Meta, StopCause, SystemBlock, ThinkingFormat, UserMessage,
};
use lathe_provider::{Protocol, ProviderConfig, RetryConfig};
use lathe_tools::{ToolContext, ToolRegistry};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The user's task: every request must carry it verbatim.
pub const TASK: &str = "Read every file under src/ one by one and report the checksum line of each.";

/// The summary the mock answers a summary request with.
pub const SUMMARY: &str = "## User's task and constraints\nRead every file under src/.\n## Verified facts\nFiles read so far \
                           have checksum lines.\n## Files changed\nNone.\n## Commands run\nNone.\n## Open problems\nNone.\n\
                           ## Next step\nRead the next file.";

/// Writes `count` distinct files of about 5 KB: `src/f000.txt`, ….
pub fn seed_files(dir: &Path, count: usize) {
    std::fs::create_dir_all(dir.join("src")).expect("src");
    for i in 0..count {
        let mut text = format!("file {i:03}: checksum {:08x}\n", i * 2_654_435_761 % 4_294_967_291);
        let mut line = 0;
        while text.len() < 5_000 {
            text.push_str(&format!(
                "{i:03}.{line:03} the quick brown fox jumps over the lazy dog {}\n",
                i * line
            ));
            line += 1;
        }
        std::fs::write(dir.join(format!("src/f{i:03}.txt")), text).expect("file");
    }
}

/// A model that reads `count` files, one per turn, then answers; the mock enforces `window`.
pub fn reading_script(count: usize, window: u64) -> Value {
    let mut turns: Vec<Value> = (0..count)
        .map(|i| {
            json!({"tool_calls": [{"id": format!("call_{i:03}"), "name": "read_file",
                                   "arguments": {"path": format!("src/f{i:03}.txt")}}],
                   "usage": {"output_tokens": 30}})
        })
        .collect();
    turns.push(json!({"text": "All files read.", "usage": {"output_tokens": 5}}));
    json!({"context_window": window, "check_pairing": true,
           "side_replies": [{"when_last_user_contains": SUMMARY_REQUEST_MARKER, "text": SUMMARY}],
           "turns": turns})
}

pub struct Run {
    pub cause: StopCause,
    pub requests: Vec<LoggedRequest>,
    pub ledger: Vec<LedgerItem>,
    pub events: Vec<AgentEvent>,
}

pub fn settings(window: u32, context: ContextSettings) -> AgentSettings {
    let mut model_info = lathe_provider::catalog::lookup("claude-sonnet-4-5");
    model_info.context_window = window;
    AgentSettings {
        model: "mock-model".into(),
        max_turns: 1_000,
        max_calls_per_response: lathe_core::guards::DEFAULT_MAX_CALLS_PER_RESPONSE,
        max_cost_usd: None,
        max_output_tokens: 8_192,
        permission_mode: PermissionMode::Default,
        temperature: None,
        prompt_caching: true,
        model_info,
        thinking_format: ThinkingFormat::Anthropic,
        context,
    }
}

pub fn agent(server: &MockServer, protocol: Protocol, workspace: &Path, settings: AgentSettings) -> Agent {
    let base_url = match protocol {
        Protocol::Anthropic => server.url(),
        Protocol::OpenAiChat | Protocol::OpenAiResponses => format!("{}/v1", server.url()),
    };
    let config = ProviderConfig {
        protocol,
        base_url: Some(base_url),
        model: "mock-model".into(),
        retry: RetryConfig { max_retries: 0, ..RetryConfig::default() },
        ..ProviderConfig::default()
    };
    let mut settings = settings;
    settings.model_info.input_includes_cache_reads = protocol != Protocol::Anthropic;
    settings.thinking_format = protocol.thinking_format();
    let provider = lathe_provider::build_provider(&config).expect("provider");
    let mut ctx = ToolContext::new(workspace.to_path_buf());
    ctx.spill_dir = workspace.join(".spill");
    let system = vec![SystemBlock { text: "You are a test.".into(), cache_breakpoint: true }];
    Agent::new(provider, ToolRegistry::builtin(), ctx, system, Vec::new(), None, settings)
}

pub async fn run(agent: &mut Agent, server: &MockServer, task: &str) -> Run {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let cause = agent.run(UserMessage::text(task), &tx, &CancellationToken::new()).await;
    drop(tx);
    let mut events = Vec::new();
    while let Some(event) = rx.recv().await {
        events.push(event);
    }
    Run { cause, requests: server.requests(), ledger: agent.ledger().to_vec(), events }
}

async fn scripted(script: Value) -> MockServer {
    MockServer::start(Mode::Scripted(Script::from_json(&script.to_string()).expect("script")))
        .await
        .expect("mock")
}

fn compactions(events: &[AgentEvent]) -> Vec<CompactionTrigger> {
    events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::Compacted { trigger, .. } => Some(*trigger),
            _ => None,
        })
        .collect()
}

/// The system prompt and tool schemas of a request as sent (Anthropic `system`/`tools`, OpenAI
/// `messages[0]` when it is the system message, and `tools`; Responses `instructions`).
fn prefix(request: &LoggedRequest) -> String {
    let body = &request.body;
    let system = if body["system"].is_null() {
        match &body["messages"][0] {
            first if first["role"] == "system" || first["role"] == "developer" => first.to_string(),
            _ => body["instructions"].to_string(),
        }
    } else {
        body["system"].to_string()
    };
    format!("{system}\n{}", body["tools"])
}

/// Every request (summary requests included) sends the same system prompt and tools, byte for
/// byte; Anthropic requests carry at most 4 cache breakpoints.
pub fn assert_cache_friendly(requests: &[LoggedRequest]) {
    let first = prefix(&requests[0]);
    for request in requests {
        assert_eq!(prefix(request), first, "request {} changed the system prompt or the tools", request.seq);
        let breakpoints = request.body.to_string().matches("\"cache_control\"").count();
        assert!(breakpoints <= 4, "request {} has {breakpoints} cache breakpoints", request.seq);
    }
}

/// The checks of the long-session acceptance item on what the mock received.
pub fn assert_every_request_fits_and_carries_the_task(requests: &[LoggedRequest], window: u64) {
    for request in requests {
        assert_eq!(request.status, 200, "request {} was rejected: {}", request.seq, request.body);
        let output = ["max_tokens", "max_completion_tokens", "max_output_tokens"]
            .iter()
            .find_map(|key| request.body[*key].as_u64())
            .unwrap_or(0);
        let input = lathe_mock::input_tokens(&request.body);
        assert!(input + output <= window, "request {} takes {input} + {output} tokens", request.seq);
        assert!(request.body.to_string().contains(TASK), "request {} lost the task", request.seq);
    }
}

#[tokio::test]
async fn a_long_reading_session_stays_inside_a_32k_window_over_each_protocol() {
    for protocol in [Protocol::Anthropic, Protocol::OpenAiChat, Protocol::OpenAiResponses] {
        let dir = tempfile::tempdir().expect("tmp");
        seed_files(dir.path(), 300);
        let server = scripted(reading_script(300, 32_000)).await;
        let mut agent = agent(&server, protocol, dir.path(), settings(32_000, ContextSettings::default()));
        let run = run(&mut agent, &server, TASK).await;
        assert_eq!(run.cause, StopCause::Completed, "{protocol:?}");
        assert_every_request_fits_and_carries_the_task(&run.requests, 32_000);
        assert_cache_friendly(&run.requests);
        assert!(LedgerItem::unpaired_calls(&run.ledger).is_empty());
        let pruned =
            run.ledger.iter().filter(|item| matches!(item, LedgerItem::Meta(Meta::ContextPruned { .. })));
        assert!(pruned.count() >= 1, "{protocol:?}: pruning never happened");
        assert!(!compactions(&run.events).is_empty(), "{protocol:?}: compaction never happened");
        let tool_results = run.ledger.iter().filter(|item| matches!(item, LedgerItem::ToolResult(_))).count();
        assert_eq!(tool_results, 300);
    }
}

#[tokio::test]
async fn without_auto_compaction_the_overflow_ends_the_run_as_context_exhausted() {
    let dir = tempfile::tempdir().expect("tmp");
    seed_files(dir.path(), 40);
    let server = scripted(reading_script(40, 32_000)).await;
    let context = ContextSettings { auto_compact: false, pruning: false };
    let mut agent = agent(&server, Protocol::Anthropic, dir.path(), settings(32_000, context));
    let run = run(&mut agent, &server, TASK).await;
    match &run.cause {
        StopCause::ContextExhausted { detail } => {
            assert!(detail.contains("prompt is too long") || detail.contains("context limit"), "{detail}");
            assert!(detail.contains("start a new session"), "{detail}");
        }
        other => panic!("expected ContextExhausted with the provider's message, got {other:?}"),
    }
    assert_eq!(run.cause.subtype(), "error_context");
    assert!(compactions(&run.events).is_empty());
}

#[tokio::test]
async fn a_prompt_too_long_answer_triggers_a_compaction_and_one_retry() {
    let dir = tempfile::tempdir().expect("tmp");
    seed_files(dir.path(), 3);
    // The model reads three files, then the provider rejects the next request once.
    let too_long = json!({"error": {"status": 400, "message": "prompt is too long: 40000 tokens > 32000 maximum",
                                    "type": "invalid_request_error"}});
    let read = |i: usize| {
        json!({"tool_calls": [{"id": format!("call_{i}"), "name": "read_file",
                               "arguments": {"path": format!("src/f{i:03}.txt")}}]})
    };
    let script = json!({"side_replies": [{"when_last_user_contains": SUMMARY_REQUEST_MARKER, "text": SUMMARY}],
                        "turns": [read(0), read(1), read(2), too_long, {"text": "done"}]});
    let server = scripted(script).await;
    let mut agent =
        agent(&server, Protocol::Anthropic, dir.path(), settings(32_000, ContextSettings::default()));
    let run = run(&mut agent, &server, TASK).await;
    assert_eq!(run.cause, StopCause::Completed);
    assert_eq!(compactions(&run.events), vec![CompactionTrigger::Overflow]);
    // read×3, rejected, summary, retry.
    assert_eq!(run.requests.len(), 6);
    let retry = &run.requests[5].body;
    assert!(retry.to_string().contains("Read the next file."), "the retry starts from the summary");
    assert_eq!(retry["messages"][0]["role"], "user");
    assert!(LedgerItem::unpaired_calls(&run.ledger).is_empty());
}

#[tokio::test]
async fn a_provider_that_always_says_too_long_stops_after_three_failed_compactions() {
    let dir = tempfile::tempdir().expect("tmp");
    let too_long = json!({"error": {"status": 400, "message": "prompt is too long: 900000 tokens > 32000 maximum",
                                    "type": "invalid_request_error"}});
    let server = scripted(json!({"turns": vec![too_long; 10]})).await;
    let mut agent =
        agent(&server, Protocol::Anthropic, dir.path(), settings(32_000, ContextSettings::default()));
    let run = run(&mut agent, &server, TASK).await;
    match &run.cause {
        StopCause::ContextExhausted { detail } => {
            assert!(detail.contains("compaction failed 3 times"), "{detail}");
            assert!(detail.contains("prompt is too long"), "{detail}");
        }
        other => panic!("expected ContextExhausted, got {other:?}"),
    }
    assert_eq!(run.cause.subtype(), "error_context");
    // The request, then three summary requests; never a loop.
    assert_eq!(run.requests.len(), 4);
    let warnings = run.events.iter().filter(|event| matches!(event, AgentEvent::Warning { .. })).count();
    assert_eq!(warnings, 3);
    assert!(LedgerItem::unpaired_calls(&run.ledger).is_empty());
}

#[tokio::test]
async fn a_summary_request_that_would_not_fit_leaves_out_the_oldest_rounds_and_succeeds() {
    let dir = tempfile::tempdir().expect("tmp");
    seed_files(dir.path(), 12);
    // A 64 KB file arrives when the conversation is already at ~18k tokens: the whole history does
    // not fit one summary request in a 32k window.
    let big: String =
        (0..1_000).map(|i| format!("{i:05} a long line of a generated file, quite wide\n")).collect();
    std::fs::write(dir.path().join("src/big.txt"), &big).expect("big");
    let mut script = reading_script(12, 32_000);
    let turns = script["turns"].as_array_mut().expect("turns");
    turns.insert(12, json!({"tool_calls": [{"id": "call_big", "name": "read_file", "arguments": {"path": "src/big.txt"}}]}));
    let server = scripted(script).await;
    let context = ContextSettings { auto_compact: true, pruning: false };
    let mut agent = agent(&server, Protocol::Anthropic, dir.path(), settings(32_000, context));
    let run = run(&mut agent, &server, TASK).await;
    assert_eq!(run.cause, StopCause::Completed);
    assert_every_request_fits_and_carries_the_task(&run.requests, 32_000);
    let omitted: Vec<u32> = run
        .events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::Compacted { omitted_rounds, .. } => Some(*omitted_rounds),
            _ => None,
        })
        .collect();
    assert!(omitted.iter().any(|&n| n > 0), "no compaction left rounds out: {omitted:?}");
    let summary_request = run
        .requests
        .iter()
        .find(|request| request.body.to_string().contains("rounds of this conversation are left out"))
        .expect("a summary request that leaves rounds out");
    assert!(!summary_request.body.to_string().contains("file 000: checksum"), "the oldest read was left out");
}

#[tokio::test]
async fn the_compact_op_compacts_with_the_users_focus_and_later_requests_start_from_the_boundary() {
    use lathe_core::host::{Flags, SessionBuilder, SessionChoice};
    use lathe_protocol::{AgentOp, Content};

    let tmp = tempfile::tempdir().expect("tmp");
    let (home, workspace) = (tmp.path().join("home"), tmp.path().join("ws"));
    std::fs::create_dir_all(&home).expect("home");
    seed_files(&workspace, 3);
    std::fs::write(home.join("config.toml"), "[retry]\nmax_retries = 0\n").expect("config");
    let read = |i: usize| {
        json!({"tool_calls": [{"id": format!("call_{i}"), "name": "read_file",
                               "arguments": {"path": format!("src/f{i:03}.txt")}}]})
    };
    let server = scripted(json!({
        "side_replies": [{"when_last_user_contains": SUMMARY_REQUEST_MARKER, "text": SUMMARY}],
        "turns": [read(0), read(1), read(2), {"text": "read them"}, {"text": "second answer"}]}))
    .await;
    let flags = Flags {
        dir: Some(workspace.clone()),
        provider: Some("anthropic".into()),
        base_url: Some(server.url()),
        session: SessionChoice::New,
        ..Flags::default()
    };
    let mut session = SessionBuilder::new(flags).home(home.clone()).start().await.expect("session");
    let say = |session: &lathe_core::host::SessionHandle, text: &str| {
        session.ops.send(AgentOp::UserInput { content: vec![Content::text(text)] }).expect("op");
    };
    let wait = async |session: &mut lathe_core::host::SessionHandle, stop: fn(&AgentEvent) -> bool| loop {
        let event = tokio::time::timeout(std::time::Duration::from_secs(20), session.events.recv())
            .await
            .expect("an event within 20 s")
            .expect("open");
        if stop(&event) {
            return event;
        }
    };
    say(&session, TASK);
    wait(&mut session, |event| matches!(event, AgentEvent::Finished { .. })).await;
    session.ops.send(AgentOp::Compact { focus: Some("the checksum lines".into()) }).expect("op");
    let compacted = wait(&mut session, |event| matches!(event, AgentEvent::Compacted { .. })).await;
    let AgentEvent::Compacted { trigger, summarized_items, .. } = compacted else { unreachable!() };
    assert_eq!(trigger, CompactionTrigger::Manual);
    assert!(summarized_items > 0);
    let summary_request = server.requests().last().expect("summary request").body.to_string();
    assert!(summary_request.contains("focus on: the checksum lines"), "{summary_request}");
    say(&session, "and now?");
    wait(&mut session, |event| matches!(event, AgentEvent::Finished { .. })).await;
    let last = server.requests().last().expect("request").body.clone();
    let first = last["messages"][0]["content"].to_string();
    assert!(first.contains("compacted to fit") && first.contains(TASK), "{first}");
    assert!(first.contains("Read the next file."), "the summary comes first: {first}");
    session.ops.send(AgentOp::Quit).expect("quit");
}

#[tokio::test]
async fn a_path_scoped_rule_is_loaded_once_on_the_first_matching_read() {
    use lathe_core::instructions::{self, Sources};

    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path().join("repo");
    std::fs::create_dir_all(root.join(".git")).expect("git");
    std::fs::create_dir_all(root.join(".claude/rules")).expect("rules");
    std::fs::create_dir_all(root.join("src/api")).expect("api");
    std::fs::write(
        root.join(".claude/rules/api.md"),
        "---\npaths:\n  - \"src/api/**\"\n---\nHandlers return ApiError.\n",
    )
    .expect("rule");
    for name in ["src/main.rs", "src/api/users.rs", "src/api/orders.rs"] {
        std::fs::write(root.join(name), format!("// {name}\n")).expect("file");
    }
    let found = instructions::gather(&Sources {
        cwd: root.clone(),
        lathe_home: dir.path().join("lathe"),
        user_home: None,
        max_bytes: instructions::DEFAULT_MAX_BYTES,
    });
    assert_eq!(found.rules.rules.len(), 1);
    let read = |id: &str, path: &str| json!({"tool_calls": [{"id": id, "name": "read_file", "arguments": {"path": path}}]});
    let server = scripted(json!({"turns": [
        read("c1", "src/main.rs"), read("c2", "src/api/users.rs"), read("c3", "src/api/orders.rs"), {"text": "done"}]}))
    .await;
    let mut agent = agent(&server, Protocol::Anthropic, &root, settings(200_000, ContextSettings::default()))
        .with_rules(found.rules);
    let run = run(&mut agent, &server, "look at the API").await;
    assert_eq!(run.cause, StopCause::Completed);
    let occurrences: Vec<usize> = run
        .requests
        .iter()
        .map(|request| request.body["messages"].to_string().matches("Handlers return ApiError.").count())
        .collect();
    assert_eq!(occurrences, [0, 0, 1, 1], "loaded with the first matching read, once");
}

#[tokio::test]
async fn system_and_tools_stay_byte_identical_across_turns_a_mode_change_and_a_compaction() {
    let dir = tempfile::tempdir().expect("tmp");
    seed_files(dir.path(), 4);
    let read = |i: usize| {
        json!({"tool_calls": [{"id": format!("call_{i}"), "name": "read_file",
                               "arguments": {"path": format!("src/f{i:03}.txt")}}]})
    };
    let server = scripted(json!({
        "side_replies": [{"when_last_user_contains": SUMMARY_REQUEST_MARKER, "text": SUMMARY}],
        "turns": [read(0), read(1), {"text": "first"}, read(2), read(3), {"text": "second"}]}))
    .await;
    let mut agent =
        agent(&server, Protocol::Anthropic, dir.path(), settings(200_000, ContextSettings::default()));
    let first = run(&mut agent, &server, TASK).await;
    assert_eq!(first.cause, StopCause::Completed);
    assert!(agent.set_permission_mode(PermissionMode::Plan));
    let (tx, _rx) = mpsc::unbounded_channel();
    let outcome = agent.compact_now(None, &tx, &CancellationToken::new()).await;
    assert_eq!(outcome, lathe_core::context::CompactOutcome::Compacted);
    let second = run(&mut agent, &server, "now the other two").await;
    assert_eq!(second.cause, StopCause::Completed);
    // 3 requests, the summary request, 3 requests.
    assert_eq!(second.requests.len(), 7);
    assert_cache_friendly(&second.requests);
    let breakpoints: Vec<usize> = second
        .requests
        .iter()
        .map(|request| request.body.to_string().matches("\"cache_control\"").count())
        .collect();
    // The system block, the last tool, the newest message and the user message before it (when
    // there is one): never more than 4.
    assert_eq!(breakpoints, [3, 4, 4, 4, 3, 4, 4]);
}
