//! Context management (FEATURES.md §E): keeping every request inside the model's context window
//! without losing the goal.
//!
//! The [`ContextManager`] owns the accounting and decides; the agent loop calls it at two points —
//! before each request ([`ContextManager::decide`]) and when a provider answers that the prompt is
//! too long — and carries out what it decides, appending the result to the ledger. Layers,
//! cheapest first:
//! 1. per-result caps and spill to disk (in `lathe-tools`, before a result reaches the ledger);
//! 2. [`prune`]: above [`Budget::prune_at`], old outputs of re-readable tools are sent as one-line
//!    stubs (a `context_pruned` meta item records which);
//! 3. [`compact`]: above [`Budget::compact_at`] (or on a "prompt too long" error, or on
//!    `/compact`), a summary boundary replaces everything but a recent tail.
//!
//! Accounting ([`budget`]): each response's reported input count anchors the size of the next
//! request; what was appended since is estimated (bytes / 4, scaled by how far off the estimate
//! was for the anchored request). The ledger stays append-only; what is sent is
//! [`ContextManager::messages`]: the items after the last boundary, with stubs for pruned results.

pub mod budget;
pub mod compact;
pub mod fixed;
pub mod prune;

use std::collections::HashSet;

use lathe_protocol::{
    ContextItem, ContextUsage, LedgerItem, Meta, SystemBlock, ToolSpec, Usage, conversation,
};

pub use budget::Budget;
pub use compact::SUMMARY_REQUEST_MARKER;

/// How many compactions may fail in a row before the run stops.
pub const MAX_FAILED_COMPACTIONS: u32 = 3;

/// How a compaction ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompactOutcome {
    /// A boundary was appended.
    Compacted,
    /// Nothing before the recent tail to summarize.
    NothingToCompact,
    /// Compaction failed [`MAX_FAILED_COMPACTIONS`] times in a row; the message says why.
    Exhausted(String),
    /// The user cancelled during the summary request.
    Cancelled,
}

/// The user's context settings (`auto_compact`, `context_pruning` in `config.toml`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextSettings {
    /// Compact automatically before a request would not fit, and after a "prompt too long" error.
    /// Off: requests are sent as they are and such an error stops the run.
    pub auto_compact: bool,
    /// Replace old outputs of re-readable tools with stubs above 60 % of the window.
    pub pruning: bool,
}

impl Default for ContextSettings {
    fn default() -> ContextSettings {
        ContextSettings { auto_compact: true, pruning: true }
    }
}

/// What to do before the next request.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Send it.
    Send,
    /// Append this `context_pruned` meta item, then decide again.
    Prune(Meta),
    /// Compact, then decide again.
    Compact,
    /// The request cannot be sent and compaction cannot help (the fixed part alone is over the
    /// threshold): stop, saying why.
    TooLarge(String),
}

/// The accounting of one session's context.
#[derive(Debug, Clone)]
pub struct ContextManager {
    budget: Budget,
    settings: ContextSettings,
    /// Estimated tokens of each ledger item (the ledger is append-only, so these never change).
    tokens: Vec<u64>,
    /// System prompt and tool schemas.
    fixed: u64,
    /// What `fixed` is made of.
    fixed_parts: fixed::FixedParts,
    pruned: HashSet<String>,
    anchor: Option<budget::Anchor>,
    /// Bumped whenever pruning or compaction changes what is sent for items already sent.
    generation: u64,
    /// Estimate and generation of the last request sent.
    last_sent: Option<(u64, u64)>,
    /// Compactions that failed (or did not help) since the last successful response.
    failures: u32,
    /// A compaction happened since the last successful response.
    compacted: bool,
}

impl ContextManager {
    /// A manager for a session whose requests carry `system` and `tools`, starting from `ledger`.
    pub fn new(
        budget: Budget,
        settings: ContextSettings,
        system: &[SystemBlock],
        tools: &[ToolSpec],
        ledger: &[LedgerItem],
    ) -> ContextManager {
        let fixed_parts = fixed::FixedParts::of(system, tools);
        let mut manager = ContextManager {
            budget,
            settings,
            tokens: Vec::with_capacity(ledger.len()),
            fixed: fixed_parts.total(),
            fixed_parts,
            pruned: HashSet::new(),
            anchor: None,
            generation: 0,
            last_sent: None,
            failures: 0,
            compacted: false,
        };
        manager.sync(ledger);
        manager
    }

