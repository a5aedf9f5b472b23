use super::*;
use lathe_protocol::{AssistantMessage, Content, ModelEvent, StopReason, ToolCall, ToolResult, ToolStatus};
use serde_json::json;

fn assistant(ids: &[&str]) -> LedgerItem {
    LedgerItem::Assistant(AssistantMessage {
        content: ids
            .iter()
            .map(|id| {
                Content::ToolCall(ToolCall {
                    id: (*id).into(),
                    name: "read_file".into(),
                    arguments: json!({"path": format!("{id}.txt")}),
                    incomplete: None,
                })
            })
            .collect(),
        stop: StopReason::ToolUse,
        usage: Usage::default(),
        model: "m".into(),
    })
}

fn result(id: &str, bytes: usize) -> LedgerItem {
    LedgerItem::ToolResult(ToolResult::text(id, "y".repeat(bytes), false, ToolStatus::Completed))
}

#[test]
fn a_tail_start_between_a_call_and_its_result_moves_back_to_the_call() {
    // The second call's result comes after an injected message (e.g. instructions loaded by the
    // first read): a segment starts there, but a tail starting there would split call b from its
    // result.
    let ledger = vec![
        LedgerItem::User(UserMessage::text("task")),
        assistant(&["x"]),
        result("x", 40_000),
        assistant(&["a", "b"]),
        result("a", 400),
        LedgerItem::User(UserMessage::injected("rules for a.txt")),
        result("b", 400),
    ];
    let view: Vec<usize> = (0..ledger.len()).collect();
    assert_eq!(segment_starts(&ledger, &view), [0, 1, 3, 5]);
    assert_eq!(unsplit(&ledger, &view, 5), 3);
    let tokens: Vec<u64> = ledger.iter().map(item_tokens).collect();
    let mut budget = Budget::new(32_000, 8_192);
    // Room for the last segment only (the injected message and b's result).
    budget.tail = tokens[5] + tokens[6] + 1;
    let plan = plan(&ledger, &view, &tokens, 0, &budget, u64::MAX);
    assert_eq!(plan.tail_start, 3, "the tail starts at the call, not between it and its result");
    assert_eq!(plan.summarized, [0, 1, 2]);
    assert_eq!(plan.omitted_rounds, 0);
}

#[test]
fn a_summary_input_that_does_not_fit_leaves_out_the_oldest_rounds_first() {
    let mut ledger = vec![LedgerItem::User(UserMessage::text("task"))];
    for i in 0..10 {
        let id = format!("c{i}");
        ledger.push(assistant(&[&id]));
        ledger.push(result(&id, 20_000));
    }
    let view: Vec<usize> = (0..ledger.len()).collect();
    let tokens: Vec<u64> = ledger.iter().map(item_tokens).collect();
    let budget = Budget::new(32_000, 8_192);
    let plan = plan(&ledger, &view, &tokens, 1_000, &budget, u64::MAX);
    // Each round is ~5 000 tokens: the tail keeps one, the summary input at most five.
    assert_eq!(plan.tail_start, 19);
    assert!(plan.omitted_rounds >= 4, "{plan:?}");
    assert_eq!(plan.summarized.first(), Some(&(1 + 2 * (plan.omitted_rounds as usize - 1))));
    let size: u64 = plan.summarized.iter().map(|&p| tokens[p]).sum();
    assert!(size + 1_000 + budget.summary_output + budget.margin <= budget.window);
    // A lower cap (after the provider said the summary request was too long) leaves out more.
    let smaller = super::plan(&ledger, &view, &tokens, 1_000, &budget, size / 2);
    assert!(smaller.omitted_rounds > plan.omitted_rounds);
    let request = summary_request(
        "m",
        &[],
        Vec::new(),
        &ledger,
        &plan,
        &["task".to_string()],
        Some("the parser"),
        &budget,
        false,
    );
    let LedgerItem::User(first) = &request.messages[0] else { panic!("{:?}", request.messages[0]) };
    assert!(matches!(&first.content[0], Content::Text { text } if text.contains("are left out")));
    let LedgerItem::User(last) = request.messages.last().unwrap() else { panic!() };
    let Content::Text { text } = &last.content[0] else { panic!() };
    assert!(text.starts_with(SUMMARY_REQUEST_MARKER) && text.contains("focus on: the parser"), "{text}");
}

