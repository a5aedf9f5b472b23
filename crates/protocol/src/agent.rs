//! The agent loop's interface to front ends (ARCHITECTURE.md §1): the loop emits [`AgentEvent`]s
//! and receives [`AgentOp`]s (defined in [`crate::op`]). Print mode, the terminal UI and the remote
//! UI consume the same stream; a permission prompt is an event plus an op, never a terminal read
//! inside the loop.

use serde::{Deserialize, Serialize};

use crate::event::{RetryInfo, Usage};
use crate::ledger::{AssistantMessage, ToolCall, ToolResult};
use crate::mode::PermissionMode;
pub use crate::op::{AgentOp, FileRewind, PermissionAnswer, RewindAction, UserTurn};
use crate::preview::{ResultView, ToolPreview};
use crate::report::RunReport;

/// What the loop tells front ends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    /// The session is ready.
    SessionStarted {
        /// Session id (also the session file's name).
        session_id: String,
        /// Model name.
        model: String,
        /// Provider name.
        provider: String,
        /// Model-facing names of the tools on offer.
        tools: Vec<String>,
        /// Workspace root.
        cwd: String,
        /// The permission mode in force.
        permission_mode: PermissionMode,
        /// The session file, or `None` when nothing is saved (see the warning that says why).
        session_file: Option<String>,
        /// User turns already in the conversation (0 for a new session).
        resumed_turns: u32,
        /// The sandbox `shell` commands run in, one line: mode, network and backend, or why no
        /// backend works (`workspace-write, network off, bubblewrap`; `off (…)`).
        sandbox: String,
    },
    /// A model request is about to be sent (1-based turn within this user turn).
    TurnStarted {
        /// Turn number.
        turn: u32,
    },
    /// Streaming assistant text.
    TextDelta {
        /// The piece.
        text: String,
    },
    /// Streaming reasoning text.
    ThinkingDelta {
        /// The piece.
        text: String,
    },
    /// How much of the current response has streamed, counting what `TextDelta` does not show
    /// (tool-call arguments, reasoning): sent with each streamed piece, so a front end can show
    /// that the model is working (a status line).
    OutputProgress {
        /// Characters of text, reasoning and tool-call arguments streamed so far in this response.
        chars: u64,
    },
    /// A complete assistant message, as appended to the ledger.
    AssistantMessage {
        /// The message.
        message: AssistantMessage,
    },
    /// A tool call is about to be checked and run.
    ToolCallStarted {
        /// The call.
        call: ToolCall,
        /// One line about the call made by its tool (the path, the command, the pattern; at most
        /// 120 characters), the same as the result's receipt summary; empty when the arguments
        /// did not arrive whole.
        #[serde(default)]
        summary: String,
    },
    /// The loop needs a permission decision; answer with [`AgentOp::Permission`].
    PermissionRequest {
        /// The call waiting for a decision.
        call: ToolCall,
        /// Why it needs asking ("edits a file", "runs a command that is not read-only").
        reason: String,
        /// The prefix rules an [`PermissionAnswer::AllowAlways`] answer stores
        /// (`Bash(cargo test *)`), comma-separated; `None` when no rule is safe to store.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        suggestion: Option<String>,
        /// What the call would do, made by its tool: the diff of an edit or write against the file
        /// on disk, a command and its directory, a URL; `None` when the tool gives none (the
        /// front end then shows the arguments).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        preview: Option<ToolPreview>,
    },
    /// The model presented a plan with `exit_plan_mode`; answer with [`AgentOp::PlanAnswer`]
    /// (a headless session does not wait: its run ends with the plan).
    PlanReady(crate::plan::PlanReady),
    /// The model asked the user a question with `ask_user`; answer with
    /// [`AgentOp::QuestionAnswer`] (only an interactive session asks).
    Question(crate::question::Question),
    /// A tool call finished (or was denied / interrupted); the result is in the ledger.
    ToolResult {
        /// The result, bound to its call id.
        result: ToolResult,
        /// Tool name.
        tool: String,
        /// Wall time in milliseconds.
        elapsed_ms: u64,
        /// How the tool suggests showing a successful result (an edit's diff, `read 42 lines`);
        /// `None` to show the output itself.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        view: Option<ResultView>,
    },
    /// The model's task list changed (`todo_write`).
    Todos {
        /// The items as the model wrote them.
        items: serde_json::Value,
    },
    /// A provider retry is scheduled.
    Retry(RetryInfo),
    /// Usage of the last response and the running totals.
    Usage {
        /// The last response's usage.
        last: Usage,
        /// Totals of every run of this session so far (since it was opened).
        stats: RunStats,
        /// How full the context window is after this response.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        context: Option<ContextUsage>,
    },
    /// Old outputs of re-readable tools were replaced by one-line stubs (recorded in the ledger
    /// as a `context_pruned` meta item).
    ContextPruned {
        /// How many tool results were stubbed.
        results: u32,
        /// Estimated size of the next request before pruning, in tokens.
        tokens_before: u64,
        /// Estimated size after pruning, in tokens.
        tokens_after: u64,
    },
    /// The conversation was compacted: a summary boundary was appended to the ledger.
    Compacted {
        /// What started it.
        trigger: CompactionTrigger,
        /// Estimated size of the next request before compaction, in tokens.
        tokens_before: u64,
        /// Estimated size after compaction, in tokens.
        tokens_after: u64,
        /// Items replaced by the summary.
        summarized_items: u32,
        /// Items kept verbatim after the summary.
        kept_items: u32,
        /// The oldest rounds left out of the summary request so that it fit the window.
        omitted_rounds: u32,
    },
    /// The permission mode changed (recorded in the ledger as a mode-change meta item).
    ModeChanged {
        /// The new mode.
        mode: PermissionMode,
    },
    /// The model (and possibly the provider) changed; the next request uses it.
    ModelChanged {
        /// The new model.
        model: String,
        /// The provider serving it.
        provider: String,
    },
    /// The answer to [`AgentOp::ListTurns`]: the user turns of the conversation, oldest first.
    UserTurns {
        /// One entry per user turn.
        turns: Vec<UserTurn>,
    },
    /// The conversation and the files were rewound ([`AgentOp::Rewind`]).
    Rewound {
        /// The user turn rewound to: the conversation now ends just before it.
        turn: u32,
        /// The prompt of that turn, for the front end to offer again.
        prompt: String,
        /// The files that were restored, re-created or deleted.
        files: Vec<FileRewind>,
    },
    /// A loop's state: when it starts, after each tick, when it ends (`state.ended` says why), and
    /// when a resumed session finds one running.
    Loop {
        /// Where the loop stands.
        state: crate::loops::LoopState,
    },
    /// A goal's state after an iteration (and when it ends, before the run's `Finished`).
    Goal {
        /// Where the goal stands.
        outcome: crate::goal::GoalOutcome,
    },
    /// A command the user ran ([`AgentOp::RunCommand`]) ended; its output goes to the model with
    /// the next user message.
    CommandFinished {
        /// The command line.
        command: String,
        /// One line saying what it ran, as for a call of the shell tool.
        summary: String,
        /// Stdout and stderr, merged, cut at 64 KiB.
        output: String,
        /// Exit status; `None` when it was killed by a signal or could not run.
        exit_code: Option<i32>,
        /// Wall time in ms.
        elapsed_ms: u64,
    },
    /// Progress of a sub-agent started by the `task` call `parent_call_id`: one of the
    /// sub-agent's own events (its tool calls, results, usage, its `finished`).
    Subagent {
        /// The parent's `task` call this sub-agent answers.
        parent_call_id: String,
        /// The sub-agent's id (its transcript is `<session>/subagents/<id>.jsonl`).
        agent_id: String,
        /// The agent type (`explore`, `plan`, `general` or a custom agent's name).
        subagent_type: String,
        /// The sub-agent's event.
        event: Box<AgentEvent>,
    },
    /// A background sub-agent started, ended or was killed (what `/status` lists).
    BackgroundAgent {
        /// The sub-agent's id.
        agent_id: String,
        /// The agent type, or `fork`.
        subagent_type: String,
        /// The call's short description.
        description: String,
        /// `running`, then `completed`, `failed` or `killed`.
        status: String,
    },
    /// The session's `/name` commands besides the front end's own (custom command files and
    /// skills), sent after `SessionStarted` and the start's warnings.
    Commands {
        /// By name.
        commands: Vec<crate::extensions::UserCommand>,
    },
    /// Messages sent with [`crate::AgentOp::Steer`] joined the running turn: they are in the
    /// ledger, and the request about to go out carries them.
    Steered {
        /// How many messages, in the order they were sent.
        count: usize,
    },
    /// Something the user should know that does not stop the run.
    Warning {
        /// One line.
        message: String,
    },
    /// The answer to [`AgentOp::Report`]: the report of the whole conversation so far.
    Report {
        /// The report.
        report: RunReport,
    },
    /// The run ended.
    Finished {
        /// Why.
        cause: StopCause,
        /// The run's totals.
        stats: RunStats,
        /// The last assistant text.
        final_text: String,
        /// What the run did and the claims of its answer without evidence, from the run's own
        /// ledger items; `None` when no run started (a `/command` that could not expand).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        report: Option<RunReport>,
    },
}