    /// Counts `system` and `tools` as the fixed part of every request from now on (tools were
    /// added to the list: deferred ones loaded).
    pub fn set_fixed(&mut self, system: &[SystemBlock], tools: &[ToolSpec]) {
        self.fixed_parts = fixed::FixedParts::of(system, tools);
        self.fixed = self.fixed_parts.total();
    }

    /// The thresholds.
    pub fn budget(&self) -> &Budget {
        &self.budget
    }

    /// Uses new thresholds (the model changed); the anchor no longer applies.
    pub fn set_budget(&mut self, budget: Budget) {
        self.budget = budget;
        self.anchor = None;
    }

    /// The settings.
    pub fn settings(&self) -> ContextSettings {
        self.settings
    }

    /// Takes note of items appended to `ledger` since the last call.
    pub fn sync(&mut self, ledger: &[LedgerItem]) {
        for item in &ledger[self.tokens.len().min(ledger.len())..] {
            self.tokens.push(budget::item_tokens(item));
            match item {
                LedgerItem::Meta(Meta::ContextPruned { call_ids, .. }) => {
                    self.pruned.extend(call_ids.iter().cloned());
                    self.generation += 1;
                }
                LedgerItem::Compaction(_) => {
                    self.generation += 1;
                    self.compacted = true;
                }
                LedgerItem::Meta(_)
                | LedgerItem::User(_)
                | LedgerItem::Assistant(_)
                | LedgerItem::ToolResult(_) => {}
            }
        }
    }

    /// Ledger indices of the items the next request sends, in order.
    pub fn view(&self, ledger: &[LedgerItem]) -> Vec<usize> {
        conversation::request_entries(ledger).into_iter().map(|(index, _)| index).collect()
    }

    /// The messages of the next request: the sent items, pruned results as their stubs.
    pub fn messages(&self, ledger: &[LedgerItem]) -> Vec<LedgerItem> {
        self.render(ledger, &self.view(ledger))
    }

    fn render(&self, ledger: &[LedgerItem], view: &[usize]) -> Vec<LedgerItem> {
        let calls = if self.pruned.is_empty() { Default::default() } else { prune::calls_by_id(ledger) };
        let images: std::collections::HashMap<usize, &str> = conversation::request_entries(ledger)
            .into_iter()
            .filter_map(|(index, reason)| Some((index, reason?)))
            .collect();
        view.iter()
            .map(|&index| match &ledger[index] {
                LedgerItem::ToolResult(result) if self.pruned.contains(&result.call_id) => {
                    LedgerItem::ToolResult(prune::stubbed(
                        calls.get(result.call_id.as_str()).copied(),
                        result,
                    ))
                }
                item => conversation::render(item, images.get(&index).copied()),
            })
            .collect()
    }

    /// Estimated tokens of each item as sent (stubs for pruned results), by ledger index.
    fn sent_tokens(&self, ledger: &[LedgerItem]) -> Vec<u64> {
        let mut tokens = self.tokens.clone();
        if !self.pruned.is_empty() {
            let calls = prune::calls_by_id(ledger);
            for (index, item) in ledger.iter().enumerate() {
                if let LedgerItem::ToolResult(result) = item
                    && self.pruned.contains(&result.call_id)
                {
                    let stub = prune::stubbed(calls.get(result.call_id.as_str()).copied(), result);
                    tokens[index] = budget::item_tokens(&LedgerItem::ToolResult(stub));
                }
            }
        }
        tokens
    }

    /// The raw estimate of the next request, in tokens.
    pub fn estimate(&self, ledger: &[LedgerItem]) -> u64 {
        let tokens = self.sent_tokens(ledger);
        self.fixed + self.view(ledger).iter().map(|&index| tokens[index]).sum::<u64>()
    }

    /// The size of the next request, anchored on the last reported usage.
    pub fn used(&self, ledger: &[LedgerItem]) -> u64 {
        let estimate = self.estimate(ledger);
        match &self.anchor {
            Some(anchor) => anchor.tokens(estimate, self.generation),
            None => estimate,
        }
    }

