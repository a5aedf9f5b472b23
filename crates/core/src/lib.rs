//! Lathe's core: the session host every front end starts sessions with, the agent loop, tool
//! execution under the permission gate, the session store and file history, configuration and
//! prompt assembly (ARCHITECTURE.md §1).
//!
//! `core` never prints and never reads the terminal: a front end starts a session with
//! [`host::SessionBuilder`], sends [`lathe_protocol::AgentOp`]s and consumes
//! [`lathe_protocol::AgentEvent`]s.

pub mod agent;
pub mod commands;
pub mod config;
pub mod context;
mod controls;
pub mod definitions;
pub mod exec;
pub mod frontmatter;
pub mod guards;
pub mod history;
pub mod hooks;
pub mod host;
pub mod instructions;
pub mod mcp;
pub mod paths;
pub mod permissions;
pub mod pricing;
pub mod profile;
pub mod progress;
pub mod prompt;
pub mod recovery;
pub mod session;
pub mod skills;
mod snapshot;
pub mod subagent;
pub mod text_calls;
pub mod tool_scope;

pub use agent::{Agent, AgentSettings};
pub use context::ContextSettings;
pub use exec::Approver;
pub use host::{Flags, Interaction, SessionBuilder, SessionChoice, SessionHandle, StartError};
pub use session::SessionSummary;
pub use snapshot::Rewound;
