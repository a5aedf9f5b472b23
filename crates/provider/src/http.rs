//! The HTTP client shared by the three adapters, with retries.
//!
//! Flow of one [`Provider::stream`] call: encode the request (once) → POST it → on a 2xx status,
//! stream the body through `sse::decode_stream` and forward its events; on an error status,
//! read the (small) body and type the error. A retryable failure — an error status, a reset
//! connection, no response headers within `first_byte_timeout_ms`, an in-stream overload or
//! server error, a dropped or silent body — is announced with `ModelEvent::Retry` and the whole
//! request is sent again after the [`RetryConfig`] delay:
//! - before any content, invisibly: `Started` and `Usage` events are held back until content
//!   arrives, so the consumer never sees the abandoned attempt;
//! - after content started (text, thinking or a tool call streamed, then the stream broke), with
//!   `RetryInfo::discards_partial` set: the consumer drops what it received (the accumulator
//!   starts over), so a half-streamed response is never stored, echoed back or run.
//!
//! Only the user's cancel ends a stream with content that is not a complete response: cancellation
//! is checked around every await, and the stream then ends with `ProviderError::Cancelled` and
//! sends nothing more.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::{Stream, StreamExt};
use lathe_protocol::{ModelEvent, ModelRequest, ProviderError, RetryInfo};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::config::{Protocol, ProviderConfig};
use crate::error::error_from_status;
use crate::retry::RetryConfig;
use crate::sse::decode_stream;
use crate::{ModelStream, Provider};

/// Largest error body read in full, in bytes.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// An adapter speaking one wire protocol over HTTP.
#[derive(Debug, Clone)]
pub struct HttpProvider {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    protocol: Protocol,
    endpoint: String,
    headers: reqwest::header::HeaderMap,
    model: String,
    client: reqwest::Client,
    first_byte_timeout: Duration,
    idle_timeout: Duration,
    retry: RetryConfig,
}

impl HttpProvider {
    /// Builds the adapter for `config.protocol`.
    ///
    /// # Errors
    /// [`ProviderError::Config`] for a missing key (non-loopback base URL), a bad base URL, an
    /// invalid header, or an HTTP client that cannot be built.
    pub fn new(config: &ProviderConfig) -> Result<Self, ProviderError> {
        let resolved = config.resolve()?;
        let mut headers = reqwest::header::HeaderMap::new();
        for (name, value) in &resolved.headers {
            let header_name = reqwest::header::HeaderName::from_bytes(name.as_bytes()).map_err(|err| {
                ProviderError::Config { message: format!("invalid header name {name:?}: {err}") }
            })?;
            let mut header_value = reqwest::header::HeaderValue::from_str(value).map_err(|err| {
                ProviderError::Config { message: format!("invalid value for header {name:?}: {err}") }
            })?;
            header_value.set_sensitive(name == "authorization" || name == "x-api-key");
            headers.insert(header_name, header_value);
        }
        headers.insert(
            reqwest::header::CONTENT_TYPE,
            reqwest::header::HeaderValue::from_static("application/json"),
        );
        headers
            .insert(reqwest::header::ACCEPT, reqwest::header::HeaderValue::from_static("text/event-stream"));
        install_tls_provider();
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(tls_config()?)
            .connect_timeout(Duration::from_millis(config.connect_timeout_ms))
            .build()
            .map_err(|err| ProviderError::Config {
                message: format!("cannot build the HTTP client: {err}"),
            })?;
        Ok(HttpProvider {
            inner: Arc::new(Inner {
                protocol: config.protocol,
                endpoint: resolved.endpoint,
                headers,
                model: config.model.clone(),
                client,
                first_byte_timeout: Duration::from_millis(config.first_byte_timeout_ms),
                idle_timeout: Duration::from_millis(config.idle_timeout_ms),
                retry: config.retry.clone(),
            }),
        })
    }

    /// The URL requests are posted to.
    pub fn endpoint(&self) -> &str {
        &self.inner.endpoint
    }

    /// The protocol spoken.
    pub fn protocol(&self) -> Protocol {
        self.inner.protocol
    }
}

