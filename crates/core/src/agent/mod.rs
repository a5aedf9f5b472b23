//! The agent loop (ARCHITECTURE.md §3, FEATURES.md §B).
//!
//! One user turn: append the user message (persisted first) → loop { stop checks → pairing guard →
//! request → stream events to the front end → append the assistant message → no tool calls? done :
//! run the calls and append their results }. The loop ends on: no tool calls, cancel, max turns, the
//! cost budget, or no progress (the same call failing the same way 3 times in a row, or 3 calls
//! refused by [`crate::guards`] as repeats). Whatever the exit, every tool call in the ledger has
//! its result, and the session file is synced.
//!
//! The agent is made of parts that own their state: the [`Requester`] (provider and model), the
//! transcript (ledger, session file, file history, call ids, warnings), the context manager
//! ([`crate::context`]), the controls (permission mode and approver), the totals (usage, cost,
//! sub-agents' share), the hook part (prompt, stop and session hooks) and the path-scoped rules.
//! Each file of this module is one of them, or one story told with them (`turn.rs`: one turn).
//!
//! A failed request is handled by [`crate::recovery`]; calls a model wrote as text are promoted by
//! [`crate::text_calls`]; calls of a response cut short are answered, not run ([`crate::exec`]).

mod background;
mod compaction;
mod controls;
mod goal;
mod hooks;
mod memory;
mod reproduce;
mod rewind;
mod rules;
mod settings;
mod stated;
mod steering;
mod switch;
mod team;
mod totals;
mod transcript;
mod turn;
mod turn_hooks;
mod usage;
mod verify;

use std::sync::Arc;
use std::time::Instant;

use lathe_policy::{PermissionMode, Policy};
use lathe_protocol::{
    AgentEvent, ContextUsage, LedgerItem, Meta, RunReport, RunStats, StopCause, SystemBlock, UserMessage,
};
use lathe_provider::Provider;
use lathe_tools::{ToolContext, ToolRegistry};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use self::controls::Controls;
pub use self::goal::{GoalControl, ResumedGoal};
pub use self::rewind::Rewound;
pub use self::settings::AgentSettings;
use self::settings::Limits;
pub use self::steering::Steering;
use self::totals::Totals;
use self::transcript::Transcript;
use self::turn_hooks::TurnHooks;
use crate::context::{Budget, ContextManager};
use crate::exec::Approver;
use crate::history::FileHistory;
use crate::hooks::Hooks;
use crate::instructions::RuleSet;
use crate::memory::session::SessionMemory;
use crate::recovery;
use crate::requester::Requester;
use crate::session::SessionWriter;
use crate::subagent::usage::UsageMeter;

/// Continuations asked for when a text answer is cut by the output-token limit.
pub const MAX_CONTINUATIONS: u32 = 3;

/// A session's agent: the ledger, the provider, the tools and the session file.
pub struct Agent {
    requester: Requester,
    tools: ToolRegistry,
    ctx: ToolContext,
    system: Vec<SystemBlock>,
    transcript: Transcript,
    limits: Limits,
    controls: Controls,
    totals: Totals,
    /// Context accounting, pruning and compaction decisions (see [`crate::context`]).
    context: ContextManager,
    /// Path-scoped instruction rules, loaded on the first matching read.
    rules: RuleSet,
    hooks: TurnHooks,
    /// Long-term memory: recall per user turn, and the files a `memory` write changes.
    memory: Option<Arc<SessionMemory>>,
    /// The model a goal's evaluator requests go to (`[goal] evaluator_model`); `None`: the
    /// session's model.
    evaluator_model: Option<String>,
    /// The session's background sub-agents and the fork slot (a session's own agent only).
    background: Option<crate::subagent::background::ParentLinks>,
    /// The session's MCP servers, for what the ones starting in the background turn out to be.
    mcp: Option<Arc<crate::mcp::McpServers>>,
    /// The team this agent leads, if teams are on.
    team: Option<Arc<crate::team::lead::TeamHub>>,
    /// Verify before claiming ([`verify`]): a run that changed files ends only after a check.
    verify_changes: bool,
    /// Why the run that just ended is not verified (its final text instead of the model's claim).
    unverified: Option<String>,
    /// User messages for the running turn's next request.
    steering: Steering,
}

