mod agent_loop;
mod approvals;
mod context;
mod host;
mod rewind;
