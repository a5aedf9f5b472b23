//! The last pairing rule a request's messages meet, whatever the ledger they came from holds:
//! every tool call is answered by its result before anything else follows it, no result stands
//! without its call, and two assistant messages are never adjacent (Anthropic would merge them into
//! one turn, gluing a call to text it never produced). A ledger read back with a lost line (a torn
//! or corrupt line of the session file, skipped on load) can break any of these; [`paired`]
//! repairs the messages where the break sits, so the provider never answers 400 and every later
//! resume works. A ledger written by a live run already meets them, and passes through unchanged.
//!
//! The rules are the providers' own: Anthropic Messages "tool_use ids were found without
//! tool_result blocks immediately after"; OpenAI Chat "An assistant message with 'tool_calls'
//! must be followed by tool messages responding to each 'tool_call_id'"; OpenAI Responses "No
//! tool output found for function call".

use crate::ledger::{LedgerItem, ToolResult, ToolStatus, UserMessage};

/// The result that stands in for a call's result that was lost.
pub const LOST_RESULT: &str =
    "[no result: the result of this call was lost (a line of the session file could not be read back)]";

/// The user-side note that stands between two assistant messages whose message between was lost.
pub const LOST_MESSAGE: &str =
    "[a message of this conversation was lost here (a line of the session file could not be read back)]";

/// `messages` (as [`crate::conversation::request_messages`] gives them) with the pairing rules
/// met: a call without its result gets an [`LOST_RESULT`] result right after the results that did
/// arrive; a result whose call is not waiting for it (lost, answered already, or further back) is
/// left out; a [`LOST_MESSAGE`] note goes between two adjacent assistant messages and before an
/// assistant message that would open the request.
pub fn paired(messages: Vec<LedgerItem>) -> Vec<LedgerItem> {
    let mut out: Vec<LedgerItem> = Vec::with_capacity(messages.len());
    let mut waiting: Vec<String> = Vec::new();
    for item in messages {
        match &item {
            LedgerItem::ToolResult(result) => {
                if let Some(at) = waiting.iter().position(|id| *id == result.call_id) {
                    waiting.remove(at);
                    out.push(item);
                }
                continue;
            }
            LedgerItem::Meta(_) => {
                out.push(item);
                continue;
            }
            LedgerItem::User(_) | LedgerItem::Assistant(_) | LedgerItem::Compaction(_) => {}
        }
        answer_lost(&mut out, &mut waiting);
        if let LedgerItem::Assistant(message) = &item {
            let previous = out.iter().rev().find(|item| !matches!(item, LedgerItem::Meta(_)));
            if matches!(previous, None | Some(LedgerItem::Assistant(_))) {
                out.push(LedgerItem::User(UserMessage::injected(LOST_MESSAGE)));
            }
            waiting.extend(message.tool_calls().map(|call| call.id.clone()));
        }
        out.push(item);
    }
    answer_lost(&mut out, &mut waiting);
    out
}

fn answer_lost(out: &mut Vec<LedgerItem>, waiting: &mut Vec<String>) {
    for id in waiting.drain(..) {
        out.push(LedgerItem::ToolResult(ToolResult::text(id, LOST_RESULT, true, ToolStatus::Interrupted)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{StopReason, Usage};
    use crate::ledger::{AssistantMessage, Content, ToolCall};
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn user(text: &str) -> LedgerItem {
        LedgerItem::User(UserMessage::text(text))
    }

    fn assistant(text: &str, calls: &[&str]) -> LedgerItem {
        let mut content = vec![Content::text(text)];
        content.extend(calls.iter().map(|id| {
            Content::ToolCall(ToolCall {
                id: (*id).into(),
                name: "read_file".into(),
                arguments: json!({}),
                incomplete: None,
            })
        }));
        let stop = if calls.is_empty() { StopReason::EndTurn } else { StopReason::ToolUse };
        LedgerItem::Assistant(AssistantMessage { content, stop, usage: Usage::default(), model: "m".into() })
    }

    fn result(id: &str, text: &str) -> LedgerItem {
        LedgerItem::ToolResult(ToolResult::text(id, text, false, ToolStatus::Completed))
    }

    fn lost(id: &str) -> LedgerItem {
        LedgerItem::ToolResult(ToolResult::text(id, LOST_RESULT, true, ToolStatus::Interrupted))
    }

    #[test]
    fn a_well_paired_conversation_passes_unchanged() {
        let messages = vec![
            user("go"),
            assistant("", &["c1", "c2"]),
            result("c2", "b"),
            result("c1", "a"),
            assistant("done", &[]),
        ];
        assert_eq!(paired(messages.clone()), messages);
    }

    #[test]
    fn a_lost_result_is_answered_where_it_was_and_a_late_copy_is_left_out() {
        let messages = vec![
            user("go"),
            assistant("", &["c1", "c2"]),
            result("c1", "a"),
            assistant("done", &[]),
            user("next"),
            result("c2", "appended at the end by the pairing guard"),
        ];
        assert_eq!(
            paired(messages),
            vec![
                user("go"),
                assistant("", &["c1", "c2"]),
                result("c1", "a"),
                lost("c2"),
                assistant("done", &[]),
                user("next")
            ]
        );
    }

    #[test]
    fn two_adjacent_assistant_messages_get_a_note_between_and_a_result_without_call_is_left_out() {
        let note = LedgerItem::User(UserMessage::injected(LOST_MESSAGE));
        let messages = vec![result("c0", "orphan"), assistant("a", &[]), assistant("b", &[]), user("next")];
        assert_eq!(
            paired(messages),
            vec![note.clone(), assistant("a", &[]), note, assistant("b", &[]), user("next")]
        );
    }
}
