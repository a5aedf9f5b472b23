//! `lathe-mock`: a model server for tests, demos and benchmarks that speaks the three wire protocols Lathe
//! talks to — Anthropic Messages, OpenAI Chat Completions and OpenAI Responses — over real HTTP on loopback.
//!
//! # Modes
//!
//! * **Scripted** ([`Script`]): a JSON list of turns. Every model request, whatever its protocol, consumes the
//!   next turn and gets it encoded in that protocol: streamed as SSE when the request says `"stream": true`
//!   (one chunk per event, with optional delays, an optional mid-stream connection drop — after N events or
//!   right after the content —, an optional error event after the content, tool calls optionally sent without
//!   their index), else a plain JSON body. A script may also reject every request that carries an image. A turn can also be an HTTP error with a status, extra
//!   headers and a body (default: the provider's own error shape; a string body is sent verbatim, e.g. an
//!   HTML page from a proxy). A request after the last turn gets HTTP 400 "script exhausted". See [`Script`]
//!   for the format and [`ScriptTurn`] for every field. A script can also play the provider's checks: a
//!   context window (requests counted as `ceil(JSON body bytes / 4)` tokens; too long gets the provider's
//!   real 400 and usage reports the count), tool-call pairing, and side replies (a summary request) that
//!   consume no turn.
//! * **Cassette** ([`CassetteSet`]): serves recorded provider responses from a directory holding a
//!   `manifest.json` (the shared conformance corpus): `POST /cassette/<file>/<protocol suffix>` answers with
//!   the entry's recorded status, its recorded headers and the file's bytes verbatim.
//! * **Replay** ([`ReplayCase`]): serves a recorded agent run (`R<n>.json`) turn by turn, over whichever
//!   protocol the client speaks. The turn index comes from the request itself (the number of assistant turns
//!   already in the conversation), so retries are safe. Before answering, the server checks the request the
//!   way the case format requires (prompt present, every call of the previous turn answered exactly once,
//!   injections delivered, tools advertised); a request whose tool calls and results do not pair gets the
//!   provider's real HTTP 400 error text, and any other divergence gets HTTP 400 `replay_divergence` with a
//!   JSON diagnostic. Requests without tools are side requests (titles, summaries) and get a canned text.
//!
//! # Routes
//!
//! Routing is by path suffix, so base URLs with prefixes work:
//!
//! | route | meaning |
//! |---|---|
//! | `POST …/v1/messages` | Anthropic Messages (client base URL: `{url}`) |
//! | `POST …/chat/completions` | OpenAI Chat Completions (client base URL: `{url}/v1`) |
//! | `POST …/responses` | OpenAI Responses (client base URL: `{url}/v1`) |
//! | `POST /cassette/<file>/<suffix>` | cassette mode: the manifest entry `<file>`, e.g. base URL `{url}/cassette/anthropic/tool-use-only.sse` |
//! | `GET /_mock/stats` | [`Stats`] as JSON |
//! | `GET /_mock/requests` | every model request so far, as a JSON array of [`LoggedRequest`] |
//!
//! Every model request is kept in memory ([`MockServer::requests`]) and, when a log file is given, appended to
//! it as one JSON line once its response body has ended (so the line carries the status and the end time).
//!
//! # Running it
//!
//! In-process (every crate's tests do this):
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use lathe_mock::{MockServer, Mode, Script};
//! let script = Script::from_json(r#"{"turns": [{"text": "Hello", "text_chunks": 2}]}"#)?;
//! let server = MockServer::start(Mode::Scripted(script)).await?;
//! let anthropic_base = server.url();              // the client appends /v1/messages
//! let openai_base = format!("{}/v1", server.url()); // the client appends /chat/completions or /responses
//! # let _ = (anthropic_base, openai_base);
//! // … drive a client, then assert on what the server received:
//! assert!(server.requests().len() <= 1);
//! # Ok(()) }
//! ```
//!
//! # What the streams look like
//!
//! The encoders follow the recorded streams of `shared/cassettes/`: Anthropic `message_start`, `ping`,
//! content blocks (thinking with `signature_delta`, text, `tool_use` with `input_json_delta`), a padded
//! `content_block_stop`, `message_delta` with `stop_reason` and usage, `message_stop`; Chat chunks with
//! `choices[0].delta` (`reasoning_content`, `content`, `tool_calls` by index with id and name on each call's
//! first delta), a `finish_reason` chunk, the `choices: []` usage chunk when `stream_options.include_usage`
//! is set, and `data: [DONE]`; Responses `response.created`, output items (reasoning with summary and
//! `encrypted_content`, `message` with `output_text` deltas, `function_call` with argument deltas) and
//! `response.completed` (or `response.incomplete` for `max_tokens`). Usage numbers are reported as given:
//! Chat `prompt_tokens` = `input_tokens`, `cached_tokens` = `cache_read_input_tokens`.
//!
//! As a binary: `lathe-mock [--port N] [--log FILE] <scripted SCRIPT.json | cassette DIR | replay CASE.json>`
//! prints `listening on http://127.0.0.1:PORT` as its first line and serves until killed.

