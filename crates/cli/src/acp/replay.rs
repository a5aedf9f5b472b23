//! `session/load`: a saved session's conversation replayed as `session/update`s, in ledger order —
//! the user's own messages (not what Lathe injected), the assistant's reasoning, text and calls,
//! each call's result, and the todo list as a plan after each `todo_write`.

use std::collections::HashMap;
use std::path::Path;

use agent_client_protocol::v1::schema as acp;
use lathe_protocol::{Content, LedgerItem, UserOrigin};
use serde_json::json;

use super::live::tool_call;
use super::mapping::{self, lathe_meta, text_block};

/// The updates that replay the session file `file` (none when it is `None` or cannot be read).
pub fn ledger_updates(file: Option<&str>, workspace: &Path) -> Vec<acp::SessionUpdate> {
    let items = file.and_then(|file| lathe_core::session::load(Path::new(file)).ok()).map(|s| s.items);
    updates(&items.unwrap_or_default(), workspace)
}

/// The updates that replay `items` (a loaded session's ledger) for a client rooted at `workspace`.
pub fn updates(items: &[LedgerItem], workspace: &Path) -> Vec<acp::SessionUpdate> {
    let mut updates = Vec::new();
    let mut tools: HashMap<String, String> = HashMap::new();
    for item in items {
        match item {
            LedgerItem::User(message) if message.origin == UserOrigin::User => {
                for block in mapping::message_blocks(&message.content) {
                    updates.push(acp::SessionUpdate::UserMessageChunk(acp::ContentChunk::new(block)));
                }
            }
            LedgerItem::Assistant(message) => {
                for content in &message.content {
                    match content {
                        Content::Thinking(thinking) if !thinking.text.is_empty() => {
                            updates.push(acp::SessionUpdate::AgentThoughtChunk(acp::ContentChunk::new(
                                text_block(thinking.text.clone()),
                            )))
                        }
                        Content::Text { text } if !text.is_empty() => {
                            updates.push(acp::SessionUpdate::AgentMessageChunk(acp::ContentChunk::new(
                                text_block(text.clone()),
                            )))
                        }
                        Content::ToolCall(call) => {
                            tools.insert(call.id.clone(), call.name.clone());
                            updates.push(acp::SessionUpdate::ToolCall(tool_call(
                                call,
                                &summary(call),
                                workspace,
                            )));
                            if call.name == "todo_write"
                                && let Some(items) = call.arguments.get("items")
                            {
                                updates.push(acp::SessionUpdate::Plan(mapping::plan(items)));
                            }
                        }
                        _ => {}
                    }
                }
            }
            LedgerItem::ToolResult(result) => {
                let fields = acp::ToolCallUpdateFields::new()
                    .status(mapping::result_status(result.status))
                    .content(vec![acp::ToolCallContent::Content(acp::Content::new(text_block(
                        result.text_content(),
                    )))]);
                let tool = tools.get(&result.call_id).cloned().unwrap_or_default();
                let meta = lathe_meta(json!({"tool": tool, "status": result.status, "replayed": true}));
                updates.push(acp::SessionUpdate::ToolCallUpdate(
                    acp::ToolCallUpdate::new(result.call_id.clone(), fields).meta(meta),
                ));
            }
            _ => {}
        }
    }
    updates
}

/// A replayed call's one-line summary (the live one came from its tool): the path, command,
/// pattern or URL argument.
fn summary(call: &lathe_protocol::ToolCall) -> String {
    ["command", "path", "pattern", "url"]
        .iter()
        .find_map(|key| call.arguments.get(*key).and_then(|value| value.as_str()))
        .map(|text| crate::print::cut(text, 120))
        .unwrap_or_default()
}
