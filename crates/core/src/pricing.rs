//! What a model costs: the catalog's prices, adjusted for how the provider reports usage (see
//! [`crate::profile::ModelProfile`]).

use lathe_protocol::Usage;
use lathe_provider::catalog::{self, ModelInfo};

use crate::profile::{Backend, ModelProfile};

/// The catalog entry for `model` as served by `provider`, a provider label as sessions record it
/// (`anthropic`, `openai`, `responses`, `local`; see [`Backend::from_label`]): OpenAI-style usage
/// counts cache reads inside the input tokens, Anthropic's does not; the local model is free.
pub fn model_info(model: &str, provider: &str) -> ModelInfo {
    ModelProfile::new(model, Backend::from_label(provider)).info
}

/// The estimated cost in US dollars of one response's `usage`.
pub fn cost(model: &str, provider: &str, usage: &Usage) -> f64 {
    catalog::estimate_cost(&model_info(model, provider), usage)
}