impl Agent {
    /// A new agent. `ledger` is empty for a new session or the loaded items of a resumed one.
    /// With deferred tools in `tools`, `system` gets their listing and `tools` gets
    /// `tool_search` ([`crate::tool_search`]); the tools `ledger` records as loaded are offered.
    pub fn new(
        provider: Arc<dyn Provider>,
        mut tools: ToolRegistry,
        ctx: ToolContext,
        mut system: Vec<SystemBlock>,
        ledger: Vec<LedgerItem>,
        session: Option<SessionWriter>,
        settings: AgentSettings,
    ) -> Agent {
        crate::tool_search::install(&mut tools, &mut system);
        load_recorded(&mut tools, &ledger);
        let policy = Arc::new(Policy::with_mode(settings.permission_mode, &ctx.workspace));
        let budget = Budget::new(settings.model_info.context_window, settings.max_output_tokens);
        let context = ContextManager::new(budget, settings.context, &system, &tools.specs(), &ledger);
        let requester = Requester::new(
            provider,
            settings.model,
            settings.temperature,
            settings.prompt_caching,
            settings.thinking_format,
        );
        Agent {
            requester,
            tools,
            ctx,
            system,
            transcript: Transcript::new(ledger, session),
            limits: Limits {
                max_turns: settings.max_turns,
                max_calls_per_response: settings.max_calls_per_response,
                max_cost_usd: settings.max_cost_usd,
                max_output_tokens: settings.max_output_tokens,
            },
            controls: Controls::new(policy),
            totals: Totals::new(settings.model_info),
            context,
            rules: RuleSet::default(),
            hooks: TurnHooks::default(),
            memory: None,
            evaluator_model: None,
            background: None,
            mcp: None,
            team: None,
            verify_changes: false,
            unverified: None,
            steering: Steering::default(),
        }
    }

    /// Makes a run that changed files end only after a check passed ([`verify`]).
    pub fn with_verification(mut self, on: bool) -> Agent {
        self.verify_changes = on;
        self
    }

    /// Tells the user, with the other warnings, what MCP servers still starting when the session
    /// began turn out to be (failed, tools changed: [`crate::mcp::McpServers::late_warnings`]).
    pub fn with_mcp(mut self, servers: Arc<crate::mcp::McpServers>) -> Agent {
        self.mcp = Some(servers);
        self
    }

    /// Sends a goal's evaluator requests to `model` at the session's provider instead of the
    /// session's model (`[goal] evaluator_model`).
    pub fn with_evaluator_model(mut self, model: Option<String>) -> Agent {
        self.evaluator_model = model.filter(|model| !model.trim().is_empty());
        self
    }

    /// Recalls from `memory` for each user prompt, and saves the files its `memory` writes change
    /// to the file history first (see [`crate::memory`]).
    pub fn with_memory(mut self, memory: Arc<SessionMemory>) -> Agent {
        self.memory = Some(memory);
        self
    }

    /// Sets the session's hooks.
    pub fn with_hooks(mut self, hooks: Hooks) -> Agent {
        self.hooks.set(hooks);
        self
    }

    /// Keeps file history for `/rewind` in `history` (see [`crate::history`]).
    pub fn with_history(mut self, history: FileHistory) -> Agent {
        self.transcript.set_history(history);
        self
    }

    /// Reads permission-mode changes from `modes` before each response's calls run; a change is
    /// recorded in the ledger and announced with [`AgentEvent::ModeChanged`].
    pub fn with_mode_watch(mut self, modes: watch::Receiver<PermissionMode>) -> Agent {
        self.controls.watch(modes);
        self
    }

    /// Loads `rules` when a file matching them is read (see [`crate::instructions::rules`]).
    pub fn with_rules(mut self, rules: RuleSet) -> Agent {
        self.rules = rules;
        self
    }

