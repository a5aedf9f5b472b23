mod agent_loop;
mod approvals;
mod context;
mod extensions;
mod host;
mod rewind;
