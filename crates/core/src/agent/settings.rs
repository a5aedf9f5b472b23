//! What an agent is started with: the model, its limits and prices, the permission mode, context
//! management.

use lathe_policy::PermissionMode;
use lathe_protocol::ThinkingFormat;
use lathe_provider::catalog::ModelInfo;

use crate::context::ContextSettings;

/// Settings of the loop.
#[derive(Debug, Clone)]
pub struct AgentSettings {
    /// Model name sent in requests.
    pub model: String,
    /// Model requests allowed per user turn.
    pub max_turns: u32,
    /// Tool calls of one response that run; the rest are answered, not run (0 = unlimited; see
    /// [`crate::guards`]).
    pub max_calls_per_response: u32,
    /// Cost budget in US dollars for the session's runs; `None` = unlimited.
    pub max_cost_usd: Option<f64>,
    /// Output-token limit per response.
    pub max_output_tokens: u32,
    /// Permission mode.
    pub permission_mode: PermissionMode,
    /// Sampling temperature (`None` = provider default).
    pub temperature: Option<f32>,
    /// Ask the provider to place prompt-cache breakpoints.
    pub prompt_caching: bool,
    /// What the catalog knows about the model: prices for the cost estimate, and whether the
    /// provider's input count includes cache reads (OpenAI-style usage) or not (Anthropic).
    pub model_info: ModelInfo,
    /// Which format reasoning from this provider is tagged with.
    pub thinking_format: ThinkingFormat,
    /// Automatic compaction and pruning (the window is `model_info.context_window`).
    pub context: ContextSettings,
}

/// The loop's limits, from [`AgentSettings`].
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    /// Model requests allowed per user turn.
    pub max_turns: u32,
    /// Tool calls of one response that run (0 = unlimited).
    pub max_calls_per_response: u32,
    /// Cost budget in US dollars; `None` = unlimited.
    pub max_cost_usd: Option<f64>,
    /// Output-token limit per response.
    pub max_output_tokens: u32,
}
