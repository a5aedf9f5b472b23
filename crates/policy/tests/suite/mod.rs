mod bad_input;
mod decisions;
mod sandbox;
