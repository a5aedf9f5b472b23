//! Turning what a provider sent into a typed [`ProviderError`], with the provider's message
//! verbatim.
//!
//! Status mapping (Anthropic "Errors" and OpenAI "Error codes" pages, as documented on
//! [`ProviderError`]): 401/403 → `Auth`; 400/404/422 → `BadRequest`, or `ContextWindowExceeded`
//! when the message says the prompt is too long; 429 → `RateLimited`; 529 (or an
//! `overloaded_error` body) → `Overloaded`; 408/409/5xx → `Server`; any other 4xx → `BadRequest`.
//!
//! Error bodies come in several shapes, all handled by [`parse_error_object`]: Anthropic
//! `{"type":"error","error":{"type","message"}}`, OpenAI `{"error":{"message","type","code"}}`,
//! OpenAI-compatible servers with only a `code` (Z.ai `"1305"`, OpenRouter `400`), and non-JSON
//! bodies (an HTML page from a proxy), which are described with an excerpt.

use std::time::SystemTime;

use lathe_protocol::{ApiError, ProviderError};
use serde_json::Value;

use crate::retry::retry_after_ms;
use crate::retry_hint::{body_hint_ms, message_hint_ms, reset_header_ms};

/// Longest excerpt of an unexpected body quoted in an error, in bytes.
pub(crate) const EXCERPT_BYTES: usize = 300;

/// The error for a non-success HTTP response. The retry delay comes from `retry-after-ms` /
/// `retry-after`, else from the body ("Please try again in 1.5s", a `retryDelay` detail), else from
/// the rate-limit reset headers ([`crate::retry_hint`]).
pub fn error_from_status(status: u16, headers: &http::HeaderMap, body: &[u8]) -> ProviderError {
    let now = SystemTime::now();
    let parsed = serde_json::from_slice::<Value>(body).ok().and_then(|json| parse_error_object(&json));
    let api = match parsed {
        Some((error_type, message)) => ApiError { status: Some(status), error_type, message },
        None => {
            let content_type = headers
                .get(http::header::CONTENT_TYPE)
                .and_then(|value| value.to_str().ok())
                .unwrap_or("no content-type");
            let message = if body.iter().all(u8::is_ascii_whitespace) {
                format!("HTTP {status} with an empty body")
            } else {
                format!("HTTP {status} with a non-JSON body ({content_type}): {}", excerpt(body))
            };
            ApiError { status: Some(status), error_type: None, message }
        }
    };
    let retry_after = retry_after_ms(headers, now)
        .or_else(|| body_hint_ms(body, &api.message))
        .or_else(|| reset_header_ms(headers, now));
    classify(status, api, retry_after)
}

/// Picks the variant for an HTTP status and the provider's error.
fn classify(status: u16, api: ApiError, retry_after_ms: Option<u64>) -> ProviderError {
    let overloaded = api.error_type.as_deref() == Some("overloaded_error");
    match status {
        401 | 403 => ProviderError::Auth { api },
        429 => ProviderError::RateLimited { retry_after_ms, api },
        529 => ProviderError::Overloaded { retry_after_ms, api },
        _ if overloaded => ProviderError::Overloaded { retry_after_ms, api },
        408 | 409 | 500..=599 => ProviderError::Server { retry_after_ms, api },
        _ if is_context_overflow(&api) => ProviderError::ContextWindowExceeded { api },
        _ => ProviderError::BadRequest { api },
    }
}

/// The error for an error reported inside a 200 stream (`error_type` as in
/// [`parse_error_object`]). Overload, rate limits and server-side failures (`api_error`,
/// `server_error`, …) are typed as such so that the response is retried; a delay stated in the
/// message is kept.
pub fn stream_error(error_type: Option<String>, message: String) -> ProviderError {
    let retry_after_ms = message_hint_ms(&message);
    let api = ApiError { status: None, error_type, message };
    match api.error_type.as_deref() {
        Some("overloaded_error" | "overloaded") => ProviderError::Overloaded { retry_after_ms, api },
        Some("rate_limit_error" | "rate_limit_exceeded" | "rate_limited") => {
            ProviderError::RateLimited { retry_after_ms, api }
        }
        Some(
            "api_error"
            | "server_error"
            | "internal_error"
            | "internal_server_error"
            | "service_unavailable"
            | "timeout",
        ) => ProviderError::Server { retry_after_ms, api },
        _ if is_context_overflow(&api) => ProviderError::ContextWindowExceeded { api },
        _ => ProviderError::Stream { api },
    }
}

/// Extracts `(type, message)` from an error body or error event: the `error` object if there is
/// one, else the value itself. `type` is the string `type` if present, else `code` as a string.
/// `None` when the value holds no error.
pub fn parse_error_object(json: &Value) -> Option<(Option<String>, String)> {
    let object = match json.get("error") {
        Some(inner @ Value::Object(_)) => inner,
        Some(Value::String(message)) => return Some((None, message.clone())),
        _ => json,
    };
    let map = object.as_object()?;
    let error_type = match map.get("type") {
        Some(Value::String(kind)) if kind != "error" => Some(kind.clone()),
        _ => None,
    }
    .or_else(|| match map.get("code") {
        Some(Value::String(code)) => Some(code.clone()),
        Some(Value::Number(code)) => Some(code.to_string()),
        _ => None,
    });
    let message = match map.get("message") {
        Some(Value::String(message)) => message.clone(),
        Some(other) if !other.is_null() => other.to_string(),
        _ => {
            error_type.as_ref()?;
            String::new()
        }
    };
    Some((error_type, message))
}

/// Whether a client error says the prompt does not fit the context window.
fn is_context_overflow(api: &ApiError) -> bool {
    let message = api.message.to_ascii_lowercase();
    api.error_type.as_deref() == Some("context_length_exceeded")
        || message.contains("prompt is too long")
        || message.contains("context length")
        || message.contains("context_length_exceeded")
        || message.contains("context window")
        || message.contains("exceed context limit")
        || message.contains("maximum context")
}

/// A short, lossy, single-line excerpt of raw bytes for error messages.
pub(crate) fn excerpt(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(EXCERPT_BYTES)];
    let text = String::from_utf8_lossy(cut);
    let mut line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if bytes.len() > EXCERPT_BYTES {
        line.push('…');
    }
    format!("{line:?}")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "error_tests.rs"]
mod tests;
