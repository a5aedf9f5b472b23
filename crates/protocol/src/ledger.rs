//! The ledger: one append-only list of [`LedgerItem`]s per session (ARCHITECTURE.md §2).
//!
//! The ledger is provider-neutral. Adapters in `lathe-provider` convert it to a wire protocol at the
//! edge and back; nothing here knows about Anthropic blocks, Chat `tool_calls` or Responses items.
//! Each item serialises as one JSON object tagged by `"type"`, which is also the session file's line
//! format.
//!
//! Invariant (ARCHITECTURE.md §4.1): every [`ToolCall`] of an [`AssistantMessage`] is followed by
//! exactly one [`ToolResult`] with its id before the next model request. [`LedgerItem::unpaired_calls`]
//! finds the calls that break it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event::{StopReason, Usage};
pub use crate::meta::Meta;

/// One entry of the ledger. Serialised as `{"type": "user" | "assistant" | "tool_result" |
/// "compaction" | "meta", ...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum LedgerItem {
    /// A user-side message: the prompt, a follow-up, or an injected reminder.
    User(UserMessage),
    /// One complete model response.
    Assistant(AssistantMessage),
    /// The result of one tool call, bound to the call by `call_id`.
    ToolResult(ToolResult),
    /// A compaction boundary: items before it are no longer sent.
    Compaction(Compaction),
    /// Saved, never sent: session start, model switch, mode change.
    Meta(Meta),
}

impl LedgerItem {
    /// Ids of tool calls in `items` that have no [`ToolResult`] yet, in call order.
    ///
    /// Calls before the last [`Compaction`] count too: compaction never splits a call from its result.
    pub fn unpaired_calls(items: &[LedgerItem]) -> Vec<ToolCall> {
        let mut pending: Vec<ToolCall> = Vec::new();
        for item in items {
            match item {
                LedgerItem::Assistant(message) => {
                    pending.extend(message.tool_calls().cloned());
                }
                LedgerItem::ToolResult(result) => pending.retain(|call| call.id != result.call_id),
                LedgerItem::User(_) | LedgerItem::Compaction(_) | LedgerItem::Meta(_) => {}
            }
        }
        pending
    }

    /// The items a model request is built from, without [`Meta`] items: with no compaction, every
    /// item; after one, the last boundary (so its summary is sent first), then the tail it kept —
    /// the items from its `kept_from` index up to the boundary, minus older boundaries — then
    /// everything appended after it. The ledger stays append-only: nothing is moved or deleted.
    pub fn sendable(items: &[LedgerItem]) -> impl Iterator<Item = &LedgerItem> {
        LedgerItem::sendable_indices(items).into_iter().map(move |index| &items[index])
    }

    /// The indices of [`LedgerItem::sendable`]'s items, in the order they are sent.
    pub fn sendable_indices(items: &[LedgerItem]) -> Vec<usize> {
        let indices = LedgerItem::live_indices(items);
        indices.into_iter().filter(|&index| !matches!(items[index], LedgerItem::Meta(_))).collect()
    }

    /// [`LedgerItem::sendable_indices`] with the [`Meta`] items among them kept (they mark what a
    /// request leaves out, see [`crate::conversation`]).
    pub fn live_indices(items: &[LedgerItem]) -> Vec<usize> {
        let Some(at) = items.iter().rposition(|item| matches!(item, LedgerItem::Compaction(_))) else {
            return (0..items.len()).collect();
        };
        let kept_from = match &items[at] {
            LedgerItem::Compaction(compaction) => compaction.kept_from.min(at),
            _ => at,
        };
        let live = |index: &usize| !matches!(items[*index], LedgerItem::Compaction(_));
        std::iter::once(at)
            .chain((kept_from..at).filter(live))
            .chain((at + 1..items.len()).filter(live))
            .collect()
    }
}

