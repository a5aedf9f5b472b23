//! Wire formats: response encoders and request parsers, one module per protocol.
//!
//! Encoders turn a [`Reply`] into SSE events (`stream: true`) or a JSON body, and an [`ErrorReply`] into the
//! provider's own error shape. Parsers read a request body into the protocol-neutral
//! [`Conversation`](crate::replay::Conversation) the replay checks work on.

pub(crate) mod anthropic;
pub(crate) mod chat;
pub(crate) mod responses;

use bytes::Bytes;
use serde_json::Value;

use crate::Protocol;
use crate::replay::Conversation;
use crate::reply::{ErrorReply, Reply};

/// One server-sent event.
#[derive(Debug, Clone)]
pub(crate) struct SseEvent {
    /// The `event:` line, if the protocol sends one.
    pub name: Option<String>,
    /// The `data:` payload (one line).
    pub data: String,
}

impl SseEvent {
    /// An event with `event: <name>` and JSON data.
    pub(crate) fn named(name: &str, data: &Value) -> SseEvent {
        SseEvent { name: Some(name.to_string()), data: data.to_string() }
    }

    /// A data-only event.
    pub(crate) fn data(data: String) -> SseEvent {
        SseEvent { name: None, data }
    }

    /// The bytes on the wire, blank line included.
    pub(crate) fn to_bytes(&self) -> Bytes {
        let mut s = String::with_capacity(self.data.len() + 32);
        if let Some(n) = &self.name {
            s.push_str("event: ");
            s.push_str(n);
            s.push('\n');
        }
        s.push_str("data: ");
        s.push_str(&self.data);
        s.push_str("\n\n");
        Bytes::from(s)
    }
}

/// Options of the request that shape the response.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RequestShape {
    /// `stream: true`.
    pub stream: bool,
    /// Chat `stream_options.include_usage: true`.
    pub include_usage: bool,
}

impl RequestShape {
    /// Reads the shape from a request body.
    pub(crate) fn of(body: &Value) -> RequestShape {
        RequestShape {
            stream: body.get("stream").and_then(Value::as_bool).unwrap_or(false),
            include_usage: body
                .pointer("/stream_options/include_usage")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        }
    }
}

/// Encodes `reply` as SSE events; `seq` makes ids unique.
pub(crate) fn stream_events(
    protocol: Protocol,
    reply: &Reply,
    shape: RequestShape,
    seq: usize,
) -> Vec<SseEvent> {
    match protocol {
        Protocol::Anthropic => anthropic::stream(reply, seq),
        Protocol::OpenaiChat => chat::stream(reply, shape.include_usage, seq),
        Protocol::OpenaiResponses => responses::stream(reply, seq),
    }
}

/// Encodes `reply` as a non-streaming JSON body.
pub(crate) fn json_body(protocol: Protocol, reply: &Reply, seq: usize) -> Value {
    match protocol {
        Protocol::Anthropic => anthropic::message(reply, seq),
        Protocol::OpenaiChat => chat::completion(reply, seq),
        Protocol::OpenaiResponses => responses::response(reply, seq, &responses::output_items(reply, seq)),
    }
}

/// The provider's own error body for `err` (ignores `err.body`).
pub(crate) fn error_body(protocol: Protocol, err: &ErrorReply) -> Value {
    match protocol {
        Protocol::Anthropic => anthropic::error(err),
        Protocol::OpenaiChat | Protocol::OpenaiResponses => openai_error(err),
    }
}

/// OpenAI's error shape `{"error":{"message","type","param","code"}}` (Chat and Responses share it).
fn openai_error(err: &ErrorReply) -> Value {
    let (kind, code): (String, Value) = match &err.kind {
        Some(k) => (k.clone(), Value::String(k.clone())),
        None => match err.status {
            400 | 404 | 413 | 422 => ("invalid_request_error".into(), Value::Null),
            401 => ("invalid_request_error".into(), "invalid_api_key".into()),
            403 => ("permission_error".into(), Value::Null),
            429 => ("requests".into(), "rate_limit_exceeded".into()),
            s if s >= 500 => ("server_error".into(), "server_error".into()),
            _ => ("invalid_request_error".into(), Value::Null),
        },
    };
    serde_json::json!({"error": {"message": err.message, "type": kind, "param": null, "code": code}})
}

/// The conversation in a request body.
///
/// # Errors
/// A message in the provider's words when the body lacks the conversation field.
pub(crate) fn conversation(protocol: Protocol, body: &Value) -> Result<Conversation, String> {
    match protocol {
        Protocol::Anthropic => anthropic::conversation(body),
        Protocol::OpenaiChat => chat::conversation(body),
        Protocol::OpenaiResponses => responses::conversation(body),
    }
}

/// Names of the function tools a request advertises.
pub(crate) fn tool_names(protocol: Protocol, body: &Value) -> Vec<String> {
    let tools = body.get("tools").and_then(Value::as_array).cloned().unwrap_or_default();
    tools
        .iter()
        .filter_map(|t| match protocol {
            Protocol::Anthropic | Protocol::OpenaiResponses => t.get("name"),
            Protocol::OpenaiChat => t.pointer("/function/name").or_else(|| t.get("name")),
        })
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

/// Seconds since the Unix epoch, for `created` fields.
pub(crate) fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}
