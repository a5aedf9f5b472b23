//! The agent's totals: requests, tool calls, tokens and estimated cost over every run, with the
//! usage of the sub-agents its `task` calls start folded in (they share its budget).

use std::sync::Arc;

use lathe_protocol::{RunStats, Usage};
use lathe_provider::catalog::{ModelInfo, estimate_cost};

use crate::subagent::usage::UsageMeter;

/// Totals and what they are priced with.
pub(super) struct Totals {
    stats: RunStats,
    /// The model's prices, and whether its provider's input count includes cache reads.
    prices: ModelInfo,
    /// Usage of the sub-agents this agent's `task` calls start, folded into its totals.
    meter: Option<Arc<UsageMeter>>,
}

impl Totals {
    pub(super) fn new(prices: ModelInfo) -> Totals {
        Totals { stats: RunStats::default(), prices, meter: None }
    }

    pub(super) fn stats(&self) -> RunStats {
        self.stats
    }

    pub(super) fn set_prices(&mut self, prices: ModelInfo) {
        self.prices = prices;
    }

    pub(super) fn set_meter(&mut self, meter: Arc<UsageMeter>) {
        meter.set_parent_cost(self.stats.cost_usd);
        self.meter = Some(meter);
    }

    /// Whether the provider's input-token count includes cache reads (OpenAI-style usage).
    pub(super) fn input_includes_cache_reads(&self) -> bool {
        self.prices.input_includes_cache_reads
    }

    /// Counts a model request (`-1` takes back a request that is retried as the same turn).
    pub(super) fn count_turn(&mut self, change: i32) {
        self.stats.turns = self.stats.turns.saturating_add_signed(change);
    }

    pub(super) fn count_tool_call(&mut self) {
        self.stats.tool_calls += 1;
    }

    /// Adds a run's wall time in ms.
    pub(super) fn add_duration(&mut self, ms: u64) {
        self.stats.duration_ms += ms;
    }

    /// What was added since `before`.
    pub(super) fn since(&self, before: &RunStats) -> RunStats {
        let now = &self.stats;
        RunStats {
            turns: now.turns - before.turns,
            tool_calls: now.tool_calls - before.tool_calls,
            input_tokens: now.input_tokens - before.input_tokens,
            output_tokens: now.output_tokens - before.output_tokens,
            cache_read_tokens: now.cache_read_tokens - before.cache_read_tokens,
            cache_write_tokens: now.cache_write_tokens - before.cache_write_tokens,
            cost_usd: now.cost_usd - before.cost_usd,
            duration_ms: now.duration_ms - before.duration_ms,
        }
    }

    /// Adds one response's usage (tokens and estimated cost).
    pub(super) fn add(&mut self, usage: &Usage) {
        let tokens = |value: Option<u64>| value.unwrap_or(0);
        self.stats.input_tokens += tokens(usage.input_tokens);
        self.stats.output_tokens += tokens(usage.output_tokens);
        self.stats.cache_read_tokens += tokens(usage.cache_read_input_tokens);
        self.stats.cache_write_tokens += tokens(usage.cache_creation_input_tokens);
        self.stats.cost_usd += estimate_cost(&self.prices, usage);
        if let Some(meter) = &self.meter {
            meter.set_parent_cost(self.stats.cost_usd);
        }
    }

    /// Adds the tokens and cost of the sub-agents that ran since the last call; `false` when there
    /// were none.
    pub(super) fn fold_subagents(&mut self) -> bool {
        let Some(meter) = &self.meter else { return false };
        let extra = meter.take();
        if extra == RunStats::default() {
            return false;
        }
        self.stats.input_tokens += extra.input_tokens;
        self.stats.output_tokens += extra.output_tokens;
        self.stats.cache_read_tokens += extra.cache_read_tokens;
        self.stats.cache_write_tokens += extra.cache_write_tokens;
        self.stats.cost_usd += extra.cost_usd;
        meter.set_parent_cost(self.stats.cost_usd);
        true
    }
}