/// Where a user-side message came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UserOrigin {
    /// Typed or passed by the user.
    #[default]
    User,
    /// Injected by Lathe (a reminder, a hook's feedback, a continuation request); shown to the model
    /// as such.
    Injected,
}

/// A user-side message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserMessage {
    /// Text and images, in order.
    pub content: Vec<Content>,
    /// Who wrote it.
    #[serde(default, skip_serializing_if = "is_default")]
    pub origin: UserOrigin,
}

impl UserMessage {
    /// A plain text message typed by the user.
    pub fn text(text: impl Into<String>) -> Self {
        UserMessage { content: vec![Content::text(text)], origin: UserOrigin::User }
    }

    /// A text message injected by Lathe (reminder, hook feedback).
    pub fn injected(text: impl Into<String>) -> Self {
        UserMessage { content: vec![Content::text(text)], origin: UserOrigin::Injected }
    }

    /// The message's text parts joined by newlines (images left out).
    pub fn text_content(&self) -> String {
        let parts: Vec<&str> = self
            .content
            .iter()
            .filter_map(|content| match content {
                Content::Text { text } => Some(text.as_str()),
                Content::Image { .. } | Content::Thinking(_) | Content::ToolCall(_) => None,
            })
            .collect();
        parts.join("\n")
    }
}

/// One complete model response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssistantMessage {
    /// Text, thinking and tool calls in the order the model produced them.
    pub content: Vec<Content>,
    /// Why the model stopped (normalised; see [`StopReason`]).
    pub stop: StopReason,
    /// Token usage reported for this response.
    #[serde(default)]
    pub usage: Usage,
    /// The model that answered, as the provider reported it (or as requested).
    #[serde(default)]
    pub model: String,
}

impl AssistantMessage {
    /// The tool calls, in model order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.content.iter().filter_map(|content| match content {
            Content::ToolCall(call) => Some(call),
            Content::Text { .. } | Content::Image { .. } | Content::Thinking(_) => None,
        })
    }

    /// All text blocks joined with no separator.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|content| match content {
                Content::Text { text } => Some(text.as_str()),
                Content::Image { .. } | Content::Thinking(_) | Content::ToolCall(_) => None,
            })
            .collect()
    }
}

/// One piece of message content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Content {
    /// Plain text (UTF-8).
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// IANA media type, e.g. `image/png`.
        media_type: String,
        /// Standard base64 (RFC 4648 §4) of the image bytes.
        data: String,
    },
    /// Model reasoning that some providers require to be sent back unchanged.
    Thinking(Thinking),
    /// A request from the model to run a tool.
    ToolCall(ToolCall),
}

impl Content {
    /// Shorthand for [`Content::Text`].
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into() }
    }
}

/// Which wire protocol a thinking block came from; decides whether and how it can be echoed.
///
/// Signatures and encrypted reasoning are only valid for the provider that produced them, so a
/// block is echoed only to a protocol of the same format (a ledger that switches provider drops
/// foreign reasoning rather than sending something the provider would reject).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThinkingFormat {
    /// Anthropic `thinking` / `redacted_thinking` blocks (with `signature` / `data`).
    Anthropic,
    /// OpenAI-compatible Chat `reasoning_content` (DeepSeek) or `reasoning` (Ollama, OpenRouter).
    OpenAiChat,
    /// OpenAI Responses `reasoning` items (summary text plus `encrypted_content`).
    OpenAiResponses,
    /// Produced by Lathe's local model; never echoed.
    Local,
}

/// Model reasoning.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Thinking {
    /// The readable reasoning text (empty for redacted blocks).
    pub text: String,
    /// Anthropic `signature`, or Responses `encrypted_content`; must be echoed unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// Anthropic `redacted_thinking.data`: opaque, echoed unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redacted: Option<String>,
    /// Which protocol produced it.
    pub format: ThinkingFormat,
}

