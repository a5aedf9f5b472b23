//! The protocol-neutral view of a request's conversation, and assistant-turn counting.
//!
//! Each protocol's parser (`wire/*.rs`) maps its messages or input items to [`Message`]s, keeping the
//! provider's own index so error messages can name it (`messages.3`, `messages.[3].role`). An assistant turn
//! is a run of consecutive assistant-side messages (FORMAT.md §2: consecutive assistant messages count as one
//! turn; for Responses, consecutive `message`/`function_call`/`reasoning` items); `Other` messages (system,
//! developer, unknown items) are skipped by the counting.

/// Which side of the conversation a message is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// User text, tool results.
    User,
    /// Assistant text, tool calls, reasoning.
    Assistant,
    /// System or developer messages, unknown items.
    Other,
}

/// A tool result carried by a message.
#[derive(Debug, Clone)]
pub(crate) struct ToolResult {
    /// The call id it answers.
    pub call_id: String,
    /// Anthropic `is_error`, when present.
    pub is_error: Option<bool>,
    /// Index of the block within the message content (Anthropic), else 0.
    pub position: usize,
}

/// One message (or Responses input item).
#[derive(Debug, Clone)]
pub(crate) struct Message {
    /// Index in the provider's `messages` / `input` array.
    pub index: usize,
    /// Side.
    pub side: Side,
    /// Text content (user or assistant text).
    pub texts: Vec<String>,
    /// Tool call ids (assistant side).
    pub call_ids: Vec<String>,
    /// Tool results (user side).
    pub results: Vec<ToolResult>,
}

impl Message {
    /// An empty message.
    pub(crate) fn new(index: usize, side: Side) -> Message {
        Message { index, side, texts: Vec::new(), call_ids: Vec::new(), results: Vec::new() }
    }
}

/// A request's conversation.
#[derive(Debug, Clone, Default)]
pub(crate) struct Conversation {
    /// Messages in order.
    pub messages: Vec<Message>,
}

/// An assistant turn: positions (in `Conversation::messages`) of its first and last message.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TurnSpan {
    pub first: usize,
    pub last: usize,
}

impl Conversation {
    /// The assistant turns, in order.
    pub(crate) fn assistant_turns(&self) -> Vec<TurnSpan> {
        let mut spans: Vec<TurnSpan> = Vec::new();
        let mut open: Option<TurnSpan> = None;
        for (pos, m) in self.messages.iter().enumerate() {
            match m.side {
                Side::Assistant => match &mut open {
                    Some(span) => span.last = pos,
                    None => open = Some(TurnSpan { first: pos, last: pos }),
                },
                Side::User => {
                    if let Some(span) = open.take() {
                        spans.push(span);
                    }
                }
                Side::Other => {}
            }
        }
        spans.extend(open);
        spans
    }

    /// Call ids of the messages in `span`.
    pub(crate) fn call_ids(&self, span: TurnSpan) -> Vec<String> {
        self.messages[span.first..=span.last].iter().flat_map(|m| m.call_ids.iter().cloned()).collect()
    }

    /// User texts of the messages at positions `from..to`.
    pub(crate) fn user_texts(&self, from: usize, to: usize) -> Vec<&str> {
        self.messages[from..to.min(self.messages.len())]
            .iter()
            .filter(|m| m.side == Side::User)
            .flat_map(|m| m.texts.iter().map(String::as_str))
            .collect()
    }
}

/// Collapses every run of whitespace to one space and trims.
pub(crate) fn normalize_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
