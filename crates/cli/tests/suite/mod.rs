mod context;
#[cfg(feature = "local")]
mod context_local;
mod extensions;
mod faults_session;
mod faults_stream;
mod faults_tools;
mod harness;
mod headless;
mod hooks;
mod kill;
mod mcp;
mod msrv;
mod permissions;
mod replay;
mod sessions;
pub mod support;
mod tmux;
mod tui;
