//! One model request, provider-neutral. Adapters encode it to their wire format; nothing here is
//! protocol-specific.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ledger::LedgerItem;

/// A complete request to a model.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ModelRequest {
    /// Model name as the provider knows it (`claude-sonnet-4-5`, `gpt-4o`, `deepseek-chat`).
    pub model: String,
    /// System prompt blocks, in order. The first blocks should be the byte-stable static core so
    /// prompt caches hit.
    pub system: Vec<SystemBlock>,
    /// The conversation: normally `conversation::request_messages(&ledger)`. `Meta` items are skipped by
    /// every encoder; a `Compaction` item is sent as a user message carrying its summary.
    pub messages: Vec<LedgerItem>,
    /// The tools the model may call.
    pub tools: Vec<ToolSpec>,
    /// Output-token limit for this response.
    pub max_output_tokens: u32,
    /// Sampling temperature; `None` leaves the provider default.
    pub temperature: Option<f32>,
    /// Nucleus sampling; `None` leaves the provider default.
    pub top_p: Option<f32>,
    /// Extended thinking / reasoning effort; `None` disables it.
    pub thinking: Option<ThinkingConfig>,
    /// Whether the provider should place prompt-cache breakpoints (Anthropic `cache_control`).
    /// They are placed on a copy of the encoded request, never in the ledger.
    pub prompt_caching: bool,
    /// A JSON Schema the answer must follow (structured output), for a request whose answer a
    /// program reads (the goal evaluator's verdict). Adapters whose API takes one send it (Chat
    /// Completions `response_format`, Responses `text.format`); the others leave it to the prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_format: Option<ResponseFormat>,
}

/// The shape a structured answer must have ([`ModelRequest::response_format`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseFormat {
    /// A short name for the schema (`goal_verdict`; letters, digits, `_` and `-`).
    pub name: String,
    /// JSON Schema of the answer: an object whose properties are all required and which allows no
    /// others (what OpenAI's strict mode demands).
    pub schema: Value,
}

/// One block of the system prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SystemBlock {
    /// The text.
    pub text: String,
    /// Whether this block ends a cache-stable prefix (a good place for a cache breakpoint).
    pub cache_breakpoint: bool,
}

/// A tool advertised to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Model-facing name (`read_file`, `mcp__github__create_issue`).
    pub name: String,
    /// What the tool does and when to use it.
    pub description: String,
    /// JSON Schema (draft 2020-12 subset) of the arguments object.
    pub input_schema: Value,
}

/// Reasoning settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThinkingConfig {
    /// Anthropic `thinking.budget_tokens`; mapped to a reasoning effort for OpenAI protocols
    /// (< 4 096 → low, < 16 384 → medium, otherwise high).
    pub budget_tokens: u32,
}