    /// What to do before the next request.
    pub fn decide(&self, ledger: &[LedgerItem]) -> Decision {
        let used = self.used(ledger);
        if self.settings.pruning && used > self.budget.prune_at {
            let view = self.view(ledger);
            let tokens = self.sent_tokens(ledger);
            let ids = prune::candidates(ledger, &view, &tokens, &self.pruned, self.budget.protected);
            if !ids.is_empty() {
                let mut after = self.clone();
                after.pruned.extend(ids.iter().cloned());
                after.generation += 1;
                let tokens_after = after.used(ledger);
                // Stubs pile up too: once pruning cannot win lasting room (a quarter of the
                // threshold), it would run on every turn and break the prompt cache each time;
                // compaction is the right layer then.
                if tokens_after <= self.budget.prune_at * 3 / 4 {
                    return Decision::Prune(Meta::ContextPruned {
                        call_ids: ids,
                        tokens_before: used,
                        tokens_after,
                    });
                }
            }
        }
        if self.fixed_parts.over_threshold(&self.budget) {
            // Compaction summarizes the conversation, never the fixed part: it cannot help.
            if used + self.budget.output_reserve > self.budget.window {
                return Decision::TooLarge(self.fixed_parts.too_large(&self.budget, used));
            }
            return Decision::Send;
        }
        if self.settings.auto_compact && used > self.budget.compact_at {
            return Decision::Compact;
        }
        Decision::Send
    }

    /// Notes that a request built from `ledger` is being sent.
    pub fn sending(&mut self, ledger: &[LedgerItem]) {
        self.last_sent = Some((self.estimate(ledger), self.generation));
    }

    /// Takes the usage reported for the last request sent as the new anchor, and notes the
    /// response as a success (the failed-compaction count restarts).
    pub fn answered(&mut self, usage: &Usage, input_includes_cache_reads: bool) {
        self.failures = 0;
        self.compacted = false;
        if let (Some(reported), Some((estimated, generation))) =
            (budget::reported_input(usage, input_includes_cache_reads), self.last_sent)
        {
            self.anchor = Some(budget::Anchor { reported, estimated, generation });
        }
    }

    /// Counts a failed (or useless) compaction; true when the run must stop.
    pub fn failed(&mut self) -> bool {
        self.failures += 1;
        self.failures >= MAX_FAILED_COMPACTIONS
    }

    /// Compactions failed since the last successful response.
    pub fn failures(&self) -> u32 {
        self.failures
    }

    /// Whether a compaction happened since the last successful response.
    pub fn compacted_since_answer(&self) -> bool {
        self.compacted
    }

    /// Plans a compaction of `ledger`; `input_cap` bounds the summary request's input (tokens).
    pub fn plan(
        &self,
        ledger: &[LedgerItem],
        input_cap: u64,
    ) -> (Vec<usize>, Vec<LedgerItem>, compact::Plan) {
        let view = self.view(ledger);
        let tokens = self.sent_tokens(ledger);
        let plan = compact::plan(ledger, &view, &tokens, self.fixed, &self.budget, input_cap);
        let sent = self.render(ledger, &view);
        (view, sent, plan)
    }

    /// How full the window is, with the largest items of the next request.
    pub fn usage(&self, ledger: &[LedgerItem], system: &[SystemBlock], tools: &[ToolSpec]) -> ContextUsage {
        let used = self.used(ledger);
        let tokens = self.sent_tokens(ledger);
        let calls = prune::calls_by_id(ledger);
        let mut items: Vec<ContextItem> = self
            .view(ledger)
            .into_iter()
            .map(|index| ContextItem { label: label(&ledger[index], &calls), tokens: tokens[index] })
            .collect();
        items.push(ContextItem { label: "system prompt".into(), tokens: budget::system_tokens(system) });
        items.push(ContextItem { label: "tool schemas".into(), tokens: budget::tools_tokens(tools) });
        items.sort_by_key(|item| std::cmp::Reverse(item.tokens));
        items.truncate(5);
        ContextUsage {
            used_tokens: used,
            window_tokens: self.budget.window,
            percent: (used as f64 * 1000.0 / self.budget.window as f64).round() / 10.0,
            largest: items,
        }
    }
}

fn label(item: &LedgerItem, calls: &std::collections::HashMap<&str, &lathe_protocol::ToolCall>) -> String {
    match item {
        LedgerItem::User(_) => "user message".into(),
        LedgerItem::Assistant(_) => "assistant message".into(),
        LedgerItem::Compaction(_) => "compaction summary".into(),
        LedgerItem::Meta(_) => "meta".into(),
        LedgerItem::ToolResult(result) => match calls.get(result.call_id.as_str()) {
            Some(call) => {
                let summary = result
                    .receipt
                    .as_ref()
                    .map(|receipt| receipt.summary.clone())
                    .filter(|summary| !summary.is_empty())
                    .unwrap_or_else(|| call.arguments.to_string());
                let summary: String = summary.chars().take(80).collect();
                format!("{} {summary}", call.name)
            }
            None => "tool result".into(),
        },
    }
}