/// The TLS settings of the providers' client: rustls on ring, checking certificates against
/// Mozilla's root certificates compiled into the binary (webpki-roots), offering HTTP/2 and then
/// HTTP/1.1 (ALPN). Nothing is read from the system, so building the client costs no start-up
/// time. Errors when ring offers none of rustls's safe protocol versions (it always does).
fn tls_config() -> Result<rustls::ClientConfig, ProviderError> {
    let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|err| ProviderError::Config { message: format!("cannot set up TLS: {err}") })?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

/// Installs rustls's ring crypto provider as the process default: reqwest is built without a
/// provider of its own (the workspace's `rustls-no-provider` feature) and panics when it builds a
/// client with none installed. Installing again, or after another crate did, changes nothing.
pub fn install_tls_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// Encodes `request` for `protocol`; `model` fills an empty `request.model`.
pub fn encode_request(protocol: Protocol, request: &ModelRequest, model: &str) -> Value {
    match protocol {
        Protocol::Anthropic => crate::anthropic::request::encode(request, model),
        Protocol::OpenAiChat => crate::openai_chat::request::encode(request, model),
        Protocol::OpenAiResponses => crate::responses::request::encode(request, model),
    }
}

impl Provider for HttpProvider {
    fn name(&self) -> &str {
        self.inner.protocol.provider_name()
    }

    fn stream(&self, request: &ModelRequest, cancel: CancellationToken) -> ModelStream {
        let inner = Arc::clone(&self.inner);
        let body = serde_json::to_vec(&encode_request(inner.protocol, request, &inner.model));
        Box::pin(async_stream::stream! {
            let body = match body {
                Ok(body) => Bytes::from(body),
                Err(err) => {
                    yield ModelEvent::Error { error: ProviderError::Decode { detail: format!("cannot encode the request: {err}") } };
                    return;
                }
            };
            let mut attempt: u32 = 0;
            loop {
                if cancel.is_cancelled() {
                    yield ModelEvent::Error { error: ProviderError::Cancelled };
                    return;
                }
                let sent = tokio::select! {
                    biased;
                    () = cancel.cancelled() => Err(ProviderError::Cancelled),
                    response = inner.send(body.clone()) => response,
                };
                // Events that precede any content (Started, Usage) are held back, so a failure
                // before the first content can be retried without the consumer seeing it.
                let mut held: Vec<ModelEvent> = Vec::new();
                // Whether this attempt streamed content to the consumer; a retry then discards it.
                let mut content = false;
                let (error, retryable) = match sent {
                    Ok(response) if response.status().is_success() => {
                        let mut events = Box::pin(decode_stream(inner.protocol, body_chunks(response, inner.idle_timeout)));
                        loop {
                            let next = tokio::select! {
                                biased;
                                () = cancel.cancelled() => Some(ModelEvent::Error { error: ProviderError::Cancelled }),
                                event = events.next() => event,
                            };
                            match next {
                                Some(ModelEvent::Error { error }) => {
                                    let retryable = retryable_stream_failure(&error);
                                    break (error, retryable);
                                }
                                Some(event) => {
                                    let terminal = matches!(event, ModelEvent::Stop { .. } | ModelEvent::Error { .. });
                                    if !content && !terminal && !is_content(&event) {
                                        held.push(event);
                                        continue;
                                    }
                                    content = true;
                                    for early in held.drain(..) {
                                        yield early;
                                    }
                                    yield event;
                                    if terminal {
                                        return;
                                    }
                                }
                                None => return,
                            }
                        }
                    }
                    Ok(response) => {
                        let error = tokio::select! {
                            biased;
                            () = cancel.cancelled() => ProviderError::Cancelled,
                            error = error_response(response, inner.idle_timeout) => error,
                        };
                        let retryable = error.is_retryable();
                        (error, retryable)
                    }
                    Err(error) => {
                        let retryable = error.is_retryable();
                        (error, retryable)
                    }
                };
                if error == ProviderError::Cancelled || !retryable || attempt >= inner.retry.max_retries {
                    for early in held.drain(..) {
                        yield early;
                    }
                    yield ModelEvent::Error { error };
                    return;
                }
                attempt += 1;
                let delay = inner.retry.delay(attempt, &error);
                tracing::info!(attempt, delay_ms = delay.as_millis() as u64, %error, partial = content, "retrying model request");
                yield ModelEvent::Retry(RetryInfo {
                    attempt,
                    max_retries: inner.retry.max_retries,
                    delay_ms: delay.as_millis() as u64,
                    error,
                    discards_partial: content,
                });
                let cancelled = tokio::select! {
                    biased;
                    () = cancel.cancelled() => true,
                    () = tokio::time::sleep(delay) => false,
                };
                if cancelled {
                    yield ModelEvent::Error { error: ProviderError::Cancelled };
                    return;
                }
            }
        })
    }
}

