//! Lathe's core: the session host every front end starts sessions with, the agent loop, tool
//! execution under the permission gate, the session store and file history, configuration and
//! prompt assembly (ARCHITECTURE.md §1).
//!
//! The public surface is what front ends use: [`host`] (start a session, its handle and flags),
//! the [`Agent`] for embedding the loop directly, and the modules whose types appear in those
//! (`context`, `guards`, `hooks`, `instructions`, `mcp`, `paths`, `session`); everything else is
//! internal to the crate.
//!
//! Where things are:
//! - `host/`: the session builder (configuration → provider, tools, policy, MCP, agent), the
//!   session's op/event runner and its approver;
//! - `agent/`: the loop, in owned parts (see [`Agent`]); `requester`: the one model-request stream
//!   loop (turns and compaction summaries); `exec`: running one response's calls under the gate;
//! - `context/`: budget, pruning and compaction decisions; `history/`: file snapshots for
//!   `/rewind`; `session/`: the session files;
//! - `instructions/`, `prompt`: instruction files, path-scoped rules and the system prompt;
//! - `hooks/`, `skills/`, `subagent/`, `commands`, `mcp`, `tool_search`, `definitions`,
//!   `frontmatter`: extensions;
//! - `plan`: plan mode's `exit_plan_mode` tool and the answers to its plans; `question`: the
//!   `ask_user` tool and the answers to its questions;
//! - `permissions`, `tool_scope`, `guards`, `progress`, `recovery`, `text_calls`: the checks around
//!   calls and requests.
//!
//! No two modules of the crate import each other in a loop (`scripts/module-cycles.py`, run by
//! the test script).
//!
//! `core` never prints and never reads the terminal: a front end starts a session with
//! [`host::SessionBuilder`], sends [`lathe_protocol::AgentOp`]s and consumes
//! [`lathe_protocol::AgentEvent`]s.

#![warn(missing_docs)]

pub(crate) mod agent;
pub mod auto_mode;
pub(crate) mod awaited;
pub(crate) mod clock;
pub(crate) mod commands;
pub(crate) mod config;
pub mod context;
pub(crate) mod definitions;
pub(crate) mod exec;
pub(crate) mod frontmatter;
pub mod goal;
pub mod guards;
pub(crate) mod history;
pub mod hooks;
pub mod host;
pub mod instructions;
pub(crate) mod kept;
pub mod mcp;
pub mod memory;
pub mod paths;
pub(crate) mod permissions;
pub(crate) mod plan;
pub(crate) mod pricing;
pub(crate) mod profile;
pub(crate) mod progress;
pub(crate) mod prompt;
pub(crate) mod question;
pub(crate) mod recovery;
mod requester;
pub mod session;
pub(crate) mod skills;
pub(crate) mod subagent;
pub mod team;
pub(crate) mod text_calls;
pub(crate) mod tool_scope;
pub(crate) mod tool_search;
pub(crate) mod wakeup;

pub use agent::Rewound;
pub use agent::{Agent, AgentSettings};
pub use context::ContextSettings;
pub use exec::Approver;
pub use history::RewindError;
pub use host::{Flags, Interaction, SessionBuilder, SessionChoice, SessionHandle, StartError};
pub use session::SessionSummary;
