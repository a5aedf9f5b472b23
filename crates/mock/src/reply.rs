//! The protocol-neutral answer the encoders turn into wire bytes.
//!
//! Scripted turns and replay turns are both lowered to a [`Reply`] (what the model says) plus a [`Delivery`]
//! (how it is sent: delays, a dropped connection). The encoders in `wire/` never look at scripts or cases.

/// What the model says in one response.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reply {
    /// Thinking text and signature (Anthropic thinking block, Chat `reasoning_content`, Responses reasoning).
    pub thinking: Option<ReplyThinking>,
    /// Text deltas, in order; empty = no text.
    pub text: Vec<String>,
    /// Tool calls, in order.
    pub calls: Vec<ReplyCall>,
    /// Why the model stopped.
    pub stop: Stop,
    /// Token usage as reported, no arithmetic.
    pub usage: Usage,
    /// Model name echoed in the response.
    pub model: String,
    /// An error event after the content (Anthropic `error`, Chat `{"error":…}`, Responses `response.failed`).
    pub stream_error: Option<StreamError>,
    /// End the events right after the content: no stop of a cut call, no finish / `message_delta` /
    /// `response.completed` (the server then breaks the connection).
    pub drop_after_content: bool,
    /// Tool calls without their index: Chat sends each call whole in one `tool_calls` delta with no
    /// `index`; Responses events carry no `output_index` (items are named by id only).
    pub omit_call_index: bool,
}

impl Reply {
    /// The full text.
    pub(crate) fn full_text(&self) -> String {
        self.text.concat()
    }
}

/// Thinking content.
#[derive(Debug, Clone, Default)]
pub(crate) struct ReplyThinking {
    /// Thinking deltas.
    pub text: Vec<String>,
    /// Signature (Anthropic) / encrypted content (Responses).
    pub signature: String,
}

/// One tool call.
#[derive(Debug, Clone)]
pub(crate) struct ReplyCall {
    /// Call id (`toolu_…`, `call_…`).
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Argument JSON text, in delta pieces.
    pub pieces: Vec<String>,
    /// False when the call is cut off: no block stop / `done` events.
    pub complete: bool,
}

impl ReplyCall {
    /// The full argument text.
    pub(crate) fn arguments(&self) -> String {
        self.pieces.concat()
    }

    /// The arguments as a JSON value (`{}` when empty or unparseable), for non-streaming bodies.
    pub(crate) fn input(&self) -> serde_json::Value {
        serde_json::from_str(&self.arguments())
            .unwrap_or_else(|_| serde_json::Value::Object(Default::default()))
    }
}

/// Normalised stop reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Stop {
    /// Anthropic `end_turn`, Chat `stop`, Responses completed.
    #[default]
    EndTurn,
    /// Anthropic `tool_use`, Chat `tool_calls`, Responses completed with function calls.
    ToolUse,
    /// Anthropic `max_tokens`, Chat `length`, Responses incomplete (`max_output_tokens`).
    MaxTokens,
}

/// Token usage (Anthropic naming).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_input_tokens: u64,
    pub cache_creation_input_tokens: u64,
}

/// An in-stream error event.
#[derive(Debug, Clone)]
pub(crate) struct StreamError {
    /// Error type, e.g. `overloaded_error`.
    pub kind: String,
    /// Message.
    pub message: String,
}

/// How a response is delivered.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Delivery {
    /// Delay before the response headers.
    pub first_byte_delay_ms: u64,
    /// Delay before every SSE event after the first.
    pub chunk_delay_ms: u64,
    /// Abort the connection after this many SSE events.
    pub drop_after_events: Option<usize>,
}

/// What a mode decided to send for one model request.
#[derive(Debug, Clone)]
pub(crate) enum Answer {
    /// A model response, streamed or as JSON depending on the request.
    Reply(Reply, Delivery),
    /// An HTTP error.
    Error(ErrorReply),
}

/// An error response decided by the mode: status, provider error type, message, extra headers, optional body.
#[derive(Debug, Clone)]
pub(crate) struct ErrorReply {
    pub status: u16,
    /// Provider error type; `None` = the provider's usual type for the status.
    pub kind: Option<String>,
    pub message: String,
    pub headers: Vec<(String, String)>,
    /// Overrides the provider error shape: JSON is served as JSON, a string verbatim.
    pub body: Option<serde_json::Value>,
    pub first_byte_delay_ms: u64,
}

impl ErrorReply {
    /// A 400 with a given type and message.
    pub(crate) fn bad_request(kind: &str, message: String) -> ErrorReply {
        ErrorReply {
            status: 400,
            kind: Some(kind.to_string()),
            message,
            headers: Vec::new(),
            body: None,
            first_byte_delay_ms: 0,
        }
    }
}

/// Splits `text` into `n` pieces of nearly equal length in characters (never splitting a character).
/// `n` is clamped to 1..=chars; an empty text gives one empty piece.
pub(crate) fn split_even(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    let n = n.clamp(1, chars.len());
    let base = chars.len() / n;
    let extra = chars.len() % n;
    let mut out = Vec::with_capacity(n);
    let mut at = 0;
    for i in 0..n {
        let len = base + usize::from(i < extra);
        out.push(chars[at..at + len].iter().collect());
        at += len;
    }
    out
}

/// Splits `text` into pieces of `min..=max` characters with a deterministic pseudo-random size sequence
/// seeded by `seed` (so a replayed turn always streams the same bytes). A text shorter than `min` is one
/// piece; an empty text gives no pieces.
pub(crate) fn split_varied(text: &str, min: usize, max: usize, seed: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let min = min.max(1);
    let max = max.max(min);
    let mut state: u64 =
        seed.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    let mut out = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        let span = (max - min + 1) as u64;
        let mut len = min + ((state >> 33) % span) as usize;
        let left = chars.len() - at;
        if left <= len || left - len < min {
            len = if left <= max { left } else { left - min };
        }
        out.push(chars[at..at + len].iter().collect());
        at += len;
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn split_even_keeps_text_and_count() {
        let p = split_even("héllo wörld", 3);
        assert_eq!(p.len(), 3);
        assert_eq!(p.concat(), "héllo wörld");
        assert_eq!(split_even("ab", 5), vec!["a", "b"]);
        assert_eq!(split_even("", 4), vec![""]);
    }

    #[test]
    fn split_varied_pieces_are_between_min_and_max() {
        let text: String = (0..500).map(|i| char::from(b'a' + (i % 26) as u8)).collect::<String>() + "🎉é";
        for seed in ["a", "toolu_1", "call_2"] {
            let pieces = split_varied(&text, 2, 40, seed);
            assert_eq!(pieces.concat(), text);
            for p in &pieces {
                let n = p.chars().count();
                assert!((2..=40).contains(&n), "piece of {n} chars");
            }
        }
        assert_eq!(split_varied("{}", 2, 40, "x"), vec!["{}"]);
        assert!(split_varied("", 2, 40, "x").is_empty());
    }
}
