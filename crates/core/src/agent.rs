//! The agent loop (ARCHITECTURE.md §3, FEATURES.md §B).
//!
//! One user turn: append the user message (persisted first) → loop { stop checks → pairing guard →
//! request → stream events to the front end → append the assistant message → no tool calls? done :
//! run the calls and append their results }. The loop ends on: no tool calls, cancel, max turns, the
//! cost budget, or no progress (the same call failing the same way 3 times in a row, or 3 calls
//! refused by [`crate::guards`] as repeats). Whatever the exit, every tool call in the ledger has
//! its result, and the session file is synced.
//!
//! A session file that cannot be written never stops a run: the first failed append is reported
//! as a warning (the session is incomplete from there) and the loop goes on in memory. Before a call
//! changes a file, the file's state is saved for `/rewind` ([`crate::history`], [`crate::snapshot`]).
//!
//! A failed request is handled by [`crate::recovery`]; calls a model wrote as text are promoted by
//! [`crate::text_calls`]; calls of a response cut short are answered, not run ([`crate::exec`]).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use lathe_policy::{PermissionMode, Policy};
use lathe_protocol::{
    AgentEvent, AssistantMessage, Content, ContextUsage, LedgerItem, ProviderError, RunStats, StopCause,
    StopReason, SystemBlock, ThinkingFormat, UserMessage, conversation,
};
use lathe_provider::Provider;
use lathe_provider::catalog::ModelInfo;
use lathe_tools::{ToolContext, ToolRegistry};
use tokio::sync::{Mutex, mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::context::{Budget, ContextManager, ContextSettings};
use crate::exec::{Approver, Executor, interrupted};
use crate::guards::CallGuard;
use crate::history::FileHistory;
use crate::hooks::Hooks;
use crate::instructions::RuleSet;
use crate::progress::ProgressGuard;
use crate::session::SessionWriter;
use crate::subagent::task::UsageMeter;
use crate::{recovery, text_calls};

/// Continuations asked for when a text answer is cut by the output-token limit.
pub const MAX_CONTINUATIONS: u32 = 3;

/// What the injected continuation request says.
const CONTINUE_TEXT: &str = "Your previous response was cut off by the output token limit. Continue exactly where you stopped, \
     without repeating what you already wrote.";

/// Settings of the loop.
#[derive(Debug, Clone)]
pub struct AgentSettings {
    /// Model name sent in requests.
    pub model: String,
    /// Model requests allowed per user turn.
    pub max_turns: u32,
    /// Tool calls of one response that run; the rest are answered, not run (0 = unlimited; see
    /// [`crate::guards`]).
    pub max_calls_per_response: u32,
    /// Cost budget in US dollars for the session's runs; `None` = unlimited.
    pub max_cost_usd: Option<f64>,
    /// Output-token limit per response.
    pub max_output_tokens: u32,
    /// Permission mode.
    pub permission_mode: PermissionMode,
    /// Sampling temperature (`None` = provider default).
    pub temperature: Option<f32>,
    /// Ask the provider to place prompt-cache breakpoints.
    pub prompt_caching: bool,
    /// What the catalog knows about the model: prices for the cost estimate, and whether the
    /// provider's input count includes cache reads (OpenAI-style usage) or not (Anthropic).
    pub model_info: ModelInfo,
    /// Which format reasoning from this provider is tagged with.
    pub thinking_format: ThinkingFormat,
    /// Automatic compaction and pruning (the window is `model_info.context_window`).
    pub context: ContextSettings,
}

/// A session's agent: the ledger, the provider, the tools and the session file.
pub struct Agent {
    pub(crate) provider: Arc<dyn Provider>,
    pub(crate) tools: ToolRegistry,
    pub(crate) ctx: ToolContext,
    pub(crate) system: Vec<SystemBlock>,
    pub(crate) ledger: Vec<LedgerItem>,
    pub(crate) session: Option<SessionWriter>,
    pub(crate) settings: AgentSettings,
    approver: Option<Arc<dyn Approver>>,
    pub(crate) policy: Arc<Policy>,
    pub(crate) stats: RunStats,
    /// Context accounting, pruning and compaction decisions (see [`crate::context`]).
    pub(crate) context: ContextManager,
    /// Path-scoped instruction rules, loaded on the first matching read.
    pub(crate) rules: RuleSet,
    /// The repository's state, sent before the first user message of a new session.
    session_context: Option<String>,
    /// Every tool-call id in the ledger, so a repeated or empty id from the model can be replaced
    /// before it breaks pairing (providers reject duplicate ids).
    call_ids: HashSet<String>,
    /// Where file snapshots for `/rewind` go; `None` when nothing is saved.
    pub(crate) history: Option<FileHistory>,
    /// Warnings not yet sent to the front end (a failed append, a file that could not be saved).
    pub(crate) pending_warnings: Vec<String>,
    /// Permission-mode changes from the front end, read before each response's calls run.
    pub(crate) mode_watch: Option<watch::Receiver<PermissionMode>>,
    /// Usage of the sub-agents this agent's `task` calls start, folded into its totals.
    pub(crate) meter: Option<Arc<UsageMeter>>,
    /// The session's hooks (none configured by default).
    hooks: Hooks,
    /// The hook event of this agent's stop: `Stop`, or `SubagentStop` for a sub-agent (whose
    /// prompt also skips UserPromptSubmit: it comes from the parent model, not the user).
    pub(crate) stop_event: crate::hooks::HookEvent,
    /// Hook context (event name, text) waiting to be added to the next user message.
    pending_context: Vec<(&'static str, String)>,
}

impl Agent {
    /// A new agent. `ledger` is empty for a new session or the loaded items of a resumed one.
    pub fn new(
        provider: Arc<dyn Provider>,
        tools: ToolRegistry,
        ctx: ToolContext,
        system: Vec<SystemBlock>,
        ledger: Vec<LedgerItem>,
        session: Option<SessionWriter>,
        settings: AgentSettings,
    ) -> Agent {
        let call_ids = ledger
            .iter()
            .filter_map(|item| match item {
                LedgerItem::Assistant(message) => Some(message.tool_calls().map(|call| call.id.clone())),
                LedgerItem::User(_)
                | LedgerItem::ToolResult(_)
                | LedgerItem::Compaction(_)
                | LedgerItem::Meta(_) => None,
            })
            .flatten()
            .collect();
        let policy = Arc::new(Policy::with_mode(settings.permission_mode, &ctx.workspace));
        let budget = Budget::new(settings.model_info.context_window, settings.max_output_tokens);
        let context = ContextManager::new(budget, settings.context, &system, &tools.specs(), &ledger);
        Agent {
            context,
            rules: RuleSet::default(),
            session_context: None,
            call_ids,
            policy,
            provider,
            tools,
            ctx,
            system,
            ledger,
            session,
            settings,
            approver: None,
            stats: RunStats::default(),
            history: None,
            pending_warnings: Vec::new(),
            mode_watch: None,
            meter: None,
            hooks: Hooks::default(),
            stop_event: crate::hooks::HookEvent::Stop,
            pending_context: Vec::new(),
        }
    }

    /// Sets the session's hooks.
    pub fn with_hooks(mut self, hooks: Hooks) -> Agent {
        self.hooks = hooks;
        self
    }

    /// Keeps file history for `/rewind` in `history` (see [`crate::history`]).
    pub fn with_history(mut self, history: FileHistory) -> Agent {
        self.history = Some(history);
        self
    }

    /// Reads permission-mode changes from `modes` before each response's calls run; a change is
    /// recorded in the ledger and announced with [`AgentEvent::ModeChanged`].
    pub fn with_mode_watch(mut self, modes: watch::Receiver<PermissionMode>) -> Agent {
        self.mode_watch = Some(modes);
        self
    }

    /// Loads `rules` when a file matching them is read (see [`crate::instructions::rules`]).
    pub fn with_rules(mut self, rules: RuleSet) -> Agent {
        self.rules = rules;
        self
    }

    /// Sends `context` (the repository's state) as an injected message before the first user
    /// message, when the session has none yet; nothing when it is empty.
    pub fn with_session_context(mut self, context: String) -> Agent {
        self.session_context = Some(context).filter(|context| !context.trim().is_empty());
        self
    }

    /// Sets the interactive approver; without one, every `ask` is a denial (headless).
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Agent {
        self.approver = Some(approver);
        self
    }

    /// Sets the permission policy (rules from the settings files, path guard, sandbox); without
    /// one, the agent decides by its mode alone.
    pub fn with_policy(mut self, policy: Arc<Policy>) -> Agent {
        self.settings.permission_mode = policy.mode();
        self.policy = policy;
        self
    }

    /// The permission policy.
    pub fn policy(&self) -> &Arc<Policy> {
        &self.policy
    }

    /// The ledger so far.
    pub fn ledger(&self) -> &[LedgerItem] {
        &self.ledger
    }

    /// Totals over every run of this agent.
    pub fn stats(&self) -> RunStats {
        self.stats
    }

    /// The tools on offer.
    pub fn tools(&self) -> &ToolRegistry {
        &self.tools
    }

    /// Appends an item to the ledger and the session file (handed to the OS before returning).
    /// When the file cannot be written, the session stops being saved and a warning says so; the
    /// ledger in memory goes on.
    pub fn append(&mut self, item: LedgerItem) {
        if let Some(session) = &mut self.session
            && let Err(error) = session.append(&item)
        {
            self.pending_warnings.push(format!(
                "{error}; the session is incomplete from here: nothing more is saved (everything before is kept)"
            ));
            self.session = None;
            self.history = None;
        }
        self.ledger.push(item);
        self.context.sync(&self.ledger);
    }

    /// How full the context window is: the next request's size, the window, the largest items.
    pub fn context_usage(&self) -> ContextUsage {
        self.context.usage(&self.ledger, &self.system, &self.tools.specs())
    }

    /// Runs one user turn to its end and reports why it ended (also sent as
    /// [`AgentEvent::Finished`]). Every call has its result and the session file is synced when
    /// this returns.
    pub async fn run(
        &mut self,
        input: UserMessage,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> StopCause {
        let started = Instant::now();
        let before = self.stats;
        let refused = self.submit(input, events, cancel).await;
        self.send_warnings(events);
        let cause = match refused.clone() {
            Some(refusal) => refusal,
            None => self.turn_loop(events, cancel).await,
        };
        self.repair_pairing("the run ended before this call completed");
        self.sync();
        self.send_warnings(events);
        self.stats.duration_ms += started.elapsed().as_millis() as u64;
        let run_stats = RunStats {
            turns: self.stats.turns - before.turns,
            tool_calls: self.stats.tool_calls - before.tool_calls,
            input_tokens: self.stats.input_tokens - before.input_tokens,
            output_tokens: self.stats.output_tokens - before.output_tokens,
            cache_read_tokens: self.stats.cache_read_tokens - before.cache_read_tokens,
            cache_write_tokens: self.stats.cache_write_tokens - before.cache_write_tokens,
            cost_usd: self.stats.cost_usd - before.cost_usd,
            duration_ms: self.stats.duration_ms - before.duration_ms,
        };
        let final_text = if refused.is_some() { String::new() } else { self.last_assistant_text() };
        let _ = events.send(AgentEvent::Finished { cause: cause.clone(), stats: run_stats, final_text });
        cause
    }

    async fn turn_loop(
        &mut self,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> StopCause {
        let mut turns = 0u32;
        let mut continuations = 0u32;
        let mut images_replaced = false;
        let mut progress = ProgressGuard::default();
        let mut guard = CallGuard::new(self.settings.max_calls_per_response);
        let mut stop_checks = agent_hooks::StopChecks::default();
        loop {
            if cancel.is_cancelled() {
                return StopCause::Cancelled;
            }
            if turns >= self.settings.max_turns {
                return StopCause::MaxTurns { max_turns: self.settings.max_turns };
            }
            if let Some(limit) = self.settings.max_cost_usd
                && self.stats.cost_usd >= limit
            {
                return StopCause::Budget {
                    detail: format!(
                        "estimated cost ${:.4} reached the budget of ${limit}",
                        self.stats.cost_usd
                    ),
                };
            }
            self.send_warnings(events);
            self.repair_pairing("no result was recorded for this call");
            if let Some(cause) = self.fit_context(events, cancel).await {
                return cause;
            }
            if cancel.is_cancelled() {
                return StopCause::Cancelled;
            }
            turns += 1;
            self.stats.turns += 1;
            let _ = events.send(AgentEvent::TurnStarted { turn: turns });

            self.context.sending(&self.ledger);
            let (message, error) = self.request(events, cancel).await;
            if let Some(overflow @ ProviderError::ContextWindowExceeded { .. }) = &error
                && message.as_ref().is_none_or(|message| message.content.is_empty())
                && self.settings.context.auto_compact
            {
                match self.recover_from_overflow(overflow, events, cancel).await {
                    Some(cause) => return cause,
                    None => {
                        // The retry is the same model turn, not a new one.
                        turns -= 1;
                        self.stats.turns -= 1;
                        continue;
                    }
                }
            }
            let cancelled = matches!(error, Some(ProviderError::Cancelled));
            if let Some(mut message) = message {
                if error.is_some() {
                    // Reasoning cut off mid-stream has no (or a partial) signature; providers
                    // reject it when it is sent back, so a partial message keeps only text and calls.
                    message.content.retain(|content| !matches!(content, Content::Thinking(_)));
                }
                if let Some(names) = text_calls::promote(&mut message, &self.tools.names()) {
                    let message = format!(
                        "the model wrote its {} call as text; Lathe runs it as a tool call",
                        names.join(", ")
                    );
                    let _ = events.send(AgentEvent::Warning { message });
                }
                self.unique_call_ids(&mut message);
                let usage = message.usage;
                if error.is_none() {
                    self.context.answered(&usage, self.settings.model_info.input_includes_cache_reads);
                }
                // Providers reject an assistant message without content; a response that failed
                // before anything usable arrived leaves no trace in the ledger.
                if !message.content.is_empty() {
                    let _ = events.send(AgentEvent::AssistantMessage { message: message.clone() });
                    self.append(LedgerItem::Assistant(message));
                }
                self.record_usage(&usage, events);
            }
            if cancelled || cancel.is_cancelled() {
                return StopCause::Cancelled;
            }
            if let Some(error) = error {
                let sent_image =
                    || conversation::request_messages(&self.ledger).iter().any(conversation::carries_image);
                if !images_replaced && recovery::rejects_images(&error) && sent_image() {
                    images_replaced = true;
                    self.append(recovery::images_replaced(&error));
                    let message = format!(
                        "the provider could not process an image ({error}); images are sent as text notes from now on"
                    );
                    let _ = events.send(AgentEvent::Warning { message });
                    continue;
                }
                let prompt_left_out = recovery::prompt_unanswered(&self.ledger);
                self.append(recovery::request_failed(&error));
                let message = recovery::failure_message(&error, prompt_left_out);
                // An overflow still here could not be recovered (automatic compaction is off):
                // the run stopped on the window, not on a provider fault.
                if matches!(error, ProviderError::ContextWindowExceeded { .. }) {
                    return StopCause::ContextExhausted { detail: message };
                }
                return StopCause::Error { kind: error.kind().to_string(), message };
            }
            let Some(LedgerItem::Assistant(message)) = self.ledger.last() else {
                return StopCause::Completed;
            };
            let calls: Vec<_> = message.tool_calls().cloned().collect();
            let stop = message.stop;
            if calls.is_empty() {
                match stop {
                    StopReason::MaxTokens if continuations < MAX_CONTINUATIONS => {
                        continuations += 1;
                        self.append(LedgerItem::User(UserMessage::injected(CONTINUE_TEXT)));
                        continue;
                    }
                    StopReason::Refusal => return StopCause::Refused,
                    StopReason::EndTurn
                    | StopReason::ToolUse
                    | StopReason::MaxTokens
                    | StopReason::StopSequence
                    | StopReason::PauseTurn
                    | StopReason::Error
                    | StopReason::Cancelled => {
                        match self.stop_hooks(&mut stop_checks, events, cancel).await {
                            Some(cause) => return cause,
                            None => continue,
                        }
                    }
                }
            }

            self.sync_mode(events);
            self.snapshot_files(&calls);
            self.send_warnings(events);
            let (executed, hook_stop) = {
                let mut ctx = self.ctx.clone();
                ctx.cancel = cancel.child_token();
                let executor = Executor {
                    tools: &self.tools,
                    ctx: &ctx,
                    policy: &self.policy,
                    approver: self.approver.as_deref(),
                    events,
                    prompt_lock: Mutex::new(()),
                    cut_short: matches!(stop, StopReason::MaxTokens | StopReason::Refusal).then_some(stop),
                    hooks: &self.hooks,
                    stop: std::sync::Mutex::new(None),
                };
                let executed = executor.run_all(&calls, &mut guard).await;
                (executed, executor.stop.into_inner().ok().flatten())
            };
            for (call, done) in calls.iter().zip(executed) {
                self.stats.tool_calls += 1;
                let _ = events.send(AgentEvent::ToolResult {
                    result: done.result.clone(),
                    tool: done.tool.clone(),
                    elapsed_ms: done.elapsed_ms,
                    view: done.view.clone(),
                });
                progress.observe(call, &done.result);
                self.append(LedgerItem::ToolResult(done.result));
            }
            self.load_rules_for(&calls);
            self.fold_subagent_usage(events);
            if cancel.is_cancelled() {
                return StopCause::Cancelled;
            }
            if let Some(reason) = hook_stop {
                return StopCause::Hook { reason };
            }
            if let Some(detail) = guard.stalled().or_else(|| progress.stalled()) {
                return StopCause::NoProgress { detail };
            }
        }
    }

    /// The pairing guard (ARCHITECTURE.md §4.1): answers every call still without a result with an
    /// `Interrupted` result, so the ledger is always valid to send.
    pub fn repair_pairing(&mut self, why: &str) {
        for call in LedgerItem::unpaired_calls(&self.ledger) {
            self.append(LedgerItem::ToolResult(interrupted(&call, why).result));
        }
    }

    /// Gives every tool call of `message` an id not used before in this session (an empty or
    /// repeated id from the model is replaced by `<id>_<n>`), and records the ids.
    fn unique_call_ids(&mut self, message: &mut AssistantMessage) {
        for content in &mut message.content {
            let Content::ToolCall(call) = content else { continue };
            if call.id.is_empty() || self.call_ids.contains(&call.id) {
                let base = if call.id.is_empty() { "call".to_string() } else { call.id.clone() };
                let mut n = self.call_ids.len() + 1;
                while self.call_ids.contains(&format!("{base}_{n}")) {
                    n += 1;
                }
                call.id = format!("{base}_{n}");
            }
            self.call_ids.insert(call.id.clone());
        }
    }

    /// The final answer: the last assistant message's text, preceded by the parts of it that were
    /// cut by the output-token limit and continued.
    fn last_assistant_text(&self) -> String {
        let mut parts = Vec::new();
        let mut items = self.ledger.iter().rev().peekable();
        while let Some(item) = items.next() {
            match item {
                LedgerItem::Assistant(message) => {
                    parts.push(message.text());
                    // Keep walking back only across a continuation request.
                    match items.peek() {
                        Some(LedgerItem::User(user)) if is_continuation(user) => {
                            items.next();
                        }
                        _ => break,
                    }
                }
                LedgerItem::User(_) => break,
                LedgerItem::ToolResult(_) | LedgerItem::Compaction(_) | LedgerItem::Meta(_) => {
                    if !parts.is_empty() {
                        break;
                    }
                }
            }
        }
        parts.reverse();
        parts.concat()
    }
}

#[path = "agent_hooks.rs"]
mod agent_hooks;
#[path = "agent_stream.rs"]
mod agent_stream;

fn is_continuation(message: &UserMessage) -> bool {
    message.origin == lathe_protocol::UserOrigin::Injected
        && matches!(message.content.as_slice(), [Content::Text { text }] if text == CONTINUE_TEXT)
}
