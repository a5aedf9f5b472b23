//! The story of one user turn, told with the agent's parts: check the stops, fit the context, send
//! the request, record the response, then either finish (or continue a cut answer, or let a Stop
//! hook send the model back) or run the response's tool calls and go round again.

use lathe_protocol::{
    AgentEvent, AssistantMessage, Content, LedgerItem, ProviderError, StopCause, StopReason, ToolCall,
    UserMessage, conversation, pairing,
};
use tokio::sync::{Mutex, mpsc};
use tokio_util::sync::CancellationToken;

use super::transcript::CONTINUE_TEXT;
use super::turn_hooks::StopChecks;
use super::{Agent, MAX_CONTINUATIONS};
use crate::exec::Executor;
use crate::guards::CallGuard;
use crate::progress::ProgressGuard;
use crate::requester::Streamed;
use crate::{recovery, text_calls};

/// How long after a request is handed over the MCP servers whose tools are remembered start (see
/// [`crate::mcp::McpServers::launch_after`]): by then the request is sent, and a model takes far
/// longer to answer, so their start delays neither.
const MCP_LAUNCH_DELAY: std::time::Duration = std::time::Duration::from_millis(5);

/// What one user turn has counted so far.
struct TurnState {
    /// Model requests made this turn.
    requests: u32,
    /// Continuations asked for after answers cut by the output-token limit.
    continuations: u32,
    /// Whether images were already replaced by notes after a provider rejected them.
    images_replaced: bool,
    progress: ProgressGuard,
    guard: CallGuard,
    stop_checks: StopChecks,
    /// Answers not taken for want of a passing check ([`super::verify`]).
    nudges: u32,
}

