use lathe_protocol::{AssistantMessage, Content, ToolCall, UserMessage};
use serde_json::json;

use super::*;

fn call(id: &str, name: &str) -> Content {
    Content::ToolCall(ToolCall { id: id.into(), name: name.into(), arguments: json!({}), incomplete: None })
}

#[test]
fn the_history_answers_every_call_of_the_forking_response() {
    let response = AssistantMessage {
        content: vec![Content::text("Forking."), call("t1", "task"), call("g1", "grep")],
        stop: lathe_protocol::StopReason::ToolUse,
        usage: Default::default(),
        model: "m".into(),
    };
    let base = ForkBase {
        system: vec![],
        messages: vec![LedgerItem::User(UserMessage::text("hi")), LedgerItem::Assistant(response.clone())],
        tools: vec![],
        model: "m".into(),
    };
    let items = history(&base);
    assert_eq!(items[..2], base.messages[..]);
    let ids: Vec<&str> = items[2..]
        .iter()
        .filter_map(|item| match item {
            LedgerItem::ToolResult(result) => Some(result.call_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(ids, ["t1", "g1"]);
    assert!(LedgerItem::unpaired_calls(&items).is_empty());
}

#[tokio::test]
async fn the_fork_offers_the_same_specs_and_refuses_what_it_may_not_use() {
    let usable = ToolRegistry::builtin();
    let grep = usable.get("grep").map(|tool| tool.spec()).unwrap_or_else(|| panic!("grep"));
    let task =
        ToolSpec { name: "task".into(), description: "Start a sub-agent".into(), input_schema: json!({}) };
    let specs = vec![task.clone(), grep.clone()];
    let tools = fork_tools(&specs, &usable);
    assert_eq!(tools.specs(), specs, "same specs, same order");
    let ctx = ToolContext::new(std::env::temp_dir());
    let refused = tools.get("task").unwrap_or_else(|| panic!("task")).call(json!({}), &ctx).await;
    let message = refused.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(message.contains("a fork cannot use this tool"), "{message}");
    assert!(directive("Check the parser").contains("Task: Check the parser"));
}
