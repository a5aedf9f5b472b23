//! The model catalog: context window, output limit, prices and capabilities of known models,
//! matched by the longest name prefix, with conservative defaults for unknown models and config
//! overrides merged on top.
//!
//! Prices are USD per million tokens from the providers' public pricing pages (Anthropic "Pricing",
//! OpenAI "API pricing", DeepSeek "Models & Pricing"); cache writes are Anthropic's 5-minute rate.
//! Qwen coder models are usually self-hosted (Ollama, vLLM), so they are priced at zero; override
//! the price in config when using a paid endpoint. Names are matched after dropping a router prefix
//! (`anthropic/claude-sonnet-4-5` on OpenRouter) and are case-insensitive.

use std::collections::BTreeMap;

use lathe_protocol::Usage;
use serde::{Deserialize, Serialize};

/// Prices in USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Price {
    /// Uncached input tokens.
    pub input: f64,
    /// Output tokens (reasoning included).
    pub output: f64,
    /// Input tokens read from the prompt cache.
    pub cache_read: f64,
    /// Input tokens written to the prompt cache (Anthropic only).
    pub cache_write: f64,
}

/// What Lathe knows about a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    /// The catalog entry that matched (the prefix), or `"default"`.
    pub family: String,
    /// Context window in tokens (input + output).
    pub context_window: u32,
    /// Largest `max_tokens` the model accepts.
    pub max_output_tokens: u32,
    /// Prices per million tokens.
    pub price: Price,
    /// Whether the model reasons (Anthropic extended thinking, OpenAI reasoning, DeepSeek R).
    pub supports_thinking: bool,
    /// Whether the model accepts images.
    pub supports_images: bool,
    /// Whether the provider's reported input token count already includes cache reads (OpenAI and
    /// DeepSeek: yes; Anthropic: no). Used by [`estimate_cost`].
    pub input_includes_cache_reads: bool,
}

/// Config overrides for one model (or prefix); every field is optional.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelInfoOverride {
    /// Context window in tokens.
    pub context_window: Option<u32>,
    /// Output limit in tokens.
    pub max_output_tokens: Option<u32>,
    /// Uncached input price per MTok.
    pub input_price: Option<f64>,
    /// Output price per MTok.
    pub output_price: Option<f64>,
    /// Cache-read price per MTok.
    pub cache_read_price: Option<f64>,
    /// Cache-write price per MTok.
    pub cache_write_price: Option<f64>,
    /// Reasoning support.
    pub supports_thinking: Option<bool>,
    /// Image support.
    pub supports_images: Option<bool>,
}

/// How usage is reported by a model family.
#[derive(Clone, Copy)]
enum Accounting {
    /// Anthropic: `input_tokens` excludes cache reads and writes.
    Separate,
    /// OpenAI-style: `prompt_tokens` includes cached tokens.
    Inclusive,
}

struct Entry {
    prefix: &'static str,
    context: u32,
    output: u32,
    price: [f64; 4],
    thinking: bool,
    images: bool,
    accounting: Accounting,
}

const fn claude(prefix: &'static str, output: u32, price: [f64; 4], thinking: bool) -> Entry {
    Entry {
        prefix,
        context: 200_000,
        output,
        price,
        thinking,
        images: true,
        accounting: Accounting::Separate,
    }
}

const fn openai(prefix: &'static str, context: u32, output: u32, price: [f64; 3], thinking: bool) -> Entry {
    Entry {
        prefix,
        context,
        output,
        price: [price[0], price[1], price[2], 0.0],
        thinking,
        images: true,
        accounting: Accounting::Inclusive,
    }
}

const fn open_weights(
    prefix: &'static str,
    context: u32,
    output: u32,
    price: [f64; 3],
    thinking: bool,
) -> Entry {
    Entry {
        prefix,
        context,
        output,
        price: [price[0], price[1], price[2], 0.0],
        thinking,
        images: false,
        accounting: Accounting::Inclusive,
    }
}