    /// Sends `context` (what the session starts with: the memory index, the local model's
    /// environment) as an injected message before the first user message, when the session has
    /// none yet; nothing when it is empty.
    pub fn with_session_context(mut self, context: String) -> Agent {
        self.hooks.set_session_context(context);
        self
    }

    /// Sends the repository's state (`state`, being gathered) at the front of the session context.
    /// With `after_first_response` (print mode) the first request does not wait for it: it is
    /// appended before the first request that follows a response (a one-request run never sends
    /// it). Either way only in a new session; nothing when it is empty.
    pub fn with_repository_state(
        mut self,
        state: Option<crate::prompt::RepositoryState>,
        after_first_response: bool,
    ) -> Agent {
        self.hooks.set_repository_state(state, after_first_response);
        self
    }

    /// Sets auto mode's reviewer: the session's own (`owns`: it is told the user's messages before
    /// each response's calls run) or a sub-agent's parent's.
    pub fn with_reviewer(mut self, reviewer: Arc<crate::auto_mode::Reviewer>, owns: bool) -> Agent {
        self.controls.set_reviewer(reviewer, owns);
        self
    }

    /// Sets the interactive approver; without one, every `ask` is a denial (headless).
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Agent {
        self.controls.set_approver(approver);
        self
    }

    /// Sets the permission policy (rules from the settings files, path guard, sandbox); without
    /// one, the agent decides by its mode alone.
    pub fn with_policy(mut self, policy: Arc<Policy>) -> Agent {
        self.controls.set_policy(policy);
        self
    }

    /// Counts the usage that sub-agents report to `meter` in this agent's totals and budget.
    pub fn with_usage_meter(mut self, meter: Arc<UsageMeter>) -> Agent {
        self.totals.set_meter(meter);
        self
    }

    /// The permission policy.
    pub fn policy(&self) -> &Arc<Policy> {
        self.controls.policy()
    }

    /// The ledger so far.
    pub fn ledger(&self) -> &[LedgerItem] {
        self.transcript.items()
    }

    /// Totals over every run of this agent.
    pub fn stats(&self) -> RunStats {
        self.totals.stats()
    }

    /// The tools on offer.
    pub fn tools(&self) -> &ToolRegistry {
        &self.tools
    }

    /// The context the agent's tools run in (workspace, file state, sandbox).
    pub fn tool_context(&self) -> &ToolContext {
        &self.ctx
    }

    /// The text of every assistant message of the ledger so far, in order, blank ones left out.
    pub fn assistant_texts(&self) -> Vec<String> {
        self.transcript.assistant_texts()
    }

    /// Appends an item to the ledger and the session file (handed to the OS before returning).
    /// When the file cannot be written, the session stops being saved and a warning says so; the
    /// ledger in memory goes on.
    /// A [`Meta::ToolsLoaded`] item also offers those tools from the next request on.
    pub fn append(&mut self, item: LedgerItem) {
        let loads = match &item {
            LedgerItem::Meta(Meta::ToolsLoaded { names }) => names.clone(),
            _ => Vec::new(),
        };
        self.transcript.append(item);
        self.context.sync(self.transcript.items());
        let mut loaded = false;
        for name in &loads {
            loaded |= self.tools.load(name);
        }
        if loaded {
            self.context.set_fixed(&self.system, &self.tools.specs());
        }
    }

    /// How full the context window is: the next request's size, the window, the largest items.
    pub fn context_usage(&self) -> ContextUsage {
        self.context.usage(self.transcript.items(), &self.system, &self.tools.specs())
    }

    /// The pairing guard (ARCHITECTURE.md §4.1): answers every call still without a result with an
    /// `Interrupted` result, so the ledger is always valid to send.
    pub fn repair_pairing(&mut self, why: &str) {
        for result in self.transcript.unpaired_results(why) {
            self.append(result);
        }
    }

    /// Sends the warnings collected since the last call.
    pub fn send_warnings(&mut self, events: &mpsc::UnboundedSender<AgentEvent>) {
        for warning in self.mcp.iter().flat_map(|servers| servers.late_warnings()) {
            self.transcript.warn(warning);
        }
        self.transcript.send_warnings(events);
    }

