//! Anthropic Messages (`POST {base}/v1/messages`, `stream: true`).
//!
//! - [`request`]: ledger → Messages request body (system blocks, merged user turns, tool results
//!   with `is_error`, thinking echoed unchanged).
//! - [`cache`]: `cache_control` breakpoints placed on the encoded copy, never in the ledger.
//! - [`stream`]: SSE events → [`lathe_protocol::ModelEvent`]s.

pub mod cache;
pub mod request;
pub mod stream;