/// Why a run ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "cause", rename_all = "snake_case")]
pub enum StopCause {
    /// The model answered without tool calls.
    Completed,
    /// The turn cap was reached.
    MaxTurns {
        /// The cap.
        max_turns: u32,
    },
    /// A token, cost or time budget was exhausted.
    Budget {
        /// Which budget, e.g. "cost $0.51 ≥ $0.50".
        detail: String,
    },
    /// The same tool call failed the same way repeatedly.
    NoProgress {
        /// Tool name and what repeated.
        detail: String,
    },
    /// The user cancelled.
    Cancelled,
    /// The model refused.
    Refused,
    /// The conversation could not be made to fit the context window: compaction failed three
    /// times in a row.
    ContextExhausted {
        /// What failed, and what the user can do.
        detail: String,
    },
    /// A hook stopped the run: a UserPromptSubmit hook refused the prompt, or a hook answered
    /// `"continue": false`.
    Hook {
        /// The hook's reason (its stderr or `stopReason`).
        reason: String,
    },
    /// Auto mode's reviewer blocked too many calls (3 in a row or 20 in the session) and nobody
    /// can be asked (headless).
    AutoBlocked {
        /// How many blocks, and the last reason.
        detail: String,
    },
    /// A provider or internal error stopped the run.
    Error {
        /// Stable kind name (`auth`, `bad_request`, `network`, …).
        kind: String,
        /// The message, with the provider's text verbatim.
        message: String,
    },
}

