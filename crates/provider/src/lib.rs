//! Model providers (ARCHITECTURE.md §1): one [`Provider`] trait, adapters for the three wire
//! protocols, retry with backoff, and the model catalog.

use std::pin::Pin;

use futures::Stream;
use lathe_protocol::{ModelEvent, ModelRequest};
use tokio_util::sync::CancellationToken;

/// A stream of [`ModelEvent`]s ending with exactly one `Stop` or `Error` event.
pub type ModelStream = Pin<Box<dyn Stream<Item = ModelEvent> + Send>>;

/// A source of model responses. Implemented by the HTTP adapters (Anthropic Messages, OpenAI Chat
/// Completions, OpenAI Responses) and by the local in-process model.
///
/// `stream` encodes the request immediately (so the returned stream does not borrow it), retries
/// transient failures before any content arrives (emitting `ModelEvent::Retry`), and stops promptly
/// with `ProviderError::Cancelled` when `cancel` fires.
pub trait Provider: Send + Sync {
    /// Short provider name: `anthropic`, `openai`, `responses`, `local`.
    fn name(&self) -> &str;
    /// Streams one response.
    fn stream(&self, request: &ModelRequest, cancel: CancellationToken) -> ModelStream;
}
