//! Lathe's core: the agent loop, tool execution under the permission gate, the session store,
//! configuration and prompt assembly (ARCHITECTURE.md §1).
//!
//! `core` never prints and never reads the terminal: it emits [`lathe_protocol::AgentEvent`]s and
//! takes user input, permission answers and cancellation from its caller.

pub mod agent;
pub mod config;
pub mod exec;
pub mod paths;
pub mod progress;
pub mod prompt;
pub mod session;

pub use agent::{Agent, AgentError, AgentSettings};
pub use exec::Approver;
