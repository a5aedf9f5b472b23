mod agent_loop;
mod context;
mod host;
mod rewind;
