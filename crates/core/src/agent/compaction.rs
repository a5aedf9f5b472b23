//! Carrying out the [`ContextManager`](crate::context::ContextManager)'s decisions on an [`Agent`]: appending
//! the pruning record, running a compaction (summary request, boundary), and recovering from a
//! "prompt too long" error. Every step is appended to the ledger and announced as an event.

use lathe_protocol::{AgentEvent, CompactionTrigger, LedgerItem, Meta, ProviderError, StopCause};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Agent;
use crate::context::compact::{self, Reattached};
use crate::context::{CompactOutcome, Decision, MAX_FAILED_COMPACTIONS};

impl Agent {
    /// Before a request: prunes and compacts until the request fits. Returns the stop cause when
    /// it cannot be made to fit.
    pub(super) async fn fit_context(
        &mut self,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> Option<StopCause> {
        loop {
            match self.context.decide(self.transcript.items()) {
                Decision::Send => return None,
                Decision::TooLarge(detail) => return Some(StopCause::ContextExhausted { detail }),
                Decision::Prune(meta) => {
                    if let Meta::ContextPruned { call_ids, tokens_before, tokens_after } = &meta {
                        let _ = events.send(AgentEvent::ContextPruned {
                            results: call_ids.len() as u32,
                            tokens_before: *tokens_before,
                            tokens_after: *tokens_after,
                        });
                    }
                    self.append(LedgerItem::Meta(meta));
                }
                Decision::Compact => {
                    match self.compact(CompactionTrigger::Auto, None, events, cancel).await {
                        CompactOutcome::Compacted => {
                            // A compaction that leaves the request too big did not help.
                            if self.context.used(self.transcript.items()) > self.context.budget().compact_at
                                && self.context.failed()
                            {
                                return Some(
                                    self.exhausted("the summary and the kept tail are still too big"),
                                );
                            }
                        }
                        CompactOutcome::Exhausted(detail) => {
                            return Some(StopCause::ContextExhausted { detail });
                        }
                        CompactOutcome::NothingToCompact | CompactOutcome::Cancelled => return None,
                    }
                }
            }
        }
    }

    /// After the provider said the prompt is too long: compacts so the request can be retried once.
    /// `None` means retry; otherwise the run stops with the cause.
    pub(super) async fn recover_from_overflow(
        &mut self,
        error: &ProviderError,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> Option<StopCause> {
        // Too long again right after a compaction: that compaction did not help.
        if self.context.compacted_since_answer() && self.context.failed() {
            return Some(self.exhausted(&error.to_string()));
        }
        match self.compact(CompactionTrigger::Overflow, None, events, cancel).await {
            CompactOutcome::Compacted => None,
            CompactOutcome::Exhausted(detail) => Some(StopCause::ContextExhausted { detail }),
            CompactOutcome::NothingToCompact => Some(StopCause::ContextExhausted {
                detail: format!(
                    "{error}: the request does not fit the model's context window of {} tokens and there is \
                     nothing to compact; send a shorter prompt, or set context_window if the model accepts more",
                    self.context.budget().window
                ),
            }),
            CompactOutcome::Cancelled => Some(StopCause::Cancelled),
        }
    }

    /// Compacts the conversation now (`/compact [focus]`), whatever its size.
    pub async fn compact_now(
        &mut self,
        focus: Option<&str>,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> CompactOutcome {
        self.repair_pairing("the run ended before this call completed");
        self.compact(CompactionTrigger::Manual, focus, events, cancel).await
    }

    fn exhausted(&self, last_error: &str) -> StopCause {
        StopCause::ContextExhausted { detail: self.exhausted_detail(last_error) }
    }

    fn exhausted_detail(&self, last_error: &str) -> String {
        format!(
            "the conversation does not fit the model's context window of {} tokens: compaction failed {} times in \
             a row (last: {last_error}); start a new session, or set context_window if the model accepts more",
            self.context.budget().window,
            MAX_FAILED_COMPACTIONS
        )
    }

    /// Summarizes everything before the recent tail and appends the boundary (PreCompact hooks run
    /// first, once, when there is something to summarize); retries a failed summary request (leaving out more of the oldest rounds after a "too long" answer) until
    /// [`MAX_FAILED_COMPACTIONS`] failures in a row.
    pub(super) async fn compact(
        &mut self,
        trigger: CompactionTrigger,
        focus: Option<&str>,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> CompactOutcome {
        let mut input_cap = u64::MAX;
        let mut pre_compact_ran = false;
        loop {
            if self.context.failures() >= MAX_FAILED_COMPACTIONS {
                return CompactOutcome::Exhausted(self.exhausted_detail("see the warnings above"));
            }
            let tokens_before = self.context.used(self.transcript.items());
            let (view, sent, plan) = self.context.plan(self.transcript.items(), input_cap);
            if plan.tail_start == 0 {
                return CompactOutcome::NothingToCompact;
            }
            if !pre_compact_ran {
                pre_compact_ran = true;
                self.pre_compact(trigger, focus, events).await;
            }
            let budget = *self.context.budget();
            let first_summarized =
                plan.summarized.first().map_or(self.transcript.items().len(), |&position| view[position]);
            let left_out = compact::user_messages(self.transcript.items(), first_summarized, budget.reattach);
            let request = compact::summary_request(
                self.requester.model(),
                &self.system,
                self.offered_tools(),
                &sent,
                &plan,
                &left_out,
                focus,
                &budget,
                self.requester.prompt_caching(),
            );
            let (result, usage) = compact::summarize(
                self.requester.provider(),
                &request,
                self.requester.thinking_format(),
                cancel,
            )
            .await;
            self.record_side_usage(&usage, events);
            let summary = match result {
                Ok(summary) => summary,
                Err(ProviderError::Cancelled) => return CompactOutcome::Cancelled,
                Err(error) => {
                    if matches!(error, ProviderError::ContextWindowExceeded { .. }) {
                        let input = compact::summarized_tokens(&view, &plan, self.transcript.items());
                        input_cap = (input / 2).min(input_cap);
                    }
                    let _ = events.send(AgentEvent::Warning {
                        message: format!(
                            "compaction failed (attempt {} of {MAX_FAILED_COMPACTIONS}): {error}",
                            self.context.failures() + 1
                        ),
                    });
                    if self.context.failed() {
                        return CompactOutcome::Exhausted(self.exhausted_detail(&error.to_string()));
                    }
                    continue;
                }
            };
            let kept_from = view.get(plan.tail_start).copied().unwrap_or(self.transcript.items().len());
            let mut ctx = self.ctx.clone();
            ctx.cancel = cancel.child_token();
            let reattached = Reattached {
                user_messages: compact::user_messages(self.transcript.items(), kept_from, budget.reattach),
                files: compact::recent_files(
                    self.transcript.items(),
                    kept_from,
                    &self.tools,
                    &ctx,
                    budget.reattach,
                )
                .await,
                todos: compact::todos(self.transcript.items()),
            };
            let text = compact::boundary(&summary, plan.tail_start, plan.omitted_rounds, &reattached);
            let item = compact::compaction_item(self.transcript.items(), &view, &plan, text);
            self.append(LedgerItem::Compaction(item));
            let _ = events.send(AgentEvent::Compacted {
                trigger,
                tokens_before,
                tokens_after: self.context.used(self.transcript.items()),
                summarized_items: plan.tail_start as u32,
                kept_items: (view.len() - plan.tail_start) as u32,
                omitted_rounds: plan.omitted_rounds,
            });
            return CompactOutcome::Compacted;
        }
    }
}
