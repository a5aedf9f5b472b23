mod agent_loop;
mod approvals;
mod host;
mod rewind;
