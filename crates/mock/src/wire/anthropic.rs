//! Anthropic Messages: stream and message encoders, the error shape, and the request parser.
//!
//! Stream shape (as in the recorded streams of `shared/cassettes/anthropic/`): `message_start`, `ping`, then
//! per block `content_block_start`, deltas (`thinking_delta` + `signature_delta`, `text_delta`,
//! `input_json_delta`), `content_block_stop` (padded with spaces before its closing brace, as real streams
//! are), then `message_delta` with `stop_reason` and usage, then `message_stop`. A cut-off tool call gets no
//! `content_block_stop`; `drop_after_content` ends the events after the last content block.

use serde_json::{Value, json};

use super::SseEvent;
use crate::replay::{Conversation, Message, Side, ToolResult};
use crate::reply::{ErrorReply, Reply, Stop};

fn stop_reason(stop: Stop) -> &'static str {
    match stop {
        Stop::EndTurn => "end_turn",
        Stop::ToolUse => "tool_use",
        Stop::MaxTokens => "max_tokens",
    }
}

fn usage(reply: &Reply) -> Value {
    json!({
        "input_tokens": reply.usage.input_tokens,
        "cache_creation_input_tokens": reply.usage.cache_creation_input_tokens,
        "cache_read_input_tokens": reply.usage.cache_read_input_tokens,
        "output_tokens": reply.usage.output_tokens,
    })
}

fn message_id(seq: usize) -> String {
    format!("msg_mock{seq:020}")
}

fn delta(index: usize, delta: Value) -> SseEvent {
    SseEvent::named(
        "content_block_delta",
        &json!({"type": "content_block_delta", "index": index, "delta": delta}),
    )
}

fn block_stop(index: usize) -> SseEvent {
    // Real streams pad this object with spaces before the closing brace.
    SseEvent {
        name: Some("content_block_stop".into()),
        data: format!("{{\"type\":\"content_block_stop\",\"index\":{index}          }}"),
    }
}

/// The SSE events of a streamed message.
pub(crate) fn stream(reply: &Reply, seq: usize) -> Vec<SseEvent> {
    let mut out = Vec::new();
    let mut start_usage = usage(reply);
    start_usage["output_tokens"] = json!(1);
    out.push(SseEvent::named(
        "message_start",
        &json!({"type": "message_start", "message": {
            "id": message_id(seq), "type": "message", "role": "assistant", "model": reply.model,
            "content": [], "stop_reason": null, "stop_sequence": null, "usage": start_usage}}),
    ));
    out.push(SseEvent { name: Some("ping".into()), data: r#"{"type": "ping"}"#.into() });
    let mut index = 0;
    if let Some(t) = &reply.thinking {
        out.push(SseEvent::named(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index,
                    "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        ));
        for piece in &t.text {
            out.push(delta(index, json!({"type": "thinking_delta", "thinking": piece})));
        }
        out.push(delta(index, json!({"type": "signature_delta", "signature": t.signature})));
        out.push(block_stop(index));
        index += 1;
    }
    if !reply.text.is_empty() {
        out.push(SseEvent::named(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
        ));
        for piece in &reply.text {
            out.push(delta(index, json!({"type": "text_delta", "text": piece})));
        }
        out.push(block_stop(index));
        index += 1;
    }
    for call in &reply.calls {
        out.push(SseEvent::named(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index,
                    "content_block": {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}}),
        ));
        for piece in &call.pieces {
            out.push(delta(index, json!({"type": "input_json_delta", "partial_json": piece})));
        }
        if call.complete {
            out.push(block_stop(index));
        }
        index += 1;
    }
    if reply.drop_after_content {
        return out;
    }
    if let Some(e) = &reply.stream_error {
        out.push(SseEvent::named(
            "error",
            &json!({"type": "error", "error": {"type": e.kind, "message": e.message}}),
        ));
        return out;
    }
    out.push(SseEvent::named(
        "message_delta",
        &json!({"type": "message_delta", "delta": {"stop_reason": stop_reason(reply.stop), "stop_sequence": null},
                "usage": usage(reply)}),
    ));
    out.push(SseEvent::named("message_stop", &json!({"type": "message_stop"})));
    out
}

/// The non-streaming message body.
pub(crate) fn message(reply: &Reply, seq: usize) -> Value {
    let mut content = Vec::new();
    if let Some(t) = &reply.thinking {
        content.push(json!({"type": "thinking", "thinking": t.text.concat(), "signature": t.signature}));
    }
    if !reply.text.is_empty() {
        content.push(json!({"type": "text", "text": reply.full_text()}));
    }
    for call in &reply.calls {
        content.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": call.input()}));
    }
    json!({"id": message_id(seq), "type": "message", "role": "assistant", "model": reply.model,
           "content": content, "stop_reason": stop_reason(reply.stop), "stop_sequence": null,
           "usage": usage(reply)})
}

/// Anthropic's error shape `{"type":"error","error":{"type","message"}}`.
pub(crate) fn error(err: &ErrorReply) -> Value {
    let kind = err.kind.clone().unwrap_or_else(|| {
        match err.status {
            400 => "invalid_request_error",
            401 => "authentication_error",
            403 => "permission_error",
            404 => "not_found_error",
            413 => "request_too_large",
            429 => "rate_limit_error",
            529 => "overloaded_error",
            _ => "api_error",
        }
        .to_string()
    });
    json!({"type": "error", "error": {"type": kind, "message": err.message}})
}

/// Reads `messages` (string or block content) into a [`Conversation`].
pub(crate) fn conversation(body: &Value) -> Result<Conversation, String> {
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .ok_or_else(|| "messages: Field required".to_string())?;
    let mut out = Vec::with_capacity(messages.len());
    for (index, m) in messages.iter().enumerate() {
        let side = match m.get("role").and_then(Value::as_str) {
            Some("assistant") => Side::Assistant,
            Some("user") => Side::User,
            other => {
                return Err(format!(
                    "messages.{index}.role: Input should be 'user' or 'assistant', got {other:?}"
                ));
            }
        };
        let mut msg = Message::new(index, side);
        match m.get("content") {
            Some(Value::String(s)) => msg.texts.push(s.clone()),
            Some(Value::Array(blocks)) => {
                for (position, b) in blocks.iter().enumerate() {
                    match b.get("type").and_then(Value::as_str) {
                        Some("text") => {
                            msg.texts.push(b.get("text").and_then(Value::as_str).unwrap_or("").to_string());
                        }
                        Some("tool_use") => {
                            msg.call_ids.push(b.get("id").and_then(Value::as_str).unwrap_or("").to_string());
                        }
                        Some("tool_result") => msg.results.push(ToolResult {
                            call_id: b.get("tool_use_id").and_then(Value::as_str).unwrap_or("").to_string(),
                            is_error: b.get("is_error").and_then(Value::as_bool),
                            position,
                        }),
                        _ => {}
                    }
                }
            }
            _ => return Err(format!("messages.{index}.content: Field required")),
        }
        out.push(msg);
    }
    Ok(Conversation { messages: out })
}