impl Inner {
    /// Posts the body and waits for the response headers (bounded by the first-byte timeout).
    async fn send(&self, body: Bytes) -> Result<reqwest::Response, ProviderError> {
        let request = self.client.post(&self.endpoint).headers(self.headers.clone()).body(body);
        match tokio::time::timeout(self.first_byte_timeout, request.send()).await {
            Ok(Ok(response)) => Ok(response),
            Ok(Err(err)) => Err(transport_error(&err)),
            Err(_) => Err(ProviderError::Timeout {
                message: format!(
                    "no response from {} within {} ms (first_byte_timeout_ms)",
                    self.endpoint,
                    self.first_byte_timeout.as_millis()
                ),
            }),
        }
    }
}

/// Whether an event carries response content (as opposed to `Started`, `Usage`, `Retry`, or a
/// terminal event).
fn is_content(event: &ModelEvent) -> bool {
    match event {
        ModelEvent::TextDelta { .. }
        | ModelEvent::RefusalDelta { .. }
        | ModelEvent::ThinkingDelta { .. }
        | ModelEvent::ThinkingSignature { .. }
        | ModelEvent::RedactedThinking { .. }
        | ModelEvent::ToolCallStart { .. }
        | ModelEvent::ToolCallDelta { .. }
        | ModelEvent::ToolCallEnd { .. } => true,
        ModelEvent::Started { .. }
        | ModelEvent::Usage(_)
        | ModelEvent::Retry(_)
        | ModelEvent::Stop { .. }
        | ModelEvent::Error { .. } => false,
    }
}

/// Whether a failure of a 2xx stream may be retried (before or after content started): the
/// retryable errors (an in-stream overload or server error, a reset connection, an idle timeout),
/// and a body that ended before its terminal event (a dropped connection looks like that).
fn retryable_stream_failure(error: &ProviderError) -> bool {
    error.is_retryable() || matches!(error, ProviderError::IncompleteStream { .. })
}

/// A reqwest failure as a typed error, with its cause chain.
fn transport_error(err: &reqwest::Error) -> ProviderError {
    let mut message = err.to_string();
    let mut refused = false;
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        refused |= cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused);
        source = cause.source();
    }
    if err.is_timeout() {
        ProviderError::Timeout { message }
    } else if refused {
        ProviderError::Unreachable { message }
    } else {
        ProviderError::Network { message }
    }
}

/// Reads an error response (up to [`MAX_ERROR_BODY`]) and types it.
async fn error_response(response: reqwest::Response, idle_timeout: Duration) -> ProviderError {
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let mut body = Vec::new();
    let mut chunks = std::pin::pin!(body_chunks(response, idle_timeout));
    while let Some(chunk) = chunks.next().await {
        match chunk {
            Ok(bytes) => {
                body.extend_from_slice(&bytes);
                if body.len() >= MAX_ERROR_BODY {
                    body.truncate(MAX_ERROR_BODY);
                    break;
                }
            }
            // A truncated error body still says enough; the status decides the type.
            Err(_) => break,
        }
    }
    error_from_status(status, &headers, &body)
}

/// The response body as chunks; a silence longer than `idle_timeout` or a broken connection ends
/// it with an error.
fn body_chunks(
    response: reqwest::Response,
    idle_timeout: Duration,
) -> impl Stream<Item = Result<Bytes, ProviderError>> + Send {
    let mut inner = response.bytes_stream();
    async_stream::stream! {
        loop {
            match tokio::time::timeout(idle_timeout, inner.next()).await {
                Err(_) => {
                    yield Err(ProviderError::Timeout {
                        message: format!("no data for {} ms (idle_timeout_ms)", idle_timeout.as_millis()),
                    });
                    break;
                }
                Ok(None) => break,
                Ok(Some(Ok(bytes))) => yield Ok(bytes),
                Ok(Some(Err(err))) => {
                    yield Err(transport_error(&err));
                    break;
                }
            }
        }
    }
}
