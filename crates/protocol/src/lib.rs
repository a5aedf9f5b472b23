//! The data model every part of Lathe shares (ARCHITECTURE.md §2).
//!
//! - [`ledger`]: the append-only conversation record (user and assistant messages, tool results,
//!   compaction boundaries, meta items) — the single source of truth for what is sent and saved.
//! - [`request`]: one model request ([`ModelRequest`]) built from the ledger; [`conversation`]:
//!   which ledger items (and in which form) a request carries.
//! - [`event`]: what a provider streams back ([`ModelEvent`]), normalised across wire protocols,
//!   and [`accumulate::Accumulator`], which folds the stream into an [`AssistantMessage`].
//! - [`error`]: typed provider errors ([`ProviderError`]) that drive recovery.
//! - [`agent`]: the loop's outward events ([`AgentEvent`]) and inward operations ([`AgentOp`]).
//! - [`preview`]: what a tool shows a person about a call ([`ToolPreview`] before it runs,
//!   [`ResultView`] after); [`classify`]: classifications of [`AgentEvent`]s front ends share.
//! - [`report`]: the run report ([`RunReport`]) — files changed, commands and checks run, claims of
//!   the final answer without evidence — derived from the ledger.
//! - [`goal`] and [`loops`]: goals checked after every turn, and prompts run again and again.
//! - [`plan`]: a plan presented in plan mode and the user's answer to it.
//! - [`question`]: a question the model asks the user (`ask_user`) and the answer.
//! - [`tool_names`]: built-in tools' names and their Claude Code names, in one table.
//!
//! This crate has no I/O and no async runtime; everything here is plain data with serde.

#![warn(missing_docs)]

pub mod accumulate;
pub mod agent;
pub mod classify;
pub mod conversation;
pub mod error;
pub mod event;
pub mod extensions;
pub mod goal;
pub mod ledger;
pub mod loops;
pub mod memory;
pub mod meta;
pub mod mode;
pub mod op;
pub mod pairing;
pub mod plan;
pub mod preview;
pub mod question;
pub mod report;
pub mod request;
pub mod tool_names;

pub use accumulate::Accumulator;
pub use agent::{
    AgentEvent, AgentOp, CompactionTrigger, ContextItem, ContextUsage, FileRewind, PermissionAnswer,
    RewindAction, RunStats, StopCause, UserTurn,
};
pub use error::{ApiError, ProviderError};
pub use event::{ModelEvent, RetryInfo, StopReason, Usage};
pub use extensions::{UserCommand, UserCommandKind};
pub use ledger::{
    AssistantMessage, Compaction, Content, FileLines, LedgerItem, Meta, Receipt, Thinking, ThinkingFormat,
    ToolCall, ToolResult, ToolStatus, UserMessage, UserOrigin,
};
pub use mode::{PermissionMode, UnknownMode};
pub use preview::{FileChange, ResultView, ToolPreview};
pub use report::{CheckRun, Claim, CommandRun, FileChanged, RunReport};
pub use request::{ModelRequest, ResponseFormat, SystemBlock, ThinkingConfig, ToolSpec};
