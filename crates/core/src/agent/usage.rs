//! Usage meeting the loop: each response's tokens and cost added to the totals and reported, with
//! the context's fill, and the sub-agents' usage folded in after a response's calls.

use lathe_protocol::{AgentEvent, Usage};
use tokio::sync::mpsc;

use super::Agent;

impl Agent {
    /// Adds a turn's usage to the totals and reports them with the context's fill.
    pub(super) fn record_usage(&mut self, usage: &Usage, events: &mpsc::UnboundedSender<AgentEvent>) {
        self.totals.add(usage);
        let context = Some(self.context_usage());
        let _ = events.send(AgentEvent::Usage { last: *usage, stats: self.totals.stats(), context });
    }

    /// Adds a side request's usage (a summary request) to the totals and reports it.
    pub(super) fn record_side_usage(&mut self, usage: &Usage, events: &mpsc::UnboundedSender<AgentEvent>) {
        self.totals.add(usage);
        let _ = events.send(AgentEvent::Usage { last: *usage, stats: self.totals.stats(), context: None });
    }

    /// Adds the tokens and cost of auto mode's review requests since the last call to the totals.
    pub(super) fn fold_review_usage(&mut self, events: &mpsc::UnboundedSender<AgentEvent>) {
        let usage = self.controls.reviewer().map(|(reviewer, _)| reviewer.take_usage()).unwrap_or_default();
        for usage in usage {
            self.record_side_usage(&usage, events);
        }
    }

    /// Adds the tokens and cost of the sub-agents that ran since the last call to the totals.
    pub(super) fn fold_subagent_usage(&mut self, events: &mpsc::UnboundedSender<AgentEvent>) {
        if self.totals.fold_subagents() {
            let stats = self.totals.stats();
            let _ = events.send(AgentEvent::Usage { last: Usage::default(), stats, context: None });
        }
    }
}
