//! OpenAI Responses (`POST {base}/responses`, `stream: true`, `store: false`).
//!
//! - [`request`]: ledger → the full `input` item list every time (nothing is stored server-side),
//!   reasoning items echoed with their `encrypted_content`.
//! - [`stream`]: typed events → [`lathe_protocol::ModelEvent`]s.

pub mod request;
pub mod stream;
