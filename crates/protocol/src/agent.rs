//! The agent loop's interface to front ends (ARCHITECTURE.md §1): the loop emits [`AgentEvent`]s and
//! receives [`AgentOp`]s. Print mode, the terminal UI and the remote UI consume the same stream; a
//! permission prompt is an event plus an op, never a terminal read inside the loop.

use serde::{Deserialize, Serialize};

use crate::event::{RetryInfo, Usage};
use crate::ledger::{AssistantMessage, Content, ToolCall, ToolResult};

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
    /// A complete assistant message, as appended to the ledger.
    AssistantMessage {
        /// The message.
        message: AssistantMessage,
    },
    /// A tool call is about to be checked and run.
    ToolCallStarted {
        /// The call.
        call: ToolCall,
    },
    /// The loop needs a permission decision; answer with [`AgentOp::Permission`].
    PermissionRequest {
        /// The call waiting for a decision.
        call: ToolCall,
        /// Why it needs asking ("edits a file", "runs a command that is not read-only").
        reason: String,
    },
    /// A tool call finished (or was denied / interrupted); the result is in the ledger.
    ToolResult {
        /// The result, bound to its call id.
        result: ToolResult,
        /// Tool name.
        tool: String,
        /// Wall time in milliseconds.
        elapsed_ms: u64,
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
        /// Totals of this run.
        stats: RunStats,
    },
    /// Something the user should know that does not stop the run.
    Warning {
        /// One line.
        message: String,
    },
    /// The run ended.
    Finished {
        /// Why.
        cause: StopCause,
        /// The run's totals.
        stats: RunStats,
        /// The last assistant text.
        final_text: String,
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
    /// `error_no_progress`, `error_cancelled`, `error_refused`, `error_api`.
    pub fn subtype(&self) -> &'static str {
        match self {
            StopCause::Completed => "success",
            StopCause::MaxTurns { .. } => "error_max_turns",
            StopCause::Budget { .. } => "error_budget",
            StopCause::NoProgress { .. } => "error_no_progress",
            StopCause::Cancelled => "error_cancelled",
            StopCause::Refused => "error_refused",
            StopCause::Error { .. } => "error_api",
        }
    }
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

/// What a front end tells the loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum AgentOp {
    /// A new user message.
    UserInput {
        /// Text and images.
        content: Vec<Content>,
    },
    /// The answer to a [`AgentEvent::PermissionRequest`].
    Permission {
        /// The call it answers.
        call_id: String,
        /// The decision.
        answer: PermissionAnswer,
    },
    /// Stop the running turn: abort the request and kill running tools.
    Cancel,
}

/// A user's answer to a permission prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum PermissionAnswer {
    /// Run it this once.
    AllowOnce,
    /// Run it and remember a rule for similar calls this session.
    AllowAlways,
    /// Do not run it; the optional feedback goes to the model.
    Deny {
        /// What the user wants instead.
        feedback: Option<String>,
    },
}
