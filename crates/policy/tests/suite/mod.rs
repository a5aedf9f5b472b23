mod auto_mode;
mod bad_input;
mod decisions;
mod memory;
mod sandbox;