/// A tool call requested by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's call id (`toolu_…`, `call_…`); results are bound to it.
    pub id: String,
    /// The model-facing tool name.
    pub name: String,
    /// Parsed JSON arguments. A call whose JSON was cut off (see `incomplete`) holds `{}` here.
    pub arguments: Value,
    /// The raw argument text when the JSON was cut off by the output limit or did not parse. Such a
    /// call is never executed; the loop answers it with an error result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
}

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    /// The tool ran and returned (its own failure, e.g. a non-zero exit, is `is_error`).
    #[default]
    Completed,
    /// The permission gate (or the user) refused it; nothing ran.
    Denied,
    /// It could not run: invalid arguments, unknown tool, tool error.
    Failed,
    /// Cancelled, timed out, or left pending by a crash; repaired by the pairing guard.
    Interrupted,
}

/// The result of one tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The id of the [`ToolCall`] this answers.
    pub call_id: String,
    /// What the model sees: text (and images), already truncated to the in-context cap.
    pub content: Vec<Content>,
    /// Whether the provider should be told this is an error (`is_error` on Anthropic).
    #[serde(default)]
    pub is_error: bool,
    /// How the call ended.
    #[serde(default)]
    pub status: ToolStatus,
    /// What happened, for the user and the session file; never sent to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipt: Option<Receipt>,
}

impl ToolResult {
    /// A text result.
    pub fn text(
        call_id: impl Into<String>,
        text: impl Into<String>,
        is_error: bool,
        status: ToolStatus,
    ) -> Self {
        ToolResult {
            call_id: call_id.into(),
            content: vec![Content::text(text)],
            is_error,
            status,
            receipt: None,
        }
    }

    /// All text content joined with newlines.
    pub fn text_content(&self) -> String {
        let parts: Vec<&str> = self
            .content
            .iter()
            .filter_map(|content| match content {
                Content::Text { text } => Some(text.as_str()),
                Content::Image { .. } | Content::Thinking(_) | Content::ToolCall(_) => None,
            })
            .collect();
        parts.join("\n")
    }
}

/// The record of one tool call's execution (FEATURES.md §C "receipt").
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Receipt {
    /// Tool name.
    pub tool: String,
    /// A one-line summary of the arguments (e.g. the path or the command).
    pub summary: String,
    /// The permission decision (`allow`, `deny`, `ask→allow`…) and the rule or mode that made it.
    pub decision: String,
    /// Start time, milliseconds since the Unix epoch.
    pub started_ms: u64,
    /// Wall time of the execution in milliseconds.
    pub elapsed_ms: u64,
    /// Exit status for `shell`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Where the full output was spilled, when it was larger than the in-context cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spill_path: Option<String>,
    /// The file a successful `edit_file` or `write_file` call changed, with its line counts (absent
    /// in session files written before it was recorded). Files a `shell` command changes are not
    /// recorded: Lathe does not know them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<FileLines>,
}

/// One file a tool changed and by how many lines, counted over the whole change (also when the
/// diff shown was cut).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FileLines {
    /// The file, relative to the workspace when inside it (as the tool's diff names it).
    pub path: String,
    /// Lines added.
    pub added: u32,
    /// Lines removed.
    pub removed: u32,
}

/// A compaction boundary (FEATURES.md §E). Appended at the end of the ledger; requests then start
/// with its text, continue with the kept tail (`kept_from` up to the boundary) and then with what
/// follows the boundary (see [`LedgerItem::sendable`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compaction {
    /// The text that replaces everything before the kept tail, sent as a user message: the model's
    /// structured summary plus what Lathe re-attaches (the user's own messages verbatim, recently
    /// read files, the task list). Stored whole, so a resumed session sends the same bytes.
    pub summary: String,
    /// Ledger index of the first item kept verbatim after the summary (the boundary's own index
    /// when nothing is kept). The kept tail never starts between a tool call and its result.
    pub kept_from: usize,
}

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

#[cfg(test)]
#[path = "ledger_tests.rs"]
mod tests;