/// The catalog; the longest matching prefix wins.
const ENTRIES: &[Entry] = &[
    claude("claude-opus-4-5", 64_000, [5.0, 25.0, 0.5, 6.25], true),
    claude("claude-opus-4-1", 32_000, [15.0, 75.0, 1.5, 18.75], true),
    claude("claude-opus-4", 32_000, [15.0, 75.0, 1.5, 18.75], true),
    claude("claude-sonnet-4-5", 64_000, [3.0, 15.0, 0.3, 3.75], true),
    claude("claude-sonnet-4", 64_000, [3.0, 15.0, 0.3, 3.75], true),
    claude("claude-haiku-4-5", 64_000, [1.0, 5.0, 0.1, 1.25], true),
    claude("claude-3-7-sonnet", 64_000, [3.0, 15.0, 0.3, 3.75], true),
    claude("claude-3-5-sonnet", 8_192, [3.0, 15.0, 0.3, 3.75], false),
    claude("claude-3-5-haiku", 8_192, [0.8, 4.0, 0.08, 1.0], false),
    openai("gpt-4o-mini", 128_000, 16_384, [0.15, 0.6, 0.075], false),
    openai("gpt-4o", 128_000, 16_384, [2.5, 10.0, 1.25], false),
    openai("gpt-4.1-nano", 1_047_576, 32_768, [0.1, 0.4, 0.025], false),
    openai("gpt-4.1-mini", 1_047_576, 32_768, [0.4, 1.6, 0.1], false),
    openai("gpt-4.1", 1_047_576, 32_768, [2.0, 8.0, 0.5], false),
    openai("gpt-5-nano", 400_000, 128_000, [0.05, 0.4, 0.005], true),
    openai("gpt-5-mini", 400_000, 128_000, [0.25, 2.0, 0.025], true),
    openai("gpt-5", 400_000, 128_000, [1.25, 10.0, 0.125], true),
    openai("o3-mini", 200_000, 100_000, [1.1, 4.4, 0.55], true),
    openai("o3", 200_000, 100_000, [2.0, 8.0, 0.5], true),
    openai("o4-mini", 200_000, 100_000, [1.1, 4.4, 0.275], true),
    open_weights("deepseek-chat", 128_000, 8_192, [0.28, 0.42, 0.028], false),
    open_weights("deepseek-reasoner", 128_000, 65_536, [0.28, 0.42, 0.028], true),
    open_weights("qwen2.5-coder", 32_768, 8_192, [0.0, 0.0, 0.0], false),
    open_weights("qwen3-coder", 262_144, 65_536, [0.0, 0.0, 0.0], false),
];

/// Context window assumed for an unknown model.
pub const DEFAULT_CONTEXT_WINDOW: u32 = 32_000;
/// Output limit assumed for an unknown model.
pub const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 4_096;

/// The name without a router prefix, lower-case.
fn normalise(model: &str) -> String {
    model.rsplit('/').next().unwrap_or(model).trim().to_ascii_lowercase()
}

/// Looks a model up by the longest matching prefix; unknown models get conservative defaults
/// (32k context, 4096 output tokens, price 0, no thinking, no images).
pub fn lookup(model: &str) -> ModelInfo {
    let name = normalise(model);
    let entry =
        ENTRIES.iter().filter(|entry| name.starts_with(entry.prefix)).max_by_key(|entry| entry.prefix.len());
    match entry {
        Some(entry) => ModelInfo {
            family: entry.prefix.to_string(),
            context_window: entry.context,
            max_output_tokens: entry.output,
            price: Price {
                input: entry.price[0],
                output: entry.price[1],
                cache_read: entry.price[2],
                cache_write: entry.price[3],
            },
            supports_thinking: entry.thinking,
            supports_images: entry.images,
            input_includes_cache_reads: matches!(entry.accounting, Accounting::Inclusive),
        },
        None => ModelInfo {
            family: "default".to_string(),
            context_window: DEFAULT_CONTEXT_WINDOW,
            max_output_tokens: DEFAULT_MAX_OUTPUT_TOKENS,
            price: Price::default(),
            supports_thinking: false,
            supports_images: false,
            input_includes_cache_reads: true,
        },
    }
}

impl ModelInfo {
    /// Applies every set field of `patch`.
    pub fn apply(&mut self, patch: &ModelInfoOverride) {
        let set = |target: &mut f64, value: Option<f64>| {
            if let Some(value) = value {
                *target = value;
            }
        };
        if let Some(value) = patch.context_window {
            self.context_window = value;
        }
        if let Some(value) = patch.max_output_tokens {
            self.max_output_tokens = value;
        }
        set(&mut self.price.input, patch.input_price);
        set(&mut self.price.output, patch.output_price);
        set(&mut self.price.cache_read, patch.cache_read_price);
        set(&mut self.price.cache_write, patch.cache_write_price);
        if let Some(value) = patch.supports_thinking {
            self.supports_thinking = value;
        }
        if let Some(value) = patch.supports_images {
            self.supports_images = value;
        }
    }
}

