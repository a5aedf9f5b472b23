//! The agent's ledger and what keeps it valid and saved: the session file it is appended to, the
//! file history kept for `/rewind`, the tool-call ids already used, and the warnings not yet sent.
//!
//! A session file that cannot be written never stops a run: the first failed append becomes a
//! warning (the session is incomplete from there, and file history stops with it) and the ledger
//! goes on in memory.

use std::collections::HashSet;

use lathe_protocol::{AgentEvent, AssistantMessage, Content, LedgerItem, UserMessage, UserOrigin};
use tokio::sync::mpsc;

use crate::exec::interrupted;
use crate::history::FileHistory;
use crate::session::SessionWriter;

/// What the injected continuation request says.
pub(super) const CONTINUE_TEXT: &str = "Your previous response was cut off by the output token limit. Continue exactly where you stopped, \
     without repeating what you already wrote.";

/// Whether `message` is the continuation request Lathe sends after an answer cut by the
/// output-token limit.
pub(super) fn is_continuation(message: &UserMessage) -> bool {
    message.origin == UserOrigin::Injected
        && matches!(message.content.as_slice(), [Content::Text { text }] if text == CONTINUE_TEXT)
}

/// The ledger with its session file, file history, used call ids and pending warnings.
pub(super) struct Transcript {
    items: Vec<LedgerItem>,
    session: Option<SessionWriter>,
    history: Option<FileHistory>,
    /// Every tool-call id in the ledger, so a repeated or empty id from the model can be replaced
    /// before it breaks pairing (providers reject duplicate ids).
    call_ids: HashSet<String>,
    /// Warnings not yet sent to the front end (a failed append, a file that could not be saved).
    warnings: Vec<String>,
}

impl Transcript {
    /// `items`: empty for a new session or the loaded items of a resumed one.
    pub(super) fn new(items: Vec<LedgerItem>, session: Option<SessionWriter>) -> Transcript {
        let call_ids = items
            .iter()
            .filter_map(|item| match item {
                LedgerItem::Assistant(message) => Some(message.tool_calls().map(|call| call.id.clone())),
                LedgerItem::User(_)
                | LedgerItem::ToolResult(_)
                | LedgerItem::Compaction(_)
                | LedgerItem::Meta(_) => None,
            })
            .flatten()
            .collect();
        Transcript { items, session, history: None, call_ids, warnings: Vec::new() }
    }

    /// The ledger so far.
    pub(super) fn items(&self) -> &[LedgerItem] {
        &self.items
    }

    /// Where file snapshots go; `None` when nothing is saved.
    pub(super) fn history(&self) -> Option<&FileHistory> {
        self.history.as_ref()
    }

    pub(super) fn set_history(&mut self, history: FileHistory) {
        self.history = Some(history);
    }

    /// Appends `item` to the ledger and the session file (handed to the OS before returning).
    pub(super) fn append(&mut self, item: LedgerItem) {
        if let Some(session) = &mut self.session
            && let Err(error) = session.append(&item)
        {
            self.warnings.push(format!(
                "{error}; the session is incomplete from here: nothing more is saved (everything before is kept)"
            ));
            self.session = None;
            self.history = None;
        }
        self.items.push(item);
    }

    /// Drops every item from `len` on (a rewind; the session file records the rewind itself).
    pub(super) fn truncate(&mut self, len: usize) {
        self.items.truncate(len);
    }

    /// Makes the session file durable (`fsync`); a failure becomes a warning.
    pub(super) fn sync(&mut self) {
        if let Some(session) = &self.session
            && let Err(error) = session.sync()
        {
            self.warnings.push(format!("{error}; the last turn may not be on disk"));
        }
    }

    /// Keeps `message` for the next [`Transcript::send_warnings`].
    pub(super) fn warn(&mut self, message: String) {
        self.warnings.push(message);
    }

    /// Sends the warnings collected since the last call.
    pub(super) fn send_warnings(&mut self, events: &mpsc::UnboundedSender<AgentEvent>) {
        for message in self.warnings.drain(..) {
            let _ = events.send(AgentEvent::Warning { message });
        }
    }

    /// The results the pairing guard (ARCHITECTURE.md §4.1) must add: an `Interrupted` result,
    /// saying `why`, for every call still without one.
    pub(super) fn unpaired_results(&self, why: &str) -> Vec<LedgerItem> {
        LedgerItem::unpaired_calls(&self.items)
            .iter()
            .map(|call| LedgerItem::ToolResult(interrupted(call, why).result))
            .collect()
    }

    /// Gives every tool call of `message` an id not used before in this session (an empty or
    /// repeated id from the model is replaced by `<id>_<n>`), and records the ids.
    pub(super) fn unique_call_ids(&mut self, message: &mut AssistantMessage) {
        for content in &mut message.content {
            let Content::ToolCall(call) = content else { continue };
            if call.id.is_empty() || self.call_ids.contains(&call.id) {
                let base = if call.id.is_empty() { "call".to_string() } else { call.id.clone() };
                let mut n = self.call_ids.len() + 1;
                while self.call_ids.contains(&format!("{base}_{n}")) {
                    n += 1;
                }
                call.id = format!("{base}_{n}");
            }
            self.call_ids.insert(call.id.clone());
        }
    }

    /// The final answer: the last assistant message's text, preceded by the parts of it that were
    /// cut by the output-token limit and continued.
    pub(super) fn last_assistant_text(&self) -> String {
        let mut parts = Vec::new();
        let mut items = self.items.iter().rev().peekable();
        while let Some(item) = items.next() {
            match item {
                LedgerItem::Assistant(message) => {
                    parts.push(message.text());
                    // Keep walking back only across a continuation request.
                    match items.peek() {
                        Some(LedgerItem::User(user)) if is_continuation(user) => {
                            items.next();
                        }
                        _ => break,
                    }
                }
                LedgerItem::User(_) => break,
                LedgerItem::ToolResult(_) | LedgerItem::Compaction(_) | LedgerItem::Meta(_) => {
                    if !parts.is_empty() {
                        break;
                    }
                }
            }
        }
        parts.reverse();
        parts.concat()
    }

    /// The text of every assistant message so far, in order, blank ones left out.
    pub(super) fn assistant_texts(&self) -> Vec<String> {
        self.items
            .iter()
            .filter_map(|item| match item {
                LedgerItem::Assistant(message) => Some(message.text()),
                LedgerItem::User(_)
                | LedgerItem::ToolResult(_)
                | LedgerItem::Compaction(_)
                | LedgerItem::Meta(_) => None,
            })
            .filter(|text| !text.trim().is_empty())
            .collect()
    }

    /// Whether this injected message is among what the next request sends (a compaction that
    /// summarized it away lets it be added again).
    pub(super) fn sends_injected(&self, message: &str) -> bool {
        LedgerItem::sendable(&self.items).any(|item| match item {
            LedgerItem::User(user) if user.origin == UserOrigin::Injected => {
                matches!(user.content.as_slice(), [Content::Text { text }] if text == message)
            }
            _ => false,
        })
    }

    /// Whether the conversation has a user message yet.
    pub(super) fn has_user_message(&self) -> bool {
        self.items.iter().any(|item| matches!(item, LedgerItem::User(_)))
    }

    /// Whether a model response is in the session.
    pub(super) fn has_response(&self) -> bool {
        self.items.iter().any(|item| matches!(item, LedgerItem::Assistant(_)))
    }
}
