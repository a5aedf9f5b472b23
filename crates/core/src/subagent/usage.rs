//! What an agent keeps for the sub-agents its `task` calls start: their usage, folded into its
//! totals and budget, and its own answer texts (a sub-agent's partial result).

use std::sync::Arc;

use lathe_protocol::{AgentEvent, LedgerItem, RunStats, Usage};
use tokio::sync::mpsc;

use super::task::UsageMeter;
use crate::agent::Agent;

impl Agent {
    /// Counts the usage that sub-agents report to `meter` in this agent's totals and budget.
    pub fn with_usage_meter(mut self, meter: Arc<UsageMeter>) -> Agent {
        meter.set_parent_cost(self.stats.cost_usd);
        self.meter = Some(meter);
        self
    }

    /// The text of every assistant message of the ledger so far, in order, blank ones left out.
    pub fn assistant_texts(&self) -> Vec<String> {
        self.ledger
            .iter()
            .filter_map(|item| match item {
                LedgerItem::Assistant(message) => Some(message.text()),
                LedgerItem::User(_)
                | LedgerItem::ToolResult(_)
                | LedgerItem::Compaction(_)
                | LedgerItem::Meta(_) => None,
            })
            .filter(|text| !text.trim().is_empty())
            .collect()
    }

    /// Adds the tokens and cost of the sub-agents that ran since the last call to the totals.
    pub(crate) fn fold_subagent_usage(&mut self, events: &mpsc::UnboundedSender<AgentEvent>) {
        let Some(meter) = &self.meter else { return };
        let extra = meter.take();
        if extra == RunStats::default() {
            return;
        }
        self.stats.input_tokens += extra.input_tokens;
        self.stats.output_tokens += extra.output_tokens;
        self.stats.cache_read_tokens += extra.cache_read_tokens;
        self.stats.cache_write_tokens += extra.cache_write_tokens;
        self.stats.cost_usd += extra.cost_usd;
        meter.set_parent_cost(self.stats.cost_usd);
        let _ = events.send(AgentEvent::Usage { last: Usage::default(), stats: self.stats, context: None });
    }
}
