//! Lathe's MCP client: connects to the MCP servers a user already has configured and offers their
//! tools to the model (FEATURES.md §H, ARCHITECTURE.md §1). Built on the official Rust SDK, `rmcp`;
//! no JSON-RPC is written here.
//!
//! Order of operations for a session:
//! 1. [`McpConfig::load`] reads Claude Code's `.mcp.json` format from `~/.lathe/mcp.json`, the
//!    project's `.mcp.json` (its servers only when approved, see [`approvals`]) and `--mcp-config`,
//!    expanding `${VAR}` / `${VAR:-default}`;
//! 2. [`McpStartup::start`] starts every server in parallel in the background (stdio child process
//!    in its own process group, or streamable HTTP), each within a start-up time limit;
//! 3. [`McpStartup::session`] collects the tools (`mcp__<server>__<tool>`): it waits for the
//!    servers whose tool list is not remembered from an earlier start ([`cache`]), and offers the
//!    remembered list of the others, which go on starting in the background; one that failed,
//!    exited or hung is reported once and left out;
//! 4. [`McpTool::call`] waits for a server still starting (at most its start-up limit), runs a
//!    call with a time limit and the turn's cancellation token and converts the result to Lathe
//!    content; core caps and spills it like a built-in tool's output;
//! 5. [`McpServers::shutdown`] (or dropping it) ends every server with the session.
//!
//! This crate depends on `lathe-protocol` only among Lathe's crates: rmcp's types are converted
//! here, and `lathe-core` wraps [`McpTool`] as one of its tools.

#![warn(missing_docs)]

pub mod approvals;
pub mod cache;
pub mod config;
mod connect;
pub mod expand;
mod http;
mod result;
mod servers;
mod slot;
mod tool;

pub use config::{McpConfig, McpConfigError, Scope, ServerConfig, SkipReason, Skipped, Sources, Transport};
pub use connect::McpSettings;
pub use servers::{McpServers, McpStartup, ServerReport, ServerStatus};
pub use tool::{MAX_TOOL_NAME_CHARS, McpCallError, McpOutput, McpTool, tool_name};
