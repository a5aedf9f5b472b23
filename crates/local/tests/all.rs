//! Integration tests of the local provider. Everything that runs the model needs the `llama`
//! feature and the 0.5B GGUF (from `$LATHE_LOCAL_MODEL` or the default cache path; fetch it with
//! `cargo run -p lathe-local --example fetch -- 0.5b`): with the feature on and no model, these
//! tests fail rather than skip.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[cfg(feature = "llama")]
mod suite;
