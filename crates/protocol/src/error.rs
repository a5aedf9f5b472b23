//! Typed provider errors. Each variant carries what recovery needs (a retry delay, the provider's
//! message verbatim) and says whether a retry can help ([`ProviderError::is_retryable`]).
//!
//! Status mapping (Anthropic "Errors" and OpenAI "Error codes" docs): 401/403 → [`ProviderError::Auth`];
//! 400/404/422 → [`ProviderError::BadRequest`] (or [`ProviderError::ContextWindowExceeded`] when the
//! message says the prompt is too long); 429 → [`ProviderError::RateLimited`]; 529 and
//! `overloaded_error` → [`ProviderError::Overloaded`]; 408/409/5xx → [`ProviderError::Server`].

use serde::{Deserialize, Serialize};

/// The error a provider returned, as it returned it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ApiError {
    /// HTTP status, when the error came as a response status (not inside a 200 stream).
    pub status: Option<u16>,
    /// The provider's error `type` (or its `code` as a string): `rate_limit_error`,
    /// `invalid_request_error`, `insufficient_quota`, `"1305"`…
    pub error_type: Option<String>,
    /// The provider's message, verbatim (or a description of a non-JSON body).
    pub message: String,
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.status, &self.error_type) {
            (Some(status), Some(kind)) => write!(f, "HTTP {status} {kind}: {}", self.message),
            (Some(status), None) => write!(f, "HTTP {status}: {}", self.message),
            (None, Some(kind)) => write!(f, "{kind}: {}", self.message),
            (None, None) => f.write_str(&self.message),
        }
    }
}

/// Why a model request failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ProviderError {
    /// 429: too many requests. `retry_after_ms` comes from `retry-after` / `retry-after-ms`.
    #[error("rate limited ({api})")]
    RateLimited {
        /// Server-requested delay in milliseconds.
        retry_after_ms: Option<u64>,
        /// The provider's error as received (status, error type, message verbatim).
        api: ApiError,
    },
    /// 529 or an `overloaded_error` (also mid-stream).
    #[error("provider overloaded ({api})")]
    Overloaded {
        /// Server-requested delay in milliseconds.
        retry_after_ms: Option<u64>,
        /// The provider's error as received (status, error type, message verbatim).
        api: ApiError,
    },
    /// 408/409/5xx: a transient server-side failure.
    #[error("provider error ({api})")]
    Server {
        /// Server-requested delay in milliseconds.
        retry_after_ms: Option<u64>,
        /// The provider's error as received (status, error type, message verbatim).
        api: ApiError,
    },
    /// The prompt does not fit the model's context window; compaction can fix it.
    #[error("context window exceeded ({api})")]
    ContextWindowExceeded {
        /// The provider's error as received (status, error type, message verbatim).
        api: ApiError,
    },
    /// 401/403: the key is missing, wrong, or lacks permission.
    #[error("authentication failed ({api}); check the API key")]
    Auth {
        /// The provider's error as received (status, error type, message verbatim).
        api: ApiError,
    },
    /// 400/404/422 and other client errors: the request itself is wrong; never retried.
    #[error("request rejected ({api})")]
    BadRequest {
        /// The provider's error as received (status, error type, message verbatim).
        api: ApiError,
    },
    /// An error reported inside a 200 stream (Anthropic `error` event, Chat `{"error": …}` chunk,
    /// Responses `error` / `response.failed`), other than overload.
    #[error("provider reported an error mid-stream ({api})")]
    Stream {
        /// The provider's error as received (status, error type, message verbatim).
        api: ApiError,
    },
    /// Connection refused or reset, DNS failure, TLS failure.
    #[error("network error: {message}")]
    Network {
        /// What the HTTP client reported.
        message: String,
    },
    /// Nothing accepts connections at the base URL (connection refused): the server is down or the
    /// URL is wrong. Not retried — the retry list names resets and timeouts, not refusals.
    #[error("cannot connect: {message}")]
    Unreachable {
        /// What the HTTP client reported.
        message: String,
    },
    /// No response (or no further byte) within the configured time.
    #[error("timed out: {message}")]
    Timeout {
        /// Which timeout fired.
        message: String,
    },
    /// The response could not be decoded (bad JSON, unknown framing, non-SSE body).
    #[error("could not decode the provider's response: {detail}")]
    Decode {
        /// What was wrong, with an excerpt of the offending bytes.
        detail: String,
    },
    /// The stream ended without its terminal event.
    #[error("the response stream ended early: {detail}")]
    IncompleteStream {
        /// What was missing.
        detail: String,
    },
    /// The request was cancelled by the user.
    #[error("cancelled")]
    Cancelled,
    /// The provider could not be set up (missing key, bad base URL, missing model file).
    #[error("provider configuration: {message}")]
    Config {
        /// What to fix.
        message: String,
    },
}

