//! What of the ledger a model request carries.
//!
//! The ledger is append-only, so what must no longer be sent is marked by later items rather than
//! removed. [`request_messages`] applies those marks, in this order:
//! 1. after the last [`Compaction`](crate::Compaction) boundary, only the boundary (its summary),
//!    the tail it kept and what followed it are sent, and [`Meta`] items never are
//!    ([`LedgerItem::sendable`]);
//! 2. a [`Meta::RequestFailed`] leaves out the user messages it was answering — those since the
//!    last assistant message. Tool results stay (every call keeps its result), so only prompts
//!    and injected reminders are affected: a prompt whose request failed is not glued to the next
//!    prompt of a continued session;
//! 3. a [`Meta::ImagesReplaced`] turns every image before it into a text note, so one image a
//!    provider cannot decode does not fail every later request of the session.

use crate::ledger::{Content, LedgerItem, Meta};

/// The text that stands in for an image the provider could not process.
pub fn replaced_image_note(reason: &str) -> String {
    format!("[image removed: the model provider could not process it ({reason})]")
}

/// The items a model request is built from (see the module docs for the rules).
pub fn request_messages(items: &[LedgerItem]) -> Vec<LedgerItem> {
    request_entries(items).into_iter().map(|(index, images)| render(&items[index], images)).collect()
}

/// The item as sent: with its images replaced by a note when `images` gives the reason.
pub fn render(item: &LedgerItem, images: Option<&str>) -> LedgerItem {
    match images {
        Some(reason) if carries_image(item) => without_images(item, reason),
        _ => item.clone(),
    }
}

/// The ledger indices of [`request_messages`]'s items, in order, each with the reason its images
/// are replaced by a note (if they are).
pub fn request_entries(all: &[LedgerItem]) -> Vec<(usize, Option<&str>)> {
    let order = LedgerItem::live_indices(all);
    let items: Vec<&LedgerItem> = order.iter().map(|&index| &all[index]).collect();
    let mut left_out = vec![false; items.len()];
    let mut unanswered: Vec<usize> = Vec::new();
    let mut images_until: Option<(usize, &str)> = None;
    for (position, item) in items.iter().enumerate() {
        match item {
            LedgerItem::User(_) => unanswered.push(position),
            LedgerItem::Assistant(_) => unanswered.clear(),
            LedgerItem::Meta(Meta::RequestFailed { .. }) => {
                for index in unanswered.drain(..) {
                    left_out[index] = true;
                }
            }
            LedgerItem::Meta(Meta::ImagesReplaced { reason }) => images_until = Some((position, reason)),
            LedgerItem::Meta(_) | LedgerItem::ToolResult(_) | LedgerItem::Compaction(_) => {}
        }
    }
    items
        .iter()
        .enumerate()
        .filter(|(position, item)| !left_out[*position] && !matches!(item, LedgerItem::Meta(_)))
        .map(|(position, _)| {
            let images = images_until.filter(|(until, _)| position < *until).map(|(_, reason)| reason);
            (order[position], images)
        })
        .collect()
}

/// Whether `item` holds image content.
pub fn carries_image(item: &LedgerItem) -> bool {
    let has = |content: &[Content]| content.iter().any(|c| matches!(c, Content::Image { .. }));
    match item {
        LedgerItem::User(message) => has(&message.content),
        LedgerItem::ToolResult(result) => has(&result.content),
        LedgerItem::Assistant(message) => has(&message.content),
        LedgerItem::Compaction(_) | LedgerItem::Meta(_) => false,
    }
}

fn without_images(item: &LedgerItem, reason: &str) -> LedgerItem {
    let replace = |content: &[Content]| -> Vec<Content> {
        content
            .iter()
            .map(|c| match c {
                Content::Image { .. } => Content::text(replaced_image_note(reason)),
                Content::Text { .. } | Content::Thinking(_) | Content::ToolCall(_) => c.clone(),
            })
            .collect()
    };
    let mut item = item.clone();
    match &mut item {
        LedgerItem::User(message) => message.content = replace(&message.content),
        LedgerItem::ToolResult(result) => result.content = replace(&result.content),
        LedgerItem::Assistant(message) => message.content = replace(&message.content),
        LedgerItem::Compaction(_) | LedgerItem::Meta(_) => {}
    }
    item
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{StopReason, Usage};
    use crate::ledger::{AssistantMessage, Compaction, ToolCall, ToolResult, ToolStatus, UserMessage};
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn failed() -> LedgerItem {
        LedgerItem::Meta(Meta::RequestFailed {
            kind: "context_window_exceeded".into(),
            message: "too long".into(),
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

    fn user(text: &str) -> LedgerItem {
        LedgerItem::User(UserMessage::text(text))
    }

    #[test]
    fn prompts_whose_request_failed_are_left_out() {
        let items = vec![
            user("first"),
            assistant(vec![Content::text("ok")]),
            user("retry 0"),
            failed(),
            user("retry 1"),
            failed(),
            user("retry 2"),
        ];
        assert_eq!(
            request_messages(&items),
            vec![user("first"), assistant(vec![Content::text("ok")]), user("retry 2")]
        );
    }

    #[test]
    fn a_failure_after_tool_calls_keeps_every_result() {
        let call =
            ToolCall { id: "c1".into(), name: "read_file".into(), arguments: json!({}), incomplete: None };
        let result = LedgerItem::ToolResult(ToolResult::text("c1", "text", false, ToolStatus::Completed));
        let items = vec![
            user("task"),
            assistant(vec![Content::ToolCall(call)]),
            result.clone(),
            failed(),
            user("go on"),
        ];
        let sent = request_messages(&items);
        assert_eq!(sent.len(), 4);
        assert_eq!(sent[2], result);
        assert_eq!(sent[3], user("go on"));
    }

    #[test]
    fn images_before_the_mark_become_text_notes() {
        let image = Content::Image { media_type: "image/png".into(), data: "AAAA".into() };
        let result = LedgerItem::ToolResult(ToolResult {
            call_id: "c1".into(),
            content: vec![image.clone()],
            is_error: false,
            status: ToolStatus::Completed,
            receipt: None,
        });
        let items = vec![
            result,
            LedgerItem::Meta(Meta::ImagesReplaced { reason: "Could not process image".into() }),
            LedgerItem::User(UserMessage { content: vec![image.clone()], origin: Default::default() }),
        ];
        let sent = request_messages(&items);
        assert!(!carries_image(&sent[0]));
        let LedgerItem::ToolResult(result) = &sent[0] else { panic!("{sent:?}") };
        assert_eq!(result.text_content(), replaced_image_note("Could not process image"));
        assert!(carries_image(&sent[1]), "an image added after the mark is sent");
    }

    #[test]
    fn starts_at_the_last_compaction() {
        let items = vec![
            user("old"),
            failed(),
            LedgerItem::Compaction(Compaction { summary: "s".into(), kept_from: 2 }),
            user("new"),
        ];
        let sent = request_messages(&items);
        assert_eq!(sent.len(), 2);
        assert!(matches!(sent[0], LedgerItem::Compaction(_)));
    }
}