    /// Makes the session file durable (`fsync`); a failure becomes a warning.
    pub fn sync(&mut self) {
        self.transcript.sync();
    }

    /// Runs one user turn to its end and reports why it ended (also sent as
    /// [`AgentEvent::Finished`], with the [`RunReport`] of the turn's own ledger items). Every call
    /// has its result and the session file is synced when this returns.
    pub async fn run(
        &mut self,
        input: UserMessage,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> StopCause {
        let before = self.totals.stats();
        // The run's own items start here: its report covers them alone.
        let from = self.transcript.items().len();
        let (cause, final_text) = self.run_unfinished(input, events, cancel).await;
        let run_stats = self.totals.since(&before);
        let report = Some(RunReport::from_ledger(self.transcript.items(), from));
        let _ =
            events.send(AgentEvent::Finished { cause: cause.clone(), stats: run_stats, final_text, report });
        cause
    }

    /// [`Agent::run`] without the `Finished` event: the cause and the final text.
    pub(super) async fn run_unfinished(
        &mut self,
        input: UserMessage,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> (StopCause, String) {
        let started = Instant::now();
        let refused = self.submit(input, events, cancel).await;
        self.send_warnings(events);
        let cause = match refused.clone() {
            Some(refusal) => refusal,
            None => {
                self.reproduce_first(cancel).await;
                let cause = self.turn_loop(events, cancel).await;
                self.unanswered_prompt_left_out(cause)
            }
        };
        self.repair_pairing("the run ended before this call completed");
        self.sync();
        self.send_warnings(events);
        self.totals.add_duration(started.elapsed().as_millis() as u64);
        let final_text = match (refused.is_some(), self.unverified.take()) {
            (true, _) => String::new(),
            (false, Some(unverified)) => unverified,
            (false, None) => {
                self.unverified_at_stop(&cause).unwrap_or_else(|| self.transcript.last_assistant_text())
            }
        };
        (cause, final_text)
    }

    /// A run that ended on a failure before anything answered its prompt (a request that failed,
    /// the context that could not be fitted or compacted, a budget spent) leaves the prompt out of
    /// later requests, whichever path the failure took: a [`Meta::RequestFailed`] mark follows it
    /// (unless the failed request already put one), and the cause says so.
    fn unanswered_prompt_left_out(&mut self, cause: StopCause) -> StopCause {
        let (kind, message) = match &cause {
            StopCause::Error { kind, message } => (kind.clone(), message.clone()),
            StopCause::ContextExhausted { detail } => ("context_window_exceeded".to_string(), detail.clone()),
            StopCause::Budget { detail } => ("budget".to_string(), detail.clone()),
            _ => return cause,
        };
        let items = self.transcript.items();
        if !recovery::prompt_unanswered(items) {
            return cause;
        }
        let marked = items
            .iter()
            .rev()
            .take_while(|item| !matches!(item, LedgerItem::User(_)))
            .any(|item| matches!(item, LedgerItem::Meta(Meta::RequestFailed { .. })));
        if marked {
            return cause;
        }
        self.append(LedgerItem::Meta(Meta::RequestFailed { kind, message }));
        let note = recovery::PROMPT_LEFT_OUT;
        match cause {
            StopCause::Error { kind, message } => {
                StopCause::Error { kind, message: format!("{message}{note}") }
            }
            StopCause::ContextExhausted { detail } => {
                StopCause::ContextExhausted { detail: format!("{detail}{note}") }
            }
            StopCause::Budget { detail } => StopCause::Budget { detail: format!("{detail}{note}") },
            other => other,
        }
    }
}

/// Offers the deferred tools of `tools` that `ledger` records as loaded, in the order loaded.
pub(crate) fn load_recorded(tools: &mut ToolRegistry, ledger: &[LedgerItem]) {
    for item in ledger {
        if let LedgerItem::Meta(Meta::ToolsLoaded { names }) = item {
            for name in names {
                tools.load(name);
            }
        }
    }
}