/// [`lookup`], then the override whose key is the longest prefix of the model name (keys are
/// matched like catalog prefixes; an exact name is the longest prefix of itself).
pub fn lookup_with_overrides(model: &str, overrides: &BTreeMap<String, ModelInfoOverride>) -> ModelInfo {
    let mut info = lookup(model);
    let name = normalise(model);
    let full = model.trim().to_ascii_lowercase();
    let best = overrides
        .iter()
        .filter(|(key, _)| {
            let key = key.trim().to_ascii_lowercase();
            name.starts_with(&key) || full.starts_with(&key)
        })
        .max_by_key(|(key, _)| key.len());
    if let Some((_, patch)) = best {
        info.apply(patch);
    }
    info
}

/// Estimated cost of one response in USD. Missing usage fields count as zero. For models whose
/// input count includes cache reads (OpenAI, DeepSeek), the cached part is charged at the cache
/// price and only the rest at the input price.
pub fn estimate_cost(info: &ModelInfo, usage: &Usage) -> f64 {
    let input = usage.input_tokens.unwrap_or(0) as f64;
    let output = usage.output_tokens.unwrap_or(0) as f64;
    let cache_read = usage.cache_read_input_tokens.unwrap_or(0) as f64;
    let cache_write = usage.cache_creation_input_tokens.unwrap_or(0) as f64;
    let uncached = if info.input_includes_cache_reads { (input - cache_read).max(0.0) } else { input };
    (uncached * info.price.input
        + cache_read * info.price.cache_read
        + cache_write * info.price.cache_write
        + output * info.price.output)
        / 1_000_000.0
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn longest_prefix_wins() {
        assert_eq!(lookup("gpt-4o-mini-2024-07-18").family, "gpt-4o-mini");
        assert_eq!(lookup("gpt-4o-2024-08-06").family, "gpt-4o");
        assert_eq!(lookup("claude-sonnet-4-5-20250929").family, "claude-sonnet-4-5");
        assert_eq!(lookup("claude-sonnet-4-20250514").family, "claude-sonnet-4");
        assert_eq!(lookup("anthropic/claude-haiku-4-5").family, "claude-haiku-4-5");
        assert_eq!(lookup("qwen2.5-coder:7b").context_window, 32_768);
        assert_eq!(lookup("gpt-5.1-codex-max").family, "gpt-5");
        assert!(lookup("deepseek-reasoner").supports_thinking);
        assert!(!lookup("deepseek-chat").supports_thinking);
    }

    #[test]
    fn unknown_models_get_conservative_defaults() {
        let info = lookup("my-finetune-v2");
        assert_eq!(info.context_window, 32_000);
        assert_eq!(info.max_output_tokens, 4_096);
        assert_eq!(info.price, Price::default());
    }

    #[test]
    fn overrides_merge_field_by_field() {
        let overrides: BTreeMap<String, ModelInfoOverride> = [(
            "qwen3-coder".to_string(),
            ModelInfoOverride { input_price: Some(0.22), output_price: Some(0.95), ..Default::default() },
        )]
        .into();
        let info = lookup_with_overrides("qwen/qwen3-coder-480b", &overrides);
        assert_eq!(info.price.input, 0.22);
        assert_eq!(info.price.output, 0.95);
        assert_eq!(info.context_window, 262_144, "untouched fields keep the catalog value");
        let untouched = lookup_with_overrides("gpt-4o", &overrides);
        assert_eq!(untouched, lookup("gpt-4o"));
    }

    #[test]
    fn cost_respects_each_providers_accounting() {
        let usage = Usage {
            input_tokens: Some(1_000_000),
            output_tokens: Some(100_000),
            cache_read_input_tokens: Some(500_000),
            cache_creation_input_tokens: Some(200_000),
        };
        // Anthropic: input excludes cache reads: 1M×3 + 0.5M×0.3 + 0.2M×3.75 + 0.1M×15.
        let sonnet = estimate_cost(&lookup("claude-sonnet-4-5"), &usage);
        assert!((sonnet - (3.0 + 0.15 + 0.75 + 1.5)).abs() < 1e-9, "{sonnet}");
        // OpenAI: input includes the 0.5M cached: 0.5M×2.5 + 0.5M×1.25 + 0.1M×10.
        let gpt = estimate_cost(&lookup("gpt-4o"), &usage);
        assert!((gpt - (1.25 + 0.625 + 1.0)).abs() < 1e-9, "{gpt}");
        assert_eq!(estimate_cost(&lookup("gpt-4o"), &Usage::default()), 0.0);
    }
}
