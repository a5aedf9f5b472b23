mod agent_loop;
mod approvals;
mod context;
mod hooks;
mod host;
mod rewind;
