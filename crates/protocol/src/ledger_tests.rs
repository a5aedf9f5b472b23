use super::*;
use pretty_assertions::assert_eq;
use serde_json::json;

fn call(id: &str) -> Content {
    Content::ToolCall(ToolCall {
        id: id.into(),
        name: "read_file".into(),
        arguments: json!({}),
        incomplete: None,
    })
}

fn assistant(content: Vec<Content>) -> LedgerItem {
    LedgerItem::Assistant(AssistantMessage {
        content,
        stop: StopReason::ToolUse,
        usage: Usage::default(),
        model: "m".into(),
    })
}

#[test]
fn unpaired_calls_lists_calls_without_results() {
    let items = vec![
        LedgerItem::User(UserMessage::text("hi")),
        assistant(vec![call("a"), call("b")]),
        LedgerItem::ToolResult(ToolResult::text("a", "ok", false, ToolStatus::Completed)),
    ];
    let ids: Vec<String> = LedgerItem::unpaired_calls(&items).into_iter().map(|c| c.id).collect();
    assert_eq!(ids, vec!["b".to_string()]);
}

#[test]
fn ledger_item_round_trips_through_json() {
    let item = assistant(vec![
        Content::Thinking(Thinking {
            text: "hmm".into(),
            signature: Some("sig".into()),
            redacted: None,
            format: ThinkingFormat::Anthropic,
        }),
        Content::text("hello"),
        call("x"),
    ]);
    let line = serde_json::to_string(&item).unwrap_or_default();
    let back: LedgerItem = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
    assert_eq!(back, item);
}

#[test]
fn sendable_starts_at_last_compaction_and_skips_meta() {
    let items = vec![
        LedgerItem::User(UserMessage::text("old")),
        LedgerItem::Compaction(Compaction { summary: "s".into(), kept_from: 1 }),
        LedgerItem::Meta(Meta::Note { text: "n".into() }),
        LedgerItem::User(UserMessage::text("new")),
    ];
    let kinds: Vec<&LedgerItem> = LedgerItem::sendable(&items).collect();
    assert_eq!(kinds.len(), 2);
    assert!(matches!(kinds[0], LedgerItem::Compaction(_)));
}

#[test]
fn sendable_sends_the_summary_then_the_kept_tail_then_what_followed() {
    let text = |item: &LedgerItem| match item {
        LedgerItem::User(message) => match &message.content[0] {
            Content::Text { text } => text.clone(),
            other => format!("{other:?}"),
        },
        LedgerItem::Compaction(compaction) => compaction.summary.clone(),
        other => format!("{other:?}"),
    };
    let user = |t: &str| LedgerItem::User(UserMessage::text(t));
    let items = vec![
        user("a"),
        user("b"),
        LedgerItem::Compaction(Compaction { summary: "s1".into(), kept_from: 1 }),
        user("c"),
        user("d"),
        LedgerItem::Meta(Meta::Note { text: "n".into() }),
        LedgerItem::Compaction(Compaction { summary: "s2".into(), kept_from: 1 }),
        user("e"),
    ];
    let sent: Vec<String> = LedgerItem::sendable(&items).map(text).collect();
    assert_eq!(sent, ["s2", "b", "c", "d", "e"]);
    // Nothing kept: the boundary's own index.
    let items =
        vec![user("a"), LedgerItem::Compaction(Compaction { summary: "s".into(), kept_from: 1 }), user("z")];
    let sent: Vec<String> = LedgerItem::sendable(&items).map(text).collect();
    assert_eq!(sent, ["s", "z"]);
}

#[test]
fn a_receipt_without_line_counts_still_loads_and_one_with_them_round_trips() {
    let old = json!({"type": "tool_result", "call_id": "a", "content": [], "receipt":
        {"tool": "edit_file", "summary": "app.py", "decision": "allow", "started_ms": 1, "elapsed_ms": 2}});
    let Ok(LedgerItem::ToolResult(result)) = serde_json::from_value::<LedgerItem>(old) else {
        panic!("a tool result")
    };
    assert_eq!(result.receipt.as_ref().and_then(|receipt| receipt.change.clone()), None);
    let receipt = Receipt {
        tool: "edit_file".into(),
        change: Some(FileLines { path: "app.py".into(), added: 3, removed: 1 }),
        ..Receipt::default()
    };
    let value = serde_json::to_value(&receipt).unwrap_or_default();
    assert_eq!(value["change"], json!({"path": "app.py", "added": 3, "removed": 1}));
    assert_eq!(serde_json::from_value::<Receipt>(value).ok(), Some(receipt));
}

#[test]
fn a_goal_check_is_a_meta_item() {
    let item = LedgerItem::Meta(Meta::GoalCheck {
        iteration: 2,
        command: "make check".into(),
        exit_code: Some(1),
        timed_out: false,
        output_tail: "FAILED".into(),
        elapsed_ms: 40,
    });
    let value = serde_json::to_value(&item).unwrap_or_default();
    assert_eq!(value["type"], "meta");
    assert_eq!(value["meta"], "goal_check");
    assert_eq!(serde_json::from_value::<LedgerItem>(value).ok().as_ref(), Some(&item));
    assert_eq!(LedgerItem::sendable(std::slice::from_ref(&item)).count(), 0);
}
