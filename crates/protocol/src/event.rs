//! What a provider streams back for one request, normalised across wire protocols.
//!
//! A provider's stream is a sequence of [`ModelEvent`]s that ends with exactly one terminal event:
//! [`ModelEvent::Stop`] (the response completed) or [`ModelEvent::Error`] (it did not). Deltas
//! arrive in the order the model produced them; [`crate::Accumulator`] folds them into an
//! [`crate::AssistantMessage`].
//!
//! Stop reasons are normalised as in `shared/cassettes/README.md` §1: Anthropic `stop_reason`
//! values map to themselves (`model_context_window_exceeded` → `max_tokens`); Chat `stop` →
//! `end_turn`, `tool_calls`/`function_call` → `tool_use`, `length` → `max_tokens`, `content_filter`
//! → `refusal`; Responses `completed` → `tool_use` or `end_turn`, `incomplete` → `max_tokens` or
//! `refusal`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ProviderError;

/// One event of a model response stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ModelEvent {
    /// The response started; `model` is what the provider reports it is running.
    Started {
        /// The model name reported by the provider, if any.
        model: Option<String>,
    },
    /// A piece of assistant text.
    TextDelta {
        /// The text piece (whole UTF-8 characters).
        text: String,
    },
    /// A piece of refusal text (Chat `delta.refusal`, Responses `response.refusal.delta`).
    RefusalDelta {
        /// The text piece (whole UTF-8 characters), appended to the response's refusal text.
        text: String,
    },
    /// A piece of reasoning text. `index` separates reasoning blocks (Anthropic content block index,
    /// Responses output index); Chat reasoning is one block with index 0.
    ThinkingDelta {
        /// The reasoning block the piece belongs to (see above); pieces of one index concatenate.
        index: usize,
        /// The text piece (whole UTF-8 characters).
        text: String,
    },
    /// The opaque signature (Anthropic `signature_delta`, Responses `encrypted_content`) of the
    /// reasoning block `index`; pieces are concatenated.
    ThinkingSignature {
        /// The reasoning block the signature belongs to (same index as its `ThinkingDelta`s).
        index: usize,
        /// The signature piece: opaque base64 text, echoed back byte for byte, never shown.
        signature: String,
    },
    /// A whole redacted reasoning block (Anthropic `redacted_thinking.data`).
    RedactedThinking {
        /// The block's position among the response's reasoning blocks.
        index: usize,
        /// Opaque data, echoed unchanged.
        data: String,
    },
    /// A tool call began. `index` orders calls within the response.
    ToolCallStart {
        /// Call index within the response (0-based, model order).
        index: usize,
        /// The provider's call id (Anthropic `toolu_…`, Chat `call_…`, Responses `call_id`), which
        /// the matching `ToolResult` must carry.
        id: String,
        /// The tool's model-facing name, as in [`crate::ToolSpec::name`].
        name: String,
    },
    /// A piece of a tool call's JSON arguments.
    ToolCallDelta {
        /// The call the piece belongs to (the `index` of its `ToolCallStart`).
        index: usize,
        /// Raw JSON text piece.
        arguments: String,
    },
    /// A tool call's arguments are complete. `arguments` is `None` when the JSON was cut off or did
    /// not parse: the call is incomplete and must not run (`raw` holds what arrived).
    ToolCallEnd {
        /// The call that ended (the `index` of its `ToolCallStart`).
        index: usize,
        /// Parsed arguments (`""` parses as `{}`), or `None` when incomplete.
        arguments: Option<Value>,
        /// The concatenated raw argument text.
        raw: String,
    },
    /// Token usage so far; later events overlay earlier ones field by field.
    Usage(Usage),
    /// The request is being sent again after a transient failure. When the failed attempt had
    /// already streamed content (`RetryInfo::discards_partial`), everything it streamed is void:
    /// consumers drop it (the [`crate::Accumulator`] starts over) and the response is the retry's.
    Retry(RetryInfo),
    /// Terminal: the response completed.
    Stop {
        /// Why the model stopped, mapped from the provider's own value (Anthropic `stop_reason`,
        /// Chat `finish_reason`, Responses terminal event).
        reason: StopReason,
    },
    /// Terminal: the response failed. Content that arrived before it is still reported.
    Error {
        /// What went wrong, with the provider's message verbatim.
        error: ProviderError,
    },
}

