mod agent_loop;
mod host;
mod rewind;
