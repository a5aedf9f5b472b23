//! What a model costs: the catalog's prices, adjusted for how the provider reports usage.

use lathe_protocol::Usage;
use lathe_provider::catalog::{self, ModelInfo, Price};

/// The catalog entry for `model` as served by `provider` (a provider label: `anthropic`, `openai`,
/// `responses`, `local`). OpenAI-style usage counts cache reads inside the input tokens, Anthropic's
/// does not; the local model is free.
pub fn model_info(model: &str, provider: &str) -> ModelInfo {
    let mut info = catalog::lookup(model);
    info.input_includes_cache_reads = provider != "anthropic";
    if provider == "local" {
        info.price = Price::default();
    }
    info
}

/// The estimated cost in US dollars of one response's `usage`.
pub fn cost(model: &str, provider: &str, usage: &Usage) -> f64 {
    catalog::estimate_cost(&model_info(model, provider), usage)
}
