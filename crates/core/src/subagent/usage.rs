//! The usage of the sub-agents a parent's `task` calls start, waiting to be folded into the
//! parent's totals and budget.

use std::sync::Mutex;

use lathe_protocol::RunStats;

/// Sub-agent usage waiting to be added to the parent's totals, and the parent's cost so far (for
/// the sub-agents' share of the budget).
#[derive(Debug, Default)]
pub struct UsageMeter {
    state: Mutex<MeterState>,
}

#[derive(Debug, Default)]
struct MeterState {
    pending: RunStats,
    parent_cost_usd: f64,
}

impl UsageMeter {
    fn lock(&self) -> std::sync::MutexGuard<'_, MeterState> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Records the parent's total cost so far (sub-agent costs already folded in).
    pub fn set_parent_cost(&self, cost_usd: f64) {
        self.lock().parent_cost_usd = cost_usd;
    }

    /// Adds a finished sub-agent's totals.
    pub fn add(&self, stats: RunStats) {
        let mut state = self.lock();
        state.pending.input_tokens += stats.input_tokens;
        state.pending.output_tokens += stats.output_tokens;
        state.pending.cache_read_tokens += stats.cache_read_tokens;
        state.pending.cache_write_tokens += stats.cache_write_tokens;
        state.pending.cost_usd += stats.cost_usd;
    }

    /// Takes the totals added since the last call.
    pub fn take(&self) -> RunStats {
        std::mem::take(&mut self.lock().pending)
    }

    /// Cost spent so far by the parent and every sub-agent, in US dollars.
    pub fn spent_usd(&self) -> f64 {
        let state = self.lock();
        state.parent_cost_usd + state.pending.cost_usd
    }
}
