mod auto_mode;
#[cfg(feature = "local")]
mod auto_mode_local;
mod context;
#[cfg(feature = "local")]
mod context_local;
mod extensions;
mod faults_processes;
mod faults_session;
mod faults_stream;
mod faults_tools;
mod goals;
mod guards;
mod harness;
mod headless;
mod hooks;
mod kill;
mod mcp;
mod memory;
mod msrv;
mod permissions;
mod plan;
mod replay;
mod report;
mod scopes;
mod sessions;
pub mod support;
mod tmux;
mod tui;