impl Agent {
    pub(super) async fn turn_loop(
        &mut self,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> StopCause {
        let mut turn = TurnState {
            requests: 0,
            continuations: 0,
            images_replaced: false,
            progress: ProgressGuard::default(),
            guard: CallGuard::new(self.limits.max_calls_per_response)
                .keeping(self.kept_files(), self.ctx.workspace.clone()),
            stop_checks: StopChecks::default(),
            nudges: 0,
        };
        loop {
            if let Some(cause) = self.before_request(turn.requests, events, cancel).await {
                return cause;
            }
            turn.requests += 1;
            self.totals.count_turn(1);
            let _ = events.send(AgentEvent::TurnStarted { turn: turn.requests });

            self.context.sending(self.transcript.items());
            let (message, error) = self.request(events, cancel).await;
            if let Some(overflow @ ProviderError::ContextWindowExceeded { .. }) = &error
                && message.as_ref().is_none_or(|message| message.content.is_empty())
                && self.context.settings().auto_compact
            {
                match self.recover_from_overflow(overflow, events, cancel).await {
                    Some(cause) => return cause,
                    None => {
                        // The retry is the same model turn, not a new one.
                        turn.requests -= 1;
                        self.totals.count_turn(-1);
                        continue;
                    }
                }
            }
            let cancelled = matches!(error, Some(ProviderError::Cancelled));
            if let Some(message) = message {
                self.record_response(message, error.is_some(), events);
            }
            if cancelled || cancel.is_cancelled() {
                return StopCause::Cancelled;
            }
            if let Some(error) = error {
                match self.request_failed(error, &mut turn.images_replaced, events) {
                    Some(cause) => return cause,
                    None => continue,
                }
            }
            let Some(LedgerItem::Assistant(message)) = self.transcript.items().last() else {
                return StopCause::Completed;
            };
            let calls: Vec<_> = message.tool_calls().cloned().collect();
            let stop = message.stop;
            let next = if calls.is_empty() {
                self.answered(stop, &mut turn, events, cancel).await
            } else {
                self.run_calls(&calls, stop, &mut turn, events, cancel).await
            };
            if let Some(cause) = next {
                return cause;
            }
        }
    }

    /// The checks before each request: cancel, the turn limit, the cost budget; then the mode the
    /// front end switched to, the pairing guard and fitting the context into the window.
    async fn before_request(
        &mut self,
        requests: u32,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> Option<StopCause> {
        if cancel.is_cancelled() {
            return Some(StopCause::Cancelled);
        }
        if requests >= self.limits.max_turns {
            return Some(StopCause::MaxTurns { max_turns: self.limits.max_turns });
        }
        let spent = self.totals.stats().cost_usd;
        if let Some(limit) = self.limits.max_cost_usd
            && spent >= limit
        {
            let detail = format!("estimated cost ${spent:.4} reached the budget of ${limit}");
            return Some(StopCause::Budget { detail });
        }
        // MCP servers whose tools are remembered start once this request is on its way (a session
        // with a user present launched them at its start).
        if let Some(servers) = &self.mcp {
            servers.launch_after(MCP_LAUNCH_DELAY);
        }
        // A mode the user chose meanwhile (leaving plan mode) decides the tools this request offers.
        self.sync_mode(events);
        self.send_warnings(events);
        self.repair_pairing("no result was recorded for this call");
        // The repository's state print mode's first request went without (git had not finished).
        if self.hooks.defers_repository()
            && self.transcript.has_response()
            && let Some(state) = self.hooks.take_deferred_repository().await
        {
            self.append(LedgerItem::User(UserMessage::injected(state)));
        }
        // Background sub-agents that ended since the last request: their reports go with this one.
        self.deliver_background(events);
        // The team's mail (teammates' messages, their idle notices, a death) likewise.
        self.deliver_team_mail().await;
        // What the user typed while the turn ran.
        self.deliver_steering(events);
        if let Some(cause) = self.fit_context(events, cancel).await {
            return Some(cause);
        }
        cancel.is_cancelled().then_some(StopCause::Cancelled)
    }

    /// Sends one request and folds its stream. Returns the assistant message (if anything arrived or
    /// the stream completed) and the terminal error, if any.
    async fn request(
        &self,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> (Option<AssistantMessage>, Option<ProviderError>) {
        let request = self.requester.turn_request(
            &self.system,
            pairing::paired(self.context.messages(self.transcript.items())),
            self.offered_tools(),
            self.context.budget().output_reserve as u32,
        );
        let Streamed { mut acc, terminal } = self.requester.stream(&request, Some(events), cancel).await;
        if !terminal && acc.error().is_none() {
            let detail = "the provider stream ended without a stop".into();
            acc.push(&lathe_protocol::ModelEvent::Error {
                error: ProviderError::IncompleteStream { detail },
            });
        }
        let error = acc.error().cloned();
        // A response that failed is not stored (its request was retried as a whole, or the run
        // ends); only the user's cancel keeps what had arrived.
        let keep = error.is_none() || (error == Some(ProviderError::Cancelled) && acc.has_content());
        let message = acc.finish(self.requester.model());
        (keep.then_some(message), error)
    }

    /// Records a response (`failed`: its stream ended on an error): calls written as text become
    /// calls, ids are made unique, and a message with content goes to the front end and the ledger.
    fn record_response(
        &mut self,
        mut message: AssistantMessage,
        failed: bool,
        events: &mpsc::UnboundedSender<AgentEvent>,
    ) {
        if failed {
            // Reasoning cut off mid-stream has no (or a partial) signature; providers reject it
            // when it is sent back, so a partial message keeps only text and calls.
            message.content.retain(|content| !matches!(content, Content::Thinking(_)));
        }
        if let Some(names) = text_calls::promote(&mut message, &self.tools.names()) {
            let message = format!(
                "the model wrote its {} call as text; Lathe runs it as a tool call",
                names.join(", ")
            );
            let _ = events.send(AgentEvent::Warning { message });
        }
        self.transcript.unique_call_ids(&mut message);
        crate::memory::session::redact_calls(&mut message);
        let usage = message.usage;
        if !failed {
            self.context.answered(&usage, self.totals.input_includes_cache_reads());
        }
        // Providers reject an assistant message without content; a response that failed before
        // anything usable arrived leaves no trace in the ledger.
        if !message.content.is_empty() {
            let _ = events.send(AgentEvent::AssistantMessage { message: message.clone() });
            self.append(LedgerItem::Assistant(message));
        }
        self.record_usage(&usage, events);
    }

    /// A request that failed: images are replaced by notes once when the provider rejected them
    /// (`None`: retry); otherwise the failure is recorded and the run stops with its cause.
    fn request_failed(
        &mut self,
        error: ProviderError,
        images_replaced: &mut bool,
        events: &mpsc::UnboundedSender<AgentEvent>,
    ) -> Option<StopCause> {
        let ledger = self.transcript.items();
        let sent_image = || conversation::request_messages(ledger).iter().any(conversation::carries_image);
        if !*images_replaced && recovery::rejects_images(&error) && sent_image() {
            *images_replaced = true;
            self.append(recovery::images_replaced(&error));
            let message = format!(
                "the provider could not process an image ({error}); images are sent as text notes from now on"
            );
            let _ = events.send(AgentEvent::Warning { message });
            return None;
        }
        let prompt_left_out = recovery::prompt_unanswered(self.transcript.items());
        self.append(recovery::request_failed(&error));
        let message = recovery::failure_message(&error, prompt_left_out);
        // An overflow still here could not be recovered (automatic compaction is off): the run
        // stopped on the window, not on a provider fault.
        if matches!(error, ProviderError::ContextWindowExceeded { .. }) {
            return Some(StopCause::ContextExhausted { detail: message });
        }
        Some(StopCause::Error { kind: error.kind().to_string(), message })
    }

    /// A response without tool calls: a cut answer is continued (up to [`MAX_CONTINUATIONS`]), a
    /// refusal stops, anything else meets the stop checks. `None`: the loop goes on.
    async fn answered(
        &mut self,
        stop: StopReason,
        turn: &mut TurnState,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> Option<StopCause> {
        match stop {
            StopReason::MaxTokens if turn.continuations < MAX_CONTINUATIONS => {
                turn.continuations += 1;
                self.append(LedgerItem::User(UserMessage::injected(CONTINUE_TEXT)));
                None
            }
            StopReason::Refusal => Some(StopCause::Refused),
            StopReason::EndTurn
            | StopReason::ToolUse
            | StopReason::MaxTokens
            | StopReason::StopSequence
            | StopReason::PauseTurn
            | StopReason::Error
            | StopReason::Cancelled => {
                // A lead whose teammates still work waits for them: their mail is the next request.
                if let Some(next) = self.wait_for_team(cancel).await {
                    return next;
                }
                if let Some(next) = self.verify_before_answer(&mut turn.nudges) {
                    return next;
                }
                self.stop_hooks(&mut turn.stop_checks, events, cancel).await
            }
        }
    }

    /// Runs one response's calls (the mode change and file snapshots first), records their
    /// results, loads the rules they made due and folds in sub-agents' usage. Returns the cause
    /// when the run stops here: cancel, a hook's stop, a call that ends the run (a headless
    /// `exit_plan_mode`), or no progress.
    async fn run_calls(
        &mut self,
        calls: &[ToolCall],
        stop: StopReason,
        turn: &mut TurnState,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> Option<StopCause> {
        // Before a mode change can alter the tools on offer: a fork's request matches this one.
        self.record_fork_base(calls);
        self.sync_mode(events);
        self.snapshot_files(calls);
        self.send_warnings(events);
        let mut ctx = self.ctx.clone();
        ctx.cancel = cancel.child_token();
        if let Some((reviewer, true)) = self.controls.reviewer() {
            reviewer.set_user_messages(crate::auto_mode::Reviewer::user_messages_of(self.transcript.items()));
        }
        let executor = Executor {
            tools: &self.tools,
            ctx: &ctx,
            policy: self.controls.policy(),
            approver: self.controls.approver(),
            reviewer: self.controls.reviewer().map(|(reviewer, _)| reviewer),
            auto_blocked: std::sync::Mutex::new(None),
            events,
            prompt_lock: Mutex::new(()),
            cut_short: matches!(stop, StopReason::MaxTokens | StopReason::Refusal).then_some(stop),
            hooks: self.hooks.hooks(),
            stop: std::sync::Mutex::new(None),
        };
        let executed = executor.run_all(calls, &mut turn.guard).await;
        let hook_stop = executor.stop.into_inner().ok().flatten();
        let auto_blocked = executor.auto_blocked.into_inner().ok().flatten();
        let ends_run = executed.iter().any(|done| done.ends_run);
        for (call, done) in calls.iter().zip(executed) {
            self.totals.count_tool_call();
            let _ = events.send(AgentEvent::ToolResult {
                result: done.result.clone(),
                tool: done.tool.clone(),
                elapsed_ms: done.elapsed_ms,
                view: done.view.clone(),
            });
            turn.progress.observe(call, &done.result);
            self.append(LedgerItem::ToolResult(done.result));
            for meta in done.ledger {
                self.append(LedgerItem::Meta(meta));
            }
        }
        self.load_rules_for(calls);
        self.fold_review_usage(events);
        self.fold_subagent_usage(events);
        if cancel.is_cancelled() {
            return Some(StopCause::Cancelled);
        }
        if let Some(reason) = hook_stop {
            return Some(StopCause::Hook { reason });
        }
        if let Some(detail) = auto_blocked {
            return Some(StopCause::AutoBlocked { detail });
        }
        if ends_run {
            // A headless plan run: the plan presented is the run's result.
            return Some(StopCause::Completed);
        }
        turn.guard
            .stalled()
            .or_else(|| turn.progress.stalled())
            .map(|detail| StopCause::NoProgress { detail })
    }
}

impl Agent {
    /// The queue of steering messages this agent takes before each request.
    pub fn steering(&self) -> super::Steering {
        self.steering.clone()
    }

    /// Appends the waiting steering messages (each after its note) as user messages, and says
    /// so with [`AgentEvent::Steered`]; nothing when none wait.
    pub(super) fn deliver_steering(&mut self, events: &mpsc::UnboundedSender<AgentEvent>) {
        let messages = self.steering.take();
        if messages.is_empty() {
            return;
        }
        let count = messages.len();
        for (content, from) in messages {
            if let Some(text) = from {
                self.append(LedgerItem::Meta(lathe_protocol::Meta::Note { text }));
            }
            self.append(LedgerItem::User(UserMessage { content, origin: lathe_protocol::UserOrigin::User }));
        }
        let _ = events.send(AgentEvent::Steered { count });
    }
}