impl StopCause {
    /// Whether the run succeeded.
    pub fn is_success(&self) -> bool {
        matches!(self, StopCause::Completed)
    }

    /// Stable subtype name for JSON output: `success`, `error_max_turns`, `error_budget`,
    /// `error_no_progress`, `error_cancelled`, `error_refused`, `error_context`, `error_hook`,
    /// `error_auto_blocked`, `error_api`.
    pub fn subtype(&self) -> &'static str {
        match self {
            StopCause::Completed => "success",
            StopCause::MaxTurns { .. } => "error_max_turns",
            StopCause::Budget { .. } => "error_budget",
            StopCause::NoProgress { .. } => "error_no_progress",
            StopCause::Cancelled => "error_cancelled",
            StopCause::Refused => "error_refused",
            StopCause::ContextExhausted { .. } => "error_context",
            StopCause::Hook { .. } => "error_hook",
            StopCause::AutoBlocked { .. } => "error_auto_blocked",
            StopCause::Error { .. } => "error_api",
        }
    }
}

/// What started a compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionTrigger {
    /// The next request would not have fit the window (less the output reserve and a margin).
    Auto,
    /// The provider answered that the prompt is too long.
    Overflow,
    /// The user asked for it (`/compact [focus]`).
    Manual,
}

/// How full the context window is (FEATURES.md §E accounting): the last reported input count plus
/// an estimate of what was added since.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ContextUsage {
    /// Tokens the next request would take (system, tools and messages).
    pub used_tokens: u64,
    /// The model's context window in tokens.
    pub window_tokens: u64,
    /// `used_tokens` as a percentage of the window (0–100, may exceed 100 before a compaction).
    pub percent: f64,
    /// The largest items of the next request, largest first (at most five).
    pub largest: Vec<ContextItem>,
}

/// One entry of [`ContextUsage::largest`].
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ContextItem {
    /// What it is: `system prompt`, `tool schemas`, `read_file src/lib.rs`, `user message`…
    pub label: String,
    /// Estimated size in tokens.
    pub tokens: u64,
}

/// Totals of one run.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct RunStats {
    /// Model requests made.
    pub turns: u32,
    /// Tool calls executed or answered.
    pub tool_calls: u32,
    /// Input tokens, summed over responses.
    pub input_tokens: u64,
    /// Output tokens, summed.
    pub output_tokens: u64,
    /// Cache-read input tokens, summed.
    pub cache_read_tokens: u64,
    /// Cache-write input tokens, summed.
    pub cache_write_tokens: u64,
    /// Estimated cost in US dollars from the model catalog's prices.
    pub cost_usd: f64,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
}
