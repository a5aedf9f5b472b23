mod agent_loop;
mod approvals;
mod context;
mod extensions;
mod hooks;
mod host;
mod rewind;
mod user_command;