impl ProviderError {
    /// Whether retrying the same request may succeed: rate limits, overload, 408/409/5xx, network
    /// failures and timeouts before the first byte. Never client errors or cancellation.
    pub fn is_retryable(&self) -> bool {
        match self {
            ProviderError::RateLimited { .. }
            | ProviderError::Overloaded { .. }
            | ProviderError::Server { .. }
            | ProviderError::Network { .. }
            | ProviderError::Timeout { .. } => true,
            ProviderError::ContextWindowExceeded { .. }
            | ProviderError::Auth { .. }
            | ProviderError::BadRequest { .. }
            | ProviderError::Stream { .. }
            | ProviderError::Decode { .. }
            | ProviderError::IncompleteStream { .. }
            | ProviderError::Cancelled
            | ProviderError::Unreachable { .. }
            | ProviderError::Config { .. } => false,
        }
    }

    /// The delay the server asked for, in milliseconds.
    pub fn retry_after_ms(&self) -> Option<u64> {
        match self {
            ProviderError::RateLimited { retry_after_ms, .. }
            | ProviderError::Overloaded { retry_after_ms, .. }
            | ProviderError::Server { retry_after_ms, .. } => *retry_after_ms,
            ProviderError::ContextWindowExceeded { .. }
            | ProviderError::Auth { .. }
            | ProviderError::BadRequest { .. }
            | ProviderError::Stream { .. }
            | ProviderError::Network { .. }
            | ProviderError::Timeout { .. }
            | ProviderError::Decode { .. }
            | ProviderError::IncompleteStream { .. }
            | ProviderError::Cancelled
            | ProviderError::Unreachable { .. }
            | ProviderError::Config { .. } => None,
        }
    }

    /// The provider's own error, when there is one.
    pub fn api(&self) -> Option<&ApiError> {
        match self {
            ProviderError::RateLimited { api, .. }
            | ProviderError::Overloaded { api, .. }
            | ProviderError::Server { api, .. }
            | ProviderError::ContextWindowExceeded { api }
            | ProviderError::Auth { api }
            | ProviderError::BadRequest { api }
            | ProviderError::Stream { api } => Some(api),
            ProviderError::Network { .. }
            | ProviderError::Timeout { .. }
            | ProviderError::Decode { .. }
            | ProviderError::IncompleteStream { .. }
            | ProviderError::Cancelled
            | ProviderError::Unreachable { .. }
            | ProviderError::Config { .. } => None,
        }
    }

    /// A few words for retry notices: "rate limited", "overloaded", "server error 503"…
    pub fn short_reason(&self) -> String {
        match self {
            ProviderError::RateLimited { .. } => "rate limited".into(),
            ProviderError::Overloaded { .. } => "overloaded".into(),
            ProviderError::Server { api, .. } => match api.status {
                Some(status) => format!("server error {status}"),
                None => "server error".into(),
            },
            ProviderError::ContextWindowExceeded { .. } => "context window exceeded".into(),
            ProviderError::Auth { .. } => "authentication failed".into(),
            ProviderError::BadRequest { .. } => "bad request".into(),
            ProviderError::Stream { .. } => "stream error".into(),
            ProviderError::Network { .. } => "network error".into(),
            ProviderError::Timeout { .. } => "timed out".into(),
            ProviderError::Decode { .. } => "decode error".into(),
            ProviderError::IncompleteStream { .. } => "incomplete stream".into(),
            ProviderError::Cancelled => "cancelled".into(),
            ProviderError::Unreachable { .. } => "cannot connect".into(),
            ProviderError::Config { .. } => "configuration error".into(),
        }
    }

    /// A stable snake_case name for JSON output (`result.subtype`, stream-json `error.kind`).
    pub fn kind(&self) -> &'static str {
        match self {
            ProviderError::RateLimited { .. } => "rate_limited",
            ProviderError::Overloaded { .. } => "overloaded",
            ProviderError::Server { .. } => "server",
            ProviderError::ContextWindowExceeded { .. } => "context_window_exceeded",
            ProviderError::Auth { .. } => "auth",
            ProviderError::BadRequest { .. } => "bad_request",
            ProviderError::Stream { .. } => "stream",
            ProviderError::Network { .. } => "network",
            ProviderError::Timeout { .. } => "timeout",
            ProviderError::Decode { .. } => "decode",
            ProviderError::IncompleteStream { .. } => "incomplete_stream",
            ProviderError::Cancelled => "cancelled",
            ProviderError::Unreachable { .. } => "unreachable",
            ProviderError::Config { .. } => "config",
        }
    }
}