#[test]
fn the_boundary_keeps_the_users_messages_verbatim() {
    let ledger = vec![
        LedgerItem::User(UserMessage::text("Fix the parser. Do not touch the lexer.")),
        LedgerItem::User(UserMessage::injected("a reminder")),
        LedgerItem::User(UserMessage::text("Also add a test.")),
        LedgerItem::User(UserMessage::text("in the tail")),
    ];
    let messages = user_messages(&ledger, 3, 1_000);
    assert_eq!(messages, ["Fix the parser. Do not touch the lexer.", "Also add a test."]);
    let text = boundary(
        "## Next step\nRun the tests.",
        3,
        2,
        &Reattached {
            user_messages: messages,
            files: vec![("a.rs".into(), "1\tfn a() {}".into())],
            todos: None,
        },
    );
    assert!(text.contains("Fix the parser. Do not touch the lexer.\n"), "{text}");
    assert!(text.contains("the oldest 2 rounds"), "{text}");
    assert!(text.contains("### a.rs\n1\tfn a() {}"), "{text}");
    // A first message too big for the budget is cut, never dropped.
    let huge = vec![LedgerItem::User(UserMessage::text("z".repeat(10_000)))];
    let kept = user_messages(&huge, 1, 100);
    assert!(kept[0].starts_with("zzzz") && kept[0].contains("cut here"), "{}", &kept[0][..50]);
}

/// A provider that answers with a `read_file` call whenever tools are offered, and with text
/// otherwise (as a small local model whose grammar forces a call does); it records each request's
/// tool count.
struct CallsWhenOffered {
    tool_counts: std::sync::Mutex<Vec<usize>>,
}

impl lathe_provider::Provider for CallsWhenOffered {
    fn name(&self) -> &str {
        "calls-when-offered"
    }

    fn stream(
        &self,
        request: &ModelRequest,
        _cancel: tokio_util::sync::CancellationToken,
    ) -> lathe_provider::ModelStream {
        self.tool_counts.lock().unwrap().push(request.tools.len());
        let usage =
            ModelEvent::Usage(Usage { input_tokens: Some(100), output_tokens: Some(7), ..Usage::default() });
        let events = if request.tools.is_empty() {
            vec![
                ModelEvent::TextDelta { text: "## Summary\nRead a.txt.".into() },
                usage,
                ModelEvent::Stop { reason: StopReason::EndTurn },
            ]
        } else {
            vec![
                ModelEvent::ToolCallStart { index: 0, id: "c9".into(), name: "read_file".into() },
                ModelEvent::ToolCallEnd {
                    index: 0,
                    arguments: Some(json!({"path": "a.txt"})),
                    raw: String::new(),
                },
                usage,
                ModelEvent::Stop { reason: StopReason::ToolUse },
            ]
        };
        Box::pin(futures::stream::iter(events))
    }
}

#[tokio::test]
async fn a_summary_answered_with_tool_calls_is_asked_again_without_tools() {
    let provider = CallsWhenOffered { tool_counts: std::sync::Mutex::new(Vec::new()) };
    let tools = ToolRegistry::builtin().specs();
    let request = ModelRequest { model: "m".into(), tools, ..ModelRequest::default() };
    let cancel = tokio_util::sync::CancellationToken::new();
    let (summary, usage) = summarize(&provider, &request, ThinkingFormat::Anthropic, &cancel).await;
    assert_eq!(summary.as_deref(), Ok("## Summary\nRead a.txt."));
    let counts = provider.tool_counts.lock().unwrap().clone();
    assert_eq!(counts.len(), 2, "one retry: {counts:?}");
    assert!(counts[0] > 0 && counts[1] == 0, "{counts:?}");
    assert_eq!(usage.output_tokens, Some(14), "both attempts are counted");

    // Without tools offered, a response without text is an error, not a loop.
    let request = ModelRequest { model: "m".into(), ..ModelRequest::default() };
    let provider = CallsWhenOffered { tool_counts: std::sync::Mutex::new(Vec::new()) };
    let (summary, _) = summarize(&provider, &request, ThinkingFormat::Anthropic, &cancel).await;
    assert!(summary.is_ok());
    assert_eq!(provider.tool_counts.lock().unwrap().len(), 1);
}
