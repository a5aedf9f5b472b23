//! Model providers (ARCHITECTURE.md §1): one [`Provider`] trait, adapters for the three wire
//! protocols, retry with backoff, and the model catalog.
//!
//! # The story
//!
//! The agent loop holds a provider-neutral ledger. When it needs a response it builds a
//! [`ModelRequest`] and calls [`Provider::stream`] on whatever [`build_provider`] made from the
//! user's [`ProviderConfig`]. The adapter converts the ledger to its wire format at the edge —
//! Anthropic Messages ([`anthropic`]), OpenAI Chat Completions ([`openai_chat`]) or OpenAI Responses
//! ([`responses`]) — echoing reasoning only to the protocol that produced it, so a ledger started on
//! one provider continues on another. Prompt-cache breakpoints are placed on that encoded copy.
//!
//! The request goes out over reqwest ([`http`]). Transient failures (429, 529, 5xx, reset
//! connections, no headers in time, a stream that breaks — before or after content started) are
//! retried as a whole with backoff ([`retry`]), each retry announced as a `ModelEvent::Retry`
//! (which, after content, tells the consumer to discard what the failed attempt streamed). The response body is framed by eventsource-stream and decoded
//! ([`sse`] plus the protocol's `stream` module) into [`ModelEvent`]s normalised as in
//! `shared/cassettes/README.md` §1, ending with exactly one `Stop` or `Error`; errors are typed
//! ([`ProviderError`], mapped in [`error`]) and keep the provider's message verbatim. The loop folds
//! the events with [`lathe_protocol::Accumulator`].
//!
//! [`catalog`] knows context windows, output limits and prices, for budgeting and cost display.
//!
//! ```no_run
//! use futures::StreamExt;
//! use lathe_protocol::{LedgerItem, ModelRequest, UserMessage};
//! use lathe_provider::{Protocol, ProviderConfig, build_provider};
//! use tokio_util::sync::CancellationToken;
//!
//! # async fn demo() -> Result<(), lathe_protocol::ProviderError> {
//! let config = ProviderConfig {
//!     protocol: Protocol::Anthropic,
//!     model: "claude-sonnet-4-5".into(),
//!     ..ProviderConfig::default()
//! };
//! let provider = build_provider(&config)?;
//! let request = ModelRequest {
//!     messages: vec![LedgerItem::User(UserMessage::text("Hello"))],
//!     max_output_tokens: 1024,
//!     ..ModelRequest::default()
//! };
//! let mut events = provider.stream(&request, CancellationToken::new());
//! while let Some(event) = events.next().await {
//!     println!("{event:?}");
//! }
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

use std::pin::Pin;
use std::sync::Arc;

use futures::{Stream, StreamExt};
use lathe_protocol::{ModelEvent, ModelRequest, ProviderError};
use tokio_util::sync::CancellationToken;

pub mod anthropic;
pub mod catalog;
pub mod config;
pub mod error;
pub mod http;
pub mod openai_chat;
pub mod responses;
pub mod retry;
pub mod retry_hint;
pub mod sse;

pub use catalog::{ModelInfo, ModelInfoOverride, Price, estimate_cost, lookup};
pub use config::{Protocol, ProviderConfig, ResolvedConfig};
pub use http::{HttpProvider, encode_request};
pub use retry::RetryConfig;

/// A stream of [`ModelEvent`]s ending with exactly one `Stop` or `Error` event.
pub type ModelStream = Pin<Box<dyn Stream<Item = ModelEvent> + Send>>;

/// A source of model responses. Implemented by the HTTP adapters (Anthropic Messages, OpenAI Chat
/// Completions, OpenAI Responses) and by the local in-process model.
///
/// `stream` encodes the request immediately (so the returned stream does not borrow it), retries
/// transient failures as a whole (emitting `ModelEvent::Retry`; after content started, with
/// `discards_partial` set so the consumer drops the partial response), and stops promptly with
/// `ProviderError::Cancelled` when `cancel` fires.
pub trait Provider: Send + Sync {
    /// Short provider name: `anthropic`, `openai`, `responses`.
    fn name(&self) -> &str;
    /// Streams one response.
    fn stream(&self, request: &ModelRequest, cancel: CancellationToken) -> ModelStream;
    /// The tool calls of one response this provider's model is suggested to have run, when it is
    /// smaller than Lathe's default (a small local model); the user's setting wins. `None` = no
    /// suggestion.
    fn max_calls_per_response(&self) -> Option<u32> {
        None
    }
}

/// Builds the HTTP adapter for `config.protocol`.
///
/// # Errors
/// [`ProviderError::Config`] when no API key is found for a non-loopback base URL, the base URL or a
/// header is invalid, or the HTTP client cannot be built.
pub fn build_provider(config: &ProviderConfig) -> Result<Arc<dyn Provider>, ProviderError> {
    Ok(Arc::new(HttpProvider::new(config)?))
}

/// Decodes a complete response synchronously, through the same decoder the HTTP client uses: a
/// non-2xx `status` types `body` as an error response; a 2xx body is decoded as the protocol's SSE
/// stream. The result ends with exactly one `Stop` or `Error`.
pub fn decode_bytes(protocol: Protocol, status: u16, body: &[u8]) -> Vec<ModelEvent> {
    decode_chunks(protocol, status, &[body])
}

/// [`decode_bytes`] with the body delivered in the given chunks (any split, even inside a UTF-8
/// character or a line ending, must decode identically).
pub fn decode_chunks(protocol: Protocol, status: u16, chunks: &[&[u8]]) -> Vec<ModelEvent> {
    if !(200..300).contains(&status) {
        let body: Vec<u8> = chunks.concat();
        // No headers here: a non-JSON body is described as having no content-type.
        let headers = ::http::HeaderMap::new();
        return vec![ModelEvent::Error { error: error::error_from_status(status, &headers, &body) }];
    }
    let owned: Vec<Result<bytes::Bytes, ProviderError>> =
        chunks.iter().map(|chunk| Ok(bytes::Bytes::copy_from_slice(chunk))).collect();
    futures::executor::block_on(sse::decode_stream(protocol, futures::stream::iter(owned)).collect())
}

/// Collects a provider stream (for tests and one-shot callers).
pub async fn collect(
    provider: &dyn Provider,
    request: &ModelRequest,
    cancel: CancellationToken,
) -> Vec<ModelEvent> {
    provider.stream(request, cancel).collect().await
}
