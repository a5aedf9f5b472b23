//! The HTTP client of streamable-HTTP MCP servers: reqwest, with one correction for servers that
//! refuse an expired session with `400` instead of the `404` the specification asks for (MCP
//! 2025-06-18, Transports, "Session Management": a server that has terminated a session MUST
//! answer requests carrying its id with 404). The TypeScript SDK's servers answer `400 "Bad
//! Request: No valid session ID provided"` after a restart; rmcp then leaves the request pending
//! until the call's timeout. Mapped to a session expiry, rmcp makes a new session and sends the
//! request once more.

use std::collections::HashMap;
use std::sync::Arc;

use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;

/// Redirects followed per request (same origin only, so headers never leave the server).
const MAX_REDIRECTS: usize = 10;

/// reqwest for an MCP server: no idle connection pool (a reused connection whose last body was
/// not read to the end stalls on delayed ACKs), same-origin redirects only, and expired sessions
/// recognised when a server says so with a 400.
#[derive(Debug, Clone)]
pub(crate) struct McpHttpClient(reqwest::Client);

impl McpHttpClient {
    /// The client; `Err` when reqwest cannot build one (no TLS backend).
    pub(crate) fn new() -> Result<McpHttpClient, String> {
        let redirects = reqwest::redirect::Policy::custom(|attempt| {
            let same_origin = attempt.previous().first().is_some_and(|first| {
                first.scheme() == attempt.url().scheme()
                    && first.host_str() == attempt.url().host_str()
                    && first.port_or_known_default() == attempt.url().port_or_known_default()
            });
            if same_origin && attempt.previous().len() <= MAX_REDIRECTS {
                attempt.follow()
            } else {
                attempt.stop()
            }
        });
        reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(redirects)
            .build()
            .map(McpHttpClient)
            .map_err(|error| format!("cannot build an HTTP client: {error}"))
    }
}

/// A refusal of the session the request carried, said with a 400 and a JSON-RPC error that
/// names no request (`{"error":{"message":"Bad Request: No valid session ID provided"}}`) or a
/// body rmcp could not read: an expired session.
fn expired<E: std::error::Error + Send + Sync + 'static>(
    had_session: bool,
    result: Result<StreamableHttpPostResponse, StreamableHttpError<E>>,
) -> Result<StreamableHttpPostResponse, StreamableHttpError<E>> {
    let about_session = |text: &str| text.to_ascii_lowercase().contains("session");
    match result {
        Err(StreamableHttpError::UnexpectedServerResponse(text))
            if had_session && text.starts_with("HTTP 400") && about_session(&text) =>
        {
            Err(StreamableHttpError::SessionExpired)
        }
        Ok(StreamableHttpPostResponse::Json(JsonRpcMessage::Error(error), _))
            if had_session && error.id.is_none() && about_session(&error.error.message) =>
        {
            Err(StreamableHttpError::SessionExpired)
        }
        other => other,
    }
}

/// rmcp 3.11 sends every POST through `post_message_with_response_limits` and opens every stream
/// with `get_stream_with_max_sse_event_size`; those two pass the limits on, the required
/// `post_message` and `get_stream` only delegate.
impl StreamableHttpClient for McpHttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let had_session = session_id.is_some();
        expired(had_session, self.0.post_message(uri, message, session_id, auth_header, custom_headers).await)
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let had_session = session_id.is_some();
        let result = self
            .0
            .post_message_with_response_limits(uri, message, session_id, auth_header, custom_headers, limits)
            .await;
        expired(had_session, result)
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.0.delete_session(uri, session_id, auth_header, custom_headers).await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.0.get_stream(uri, session_id, last_event_id, auth_header, custom_headers).await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.0
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}