#![warn(missing_docs)]

mod cassette;
pub mod fixture;
mod log;
mod replay;
mod reply;
mod script;
mod server;
mod window;
mod wire;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use cassette::{CassetteEntry, CassetteSet};
pub use log::{LoggedRequest, Stats};
pub use replay::{ReplayCall, ReplayCase, ReplayTurn};
pub use script::{
    Script, ScriptError, ScriptStreamError, ScriptThinking, ScriptToolCall, ScriptTurn, ScriptUsage,
    SideReply,
};
pub use server::MockServer;
pub use window::{BYTES_PER_TOKEN, input_tokens, pairing_violation};

/// What the server serves; chosen once at start.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)] // built once per server; the variants are the public contract
pub enum Mode {
    /// Answer each model request with the next turn of a script.
    Scripted(Script),
    /// Serve recorded response bodies byte for byte.
    Cassette(CassetteSet),
    /// Replay a recorded agent run, checking every request (see `shared/replay/FORMAT.md` §2).
    Replay(ReplayCase),
}

/// The wire protocol of a request, decided by the path suffix of the request.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Protocol {
    /// Anthropic Messages, `POST …/v1/messages`.
    Anthropic,
    /// OpenAI Chat Completions, `POST …/chat/completions`.
    OpenaiChat,
    /// OpenAI Responses, `POST …/responses`.
    OpenaiResponses,
}

impl Protocol {
    /// The protocol whose endpoint `path` ends with, if any.
    pub fn from_path(path: &str) -> Option<Protocol> {
        let path = path.trim_end_matches('/');
        if path.ends_with("/v1/messages") {
            Some(Protocol::Anthropic)
        } else if path.ends_with("/chat/completions") {
            Some(Protocol::OpenaiChat)
        } else if path.ends_with("/responses") {
            Some(Protocol::OpenaiResponses)
        } else {
            None
        }
    }

    /// The path suffix a client appends to its base URL for this protocol.
    pub fn path_suffix(self) -> &'static str {
        match self {
            Protocol::Anthropic => "/v1/messages",
            Protocol::OpenaiChat => "/chat/completions",
            Protocol::OpenaiResponses => "/responses",
        }
    }

    /// The manifest / serde name: `anthropic`, `openai-chat` or `openai-responses`.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::Anthropic => "anthropic",
            Protocol::OpenaiChat => "openai-chat",
            Protocol::OpenaiResponses => "openai-responses",
        }
    }
}

/// Errors loading a script, a cassette manifest or a replay case.
#[derive(Debug, thiserror::Error)]
pub enum MockError {
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A file (or text) is not the JSON the mode expects.
    #[error("invalid {what}{}: {source}", path.as_ref().map(|p| format!(" in {}", p.display())).unwrap_or_default())]
    Json {
        /// What was being parsed ("script", "cassette manifest", "replay case").
        what: &'static str,
        /// The file, when the text came from one.
        path: Option<PathBuf>,
        /// The parse error, with line and column.
        source: serde_json::Error,
    },
    /// The JSON parsed but makes no sense (e.g. a turn with both an error and text).
    #[error("invalid {what}: {detail}")]
    Invalid {
        /// What was being checked.
        what: &'static str,
        /// What is wrong and where.
        detail: String,
    },
}

pub(crate) fn read_text(path: &std::path::Path) -> Result<String, MockError> {
    std::fs::read_to_string(path).map_err(|source| MockError::Io { path: path.to_path_buf(), source })
}
