//! The local model in a process of its own: [`ChildProvider`] is the [`Provider`] `lathe` uses,
//! and [`serve`] (feature `llama`) is what the model process (`lathe-local-model`) runs.
//!
//! Why: llama.cpp's static initialisers fill about 2.4 MB of heap when a program that links it
//! loads, and it brings libstdc++ and libgomp with it, whether or not a local model is ever used.
//! `lathe` links none of it; the model process, started only when the local provider is chosen,
//! does.
//!
//! Flow: [`ChildProvider::spawn`] starts the model process beside the `lathe` executable, writes
//! the [`LocalConfig`] as the first line of its stdin and waits for `ready` (the model loaded,
//! about a second for the 0.5B) or `failed` (the error [`LocalProvider::new`] returned, said as
//! it would have been in-process). Each [`Provider::stream`] then writes one `request` line with
//! an id; the process answers with `event` lines for that id, in order, the last one `Stop` or
//! `Error`. Cancelling the stream, or dropping it, writes a `cancel` line. Everything is one JSON
//! object per line. When `lathe` drops the provider (or exits) the process's stdin closes and it
//! ends; it is also killed.
//!
//! [`LocalProvider`]: crate::LocalProvider
//! [`LocalProvider::new`]: crate::LocalProvider::new

use serde::{Deserialize, Serialize};

use lathe_protocol::{ModelEvent, ModelRequest, ProviderError};

mod client;
#[cfg(feature = "llama")]
mod serve;

pub use client::ChildProvider;
#[cfg(feature = "llama")]
pub use serve::serve;

/// File name of the model process's executable, looked for beside the running executable.
pub const RUNNER_NAME: &str = "lathe-local-model";

/// A line from `lathe` to the model process (after the first, the [`crate::LocalConfig`]).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum ToModel {
    /// Stream a response to `request`; its events carry `id`.
    Request { id: u64, request: Box<ModelRequest> },
    /// Stop the response `id` (it ends with a `Cancelled` error).
    Cancel { id: u64 },
}

/// A line from the model process to `lathe`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum FromModel {
    /// The model is loaded; its name is the GGUF file's stem.
    Ready { model_name: String },
    /// The model could not be loaded.
    Failed { error: ProviderError },
    /// One event of the response `id`.
    Event { id: u64, event: ModelEvent },
}
