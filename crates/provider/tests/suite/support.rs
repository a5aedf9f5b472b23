//! Shared helpers: the cassette manifest, and folding events into the manifest's `expected` shape.

use std::path::PathBuf;
use std::sync::Arc;

use lathe_protocol::{Accumulator, Content, ModelEvent, ModelRequest, ProviderError, UserMessage};
use lathe_provider::{Protocol, Provider, ProviderConfig, RetryConfig, build_provider};
use serde::Deserialize;
use serde_json::{Value, json};

/// The cassette directory: `$LATHE_CASSETTES`, else `shared/cassettes` next to the workspace.
pub fn cassette_dir() -> PathBuf {
    match std::env::var_os("LATHE_CASSETTES") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/cassettes"),
    }
}

/// One manifest entry (only the fields the tests use).
#[derive(Debug, Clone, Deserialize)]
pub struct Entry {
    pub file: String,
    pub protocol: String,
    pub status: u16,
    pub expected: Value,
}

impl Entry {
    pub fn protocol(&self) -> Protocol {
        protocol_named(&self.protocol)
    }

    pub fn body(&self) -> Vec<u8> {
        std::fs::read(cassette_dir().join(&self.file)).unwrap_or_else(|err| panic!("{}: {err}", self.file))
    }
}

pub fn protocol_named(name: &str) -> Protocol {
    match name {
        "anthropic" => Protocol::Anthropic,
        "openai-chat" => Protocol::OpenAiChat,
        "openai-responses" => Protocol::OpenAiResponses,
        other => panic!("unknown protocol {other:?} in the manifest"),
    }
}

pub fn manifest() -> Vec<Entry> {
    let path = cassette_dir().join("manifest.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    let entries: Vec<Entry> = serde_json::from_str(&text).unwrap();
    assert!(!entries.is_empty(), "the manifest lists no cassette");
    entries
}

/// The error as the manifest describes errors: `{type, message}`.
pub fn error_json(error: &ProviderError) -> Value {
    match error.api() {
        Some(api) => json!({
            "type": api.error_type.clone().unwrap_or_else(|| error.kind().to_string()),
            "message": api.message,
        }),
        None => json!({"type": error.kind(), "message": error.to_string()}),
    }
}

/// Folds `events` with the protocol crate's [`Accumulator`] and describes the result in the
/// manifest's `expected` shape (cassettes/README.md §1).
pub fn outcome(protocol: Protocol, events: &[ModelEvent]) -> Value {
    let mut acc = Accumulator::new(protocol.thinking_format());
    for event in events {
        acc.push(event);
    }
    let refusal = acc.refusal().map(str::to_string);
    let reported_stop = acc.reported_stop();
    let error = acc.error().cloned();
    let message = acc.finish("");
    let mut texts: Vec<&str> = message
        .content
        .iter()
        .filter_map(|content| match content {
            Content::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    if refusal.is_some() {
        // The accumulator appends the refusal as the last text part.
        texts.pop();
    }
    let thinking: Vec<Value> = message
        .content
        .iter()
        .filter_map(|content| match content {
            Content::Thinking(thinking) => Some(match (&thinking.redacted, &thinking.signature) {
                (Some(data), _) => json!({"text": thinking.text, "redacted": data}),
                (None, Some(signature)) if !signature.is_empty() => {
                    json!({"text": thinking.text, "signature": signature})
                }
                (None, _) => json!({"text": thinking.text}),
            }),
            _ => None,
        })
        .collect();
    let tool_calls: Vec<Value> = message
        .tool_calls()
        .map(|call| {
            let arguments = if call.incomplete.is_some() { Value::Null } else { call.arguments.clone() };
            json!({"id": call.id, "name": call.name, "arguments": arguments})
        })
        .collect();
    // README §1: an Anthropic stream without message_delta has stop_reason null (and no error);
    // the decoder reports it as an incomplete stream.
    let anthropic_without_stop = protocol == Protocol::Anthropic
        && reported_stop.is_none()
        && matches!(error, Some(ProviderError::IncompleteStream { .. }));
    let (stop_reason, error) = if anthropic_without_stop {
        (Value::Null, Value::Null)
    } else {
        (json!(message.stop.as_str()), error.as_ref().map_or(Value::Null, error_json))
    };
    json!({
        "text": texts.concat(),
        "refusal": refusal,
        "thinking": thinking,
        "tool_calls": tool_calls,
        "stop_reason": stop_reason,
        "usage": if message.usage.is_reported() { serde_json::to_value(message.usage).unwrap() } else { Value::Null },
        "error": error,
    })
}

/// Every field where `actual` differs from `expected`, described for a failure report. An
/// `incomplete_stream` error is compared by type only (the message is the decoder's own).
pub fn mismatches(expected: &Value, actual: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let Some(fields) = expected.as_object() else {
        return vec![format!("expected is not an object: {expected}")];
    };
    for (key, want) in fields {
        let got = actual.get(key).unwrap_or(&Value::Null);
        let equal = if key == "error" && want.get("type") == Some(&json!("incomplete_stream")) {
            got.get("type") == want.get("type")
        } else {
            want == got
        };
        if !equal {
            out.push(format!("{key}: expected {want}\n      got      {got}"));
        }
    }
    out
}

/// Asserts that `events` ends with exactly one terminal event.
pub fn terminal_problems(events: &[ModelEvent]) -> Option<String> {
    let terminals = events.iter().filter(|event| is_terminal(event)).count();
    let last_is_terminal = events.last().is_some_and(is_terminal);
    (terminals != 1 || !last_is_terminal)
        .then(|| format!("{terminals} terminal events; last event {:?}", events.last()))
}

pub fn is_terminal(event: &ModelEvent) -> bool {
    matches!(event, ModelEvent::Stop { .. } | ModelEvent::Error { .. })
}

/// A minimal request.
pub fn hello_request() -> ModelRequest {
    ModelRequest {
        model: "test-model".into(),
        messages: vec![lathe_protocol::LedgerItem::User(UserMessage::text("Hello"))],
        max_output_tokens: 256,
        ..ModelRequest::default()
    }
}

/// A provider for `protocol` at a lathe-mock base URL (`url` is the server root).
pub fn provider_at(protocol: Protocol, url: &str, retry: RetryConfig) -> Arc<dyn Provider> {
    let base = match protocol {
        Protocol::Anthropic => url.to_string(),
        Protocol::OpenAiChat | Protocol::OpenAiResponses => format!("{url}/v1"),
    };
    build_provider(&ProviderConfig {
        protocol,
        base_url: Some(base),
        model: "mock-model".into(),
        retry,
        ..ProviderConfig::default()
    })
    .unwrap()
}

/// Retries disabled.
pub fn no_retries() -> RetryConfig {
    RetryConfig { max_retries: 0, ..RetryConfig::default() }
}