/// A retry announcement the user sees ("rate limited, retrying in 4 s (2/4)").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetryInfo {
    /// 1-based number of this retry.
    pub attempt: u32,
    /// Retries allowed in total.
    pub max_retries: u32,
    /// Delay before the retry, in milliseconds.
    pub delay_ms: u64,
    /// The error that caused it.
    pub error: ProviderError,
    /// Whether the failed attempt had already streamed content, which is now discarded (a front
    /// end that showed it should withdraw it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub discards_partial: bool,
}

impl RetryInfo {
    /// `"rate limited, retrying in 4 s (2/4)"`; a retry that discards a partial response says
    /// `"overloaded mid-response, partial response discarded, retrying in 1 s (1/4)"`.
    pub fn describe(&self) -> String {
        let secs = self.delay_ms as f64 / 1000.0;
        let delay =
            if self.delay_ms.is_multiple_of(1000) { format!("{secs:.0} s") } else { format!("{secs:.1} s") };
        let partial = if self.discards_partial { " mid-response, partial response discarded" } else { "" };
        format!(
            "{}{partial}, retrying in {delay} ({}/{})",
            self.error.short_reason(),
            self.attempt,
            self.max_retries
        )
    }
}

/// Why a response ended, normalised across protocols.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model finished its answer.
    EndTurn,
    /// The model wants tools to run.
    ToolUse,
    /// The output-token limit (or the context window) cut the response.
    MaxTokens,
    /// A stop sequence matched.
    StopSequence,
    /// The model refused (Anthropic `refusal`, Chat `content_filter`, a refusal delta).
    Refusal,
    /// Anthropic `pause_turn`: a long server-side turn was paused and may be continued.
    PauseTurn,
    /// The response failed (see the error).
    Error,
    /// The user cancelled.
    Cancelled,
}

impl StopReason {
    /// The snake_case name used in manifests and JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::EndTurn => "end_turn",
            StopReason::ToolUse => "tool_use",
            StopReason::MaxTokens => "max_tokens",
            StopReason::StopSequence => "stop_sequence",
            StopReason::Refusal => "refusal",
            StopReason::PauseTurn => "pause_turn",
            StopReason::Error => "error",
            StopReason::Cancelled => "cancelled",
        }
    }
}

/// Token usage of one response. A field is `None` when the provider did not report it; the numbers
/// are the reported ones, no arithmetic (OpenAI's input includes cached tokens, Anthropic's excludes
/// them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens (Anthropic `input_tokens`, Chat `prompt_tokens`, Responses `input_tokens`).
    pub input_tokens: Option<u64>,
    /// Generated tokens, reasoning included (Anthropic and Responses `output_tokens`, Chat
    /// `completion_tokens`).
    pub output_tokens: Option<u64>,
    /// Prompt tokens served from the provider's cache (Anthropic `cache_read_input_tokens`, Chat
    /// `prompt_tokens_details.cached_tokens`, Responses `input_tokens_details.cached_tokens`).
    pub cache_read_input_tokens: Option<u64>,
    /// Prompt tokens written to the provider's cache (Anthropic `cache_creation_input_tokens`; the
    /// OpenAI protocols do not report it).
    pub cache_creation_input_tokens: Option<u64>,
}

impl Usage {
    /// Overlays every reported (non-`None`) field of `later` onto `self`.
    pub fn overlay(&mut self, later: &Usage) {
        if later.input_tokens.is_some() {
            self.input_tokens = later.input_tokens;
        }
        if later.output_tokens.is_some() {
            self.output_tokens = later.output_tokens;
        }
        if later.cache_read_input_tokens.is_some() {
            self.cache_read_input_tokens = later.cache_read_input_tokens;
        }
        if later.cache_creation_input_tokens.is_some() {
            self.cache_creation_input_tokens = later.cache_creation_input_tokens;
        }
    }

    /// Whether any field was reported.
    pub fn is_reported(&self) -> bool {
        *self != Usage::default()
    }
}
