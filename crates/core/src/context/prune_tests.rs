use super::*;
use lathe_protocol::{AssistantMessage, Receipt, StopReason, ToolStatus, Usage, UserMessage};
use serde_json::json;

use crate::context::budget::item_tokens;

fn call(id: &str, name: &str, arguments: serde_json::Value) -> LedgerItem {
    LedgerItem::Assistant(AssistantMessage {
        content: vec![Content::ToolCall(ToolCall {
            id: id.into(),
            name: name.into(),
            arguments,
            incomplete: None,
        })],
        stop: StopReason::ToolUse,
        usage: Usage::default(),
        model: "m".into(),
    })
}

fn result(id: &str, bytes: usize) -> LedgerItem {
    LedgerItem::ToolResult(ToolResult::text(id, "x".repeat(bytes), false, ToolStatus::Completed))
}

#[test]
fn old_rereadable_outputs_are_candidates_and_the_newest_and_current_round_are_not() {
    let ledger = vec![
        LedgerItem::User(UserMessage::text("task")),
        call("a", "read_file", json!({"path": "a.rs"})),
        result("a", 4_000),
        call("b", "edit_file", json!({"path": "a.rs"})),
        result("b", 4_000),
        call("c", "shell", json!({"command": "ls"})),
        result("c", 200),
        call("d", "grep", json!({"pattern": "x"})),
        result("d", 4_000),
        call("e", "read_file", json!({"path": "e.rs"})),
        result("e", 4_000),
    ];
    let tokens: Vec<u64> = ledger.iter().map(item_tokens).collect();
    let view: Vec<usize> = (0..ledger.len()).collect();
    // Nothing protected but the current round: a and d (b is not re-readable, c is too small).
    let ids = candidates(&ledger, &view, &tokens, &HashSet::new(), 0);
    assert_eq!(ids, ["a", "d"]);
    // The newest ~1 100 tokens are protected: d's result is inside them.
    let ids = candidates(&ledger, &view, &tokens, &HashSet::new(), 1_100);
    assert_eq!(ids, ["a"]);
    // Already pruned results are not proposed again.
    let ids = candidates(&ledger, &view, &tokens, &HashSet::from(["a".to_string()]), 0);
    assert_eq!(ids, ["d"]);
}

#[test]
fn stubs_name_the_call_and_how_to_get_the_output_back() {
    let read = ToolCall {
        id: "a".into(),
        name: "read_file".into(),
        arguments: json!({"path": "src/lib.rs"}),
        incomplete: None,
    };
    let LedgerItem::ToolResult(output) = result("a", 5_000) else { unreachable!() };
    let text = stub_text(Some(&read), &output);
    assert_eq!(
        text,
        "[output elided to save context: read_file {\"path\":\"src/lib.rs\"} returned 5000 bytes; call read_file again \
         with the same arguments to see it]"
    );
    let shell = ToolCall {
        id: "s".into(),
        name: "shell".into(),
        arguments: json!({"command": "cargo test"}),
        incomplete: None,
    };
    let mut output = ToolResult::text("s", "ok", false, ToolStatus::Completed);
    output.receipt =
        Some(Receipt { exit_code: Some(101), spill_path: Some("/tmp/out.txt".into()), ..Receipt::default() });
    let text = stub_text(Some(&shell), &output);
    assert!(text.contains("exit code 101") && text.contains("read_file /tmp/out.txt"), "{text}");
    let stub = stubbed(Some(&shell), &output);
    assert_eq!(stub.call_id, "s");
    assert!(stub.receipt.is_none());
}
