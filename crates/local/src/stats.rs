//! Per-request figures of the local provider.

use serde::{Deserialize, Serialize};

/// What the last request cost. Times are wall-clock milliseconds on the inference thread.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct LocalStats {
    /// Tokens of the whole rendered prompt.
    pub prompt_tokens: u64,
    /// Prompt tokens found in the KV cache from earlier requests (not evaluated again).
    pub reused_tokens: u64,
    /// Prompt tokens actually evaluated (`prompt_tokens - reused_tokens`, at least 1).
    pub prompt_eval_tokens: u64,
    /// Time spent evaluating the prompt.
    pub prompt_eval_ms: f64,
    /// Tokens generated.
    pub generated_tokens: u64,
    /// Time spent generating (sampling and evaluating generated tokens).
    pub generation_ms: f64,
    /// Part of `generation_ms` spent choosing tokens (sampling and grammar checks).
    pub sampling_ms: f64,
    /// Tokens for which none of the most likely candidates fit the grammar, so the grammar was
    /// applied to the whole vocabulary.
    pub grammar_fallbacks: u64,
    /// From the start of the request to the first generated token.
    pub first_token_ms: f64,
    /// Requests served by this provider so far.
    pub requests: u64,
}

impl LocalStats {
    /// Prompt processing speed in tokens per second (0 when nothing was evaluated).
    pub fn prompt_tokens_per_second(&self) -> f64 {
        rate(self.prompt_eval_tokens, self.prompt_eval_ms)
    }

    /// Generation speed in tokens per second (0 when nothing was generated).
    pub fn generation_tokens_per_second(&self) -> f64 {
        rate(self.generated_tokens, self.generation_ms)
    }
}

fn rate(tokens: u64, ms: f64) -> f64 {
    if ms > 0.0 { tokens as f64 * 1000.0 / ms } else { 0.0 }
}
