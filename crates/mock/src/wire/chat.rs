//! OpenAI Chat Completions: chunk stream and completion encoders, and the request parser.
//!
//! Stream shape (as in `shared/cassettes/openai-chat/`): a first chunk with `role: assistant`, thinking as
//! `delta.reasoning_content` (DeepSeek's field), text as `delta.content`, then `delta.tool_calls` by index —
//! each call's first delta carries `id`, `type` and `function.name` with empty arguments, later deltas only
//! argument pieces — then a chunk with empty delta and `finish_reason`, then (with
//! `stream_options.include_usage`) a `choices: []` chunk with usage, then `data: [DONE]`. With
//! `omit_call_index` each call is one delta carrying id, name and the whole arguments but no `index`;
//! `drop_after_content` ends the events after the last content delta.

use serde_json::{Value, json};

use super::{SseEvent, unix_now};
use crate::replay::{Conversation, Message, Side, ToolResult};
use crate::reply::{Reply, Stop};

fn finish_reason(stop: Stop) -> &'static str {
    match stop {
        Stop::EndTurn => "stop",
        Stop::ToolUse => "tool_calls",
        Stop::MaxTokens => "length",
    }
}

fn usage(reply: &Reply) -> Value {
    let u = reply.usage;
    json!({
        "prompt_tokens": u.input_tokens,
        "completion_tokens": u.output_tokens,
        "total_tokens": u.input_tokens + u.output_tokens,
        "prompt_tokens_details": {"cached_tokens": u.cache_read_input_tokens, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                      "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
    })
}

struct Chunker {
    id: String,
    created: u64,
    model: String,
}

impl Chunker {
    fn chunk(&self, delta: Value, finish: Option<&str>) -> SseEvent {
        SseEvent::data(
            json!({"id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": self.model,
                   "system_fingerprint": "fp_mock", "choices": [{"index": 0, "delta": delta, "logprobs": null,
                   "finish_reason": finish}]})
            .to_string(),
        )
    }
}

/// The SSE events of a streamed completion, `[DONE]` included.
pub(crate) fn stream(reply: &Reply, include_usage: bool, seq: usize) -> Vec<SseEvent> {
    let c =
        Chunker { id: format!("chatcmpl-mock{seq:016}"), created: unix_now(), model: reply.model.clone() };
    let mut out = vec![c.chunk(json!({"role": "assistant", "content": "", "refusal": null}), None)];
    if let Some(t) = &reply.thinking {
        for piece in &t.text {
            out.push(c.chunk(json!({"reasoning_content": piece}), None));
        }
    }
    for piece in &reply.text {
        out.push(c.chunk(json!({"content": piece}), None));
    }
    for (i, call) in reply.calls.iter().enumerate() {
        if reply.omit_call_index {
            // As some OpenAI-compatible servers send parallel calls: each whole, without `index`.
            out.push(c.chunk(
                json!({"tool_calls": [{"id": call.id, "type": "function",
                                       "function": {"name": call.name, "arguments": call.arguments()}}]}),
                None,
            ));
            continue;
        }
        out.push(c.chunk(
            json!({"tool_calls": [{"index": i, "id": call.id, "type": "function",
                                   "function": {"name": call.name, "arguments": ""}}]}),
            None,
        ));
        for piece in &call.pieces {
            out.push(c.chunk(json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}), None));
        }
    }
    if reply.drop_after_content {
        return out;
    }
    if let Some(e) = &reply.stream_error {
        out.push(SseEvent::data(
            json!({"error": {"message": e.message, "type": e.kind, "param": null, "code": e.kind}})
                .to_string(),
        ));
        return out;
    }
    out.push(c.chunk(json!({}), Some(finish_reason(reply.stop))));
    if include_usage {
        out.push(SseEvent::data(
            json!({"id": c.id, "object": "chat.completion.chunk", "created": c.created, "model": c.model,
                   "system_fingerprint": "fp_mock", "choices": [], "usage": usage(reply)})
            .to_string(),
        ));
    }
    out.push(SseEvent::data("[DONE]".into()));
    out
}

/// The non-streaming completion body.
pub(crate) fn completion(reply: &Reply, seq: usize) -> Value {
    let mut message = json!({"role": "assistant",
        "content": if reply.text.is_empty() { Value::Null } else { Value::String(reply.full_text()) },
        "refusal": null});
    if let Some(t) = &reply.thinking {
        message["reasoning_content"] = json!(t.text.concat());
    }
    if !reply.calls.is_empty() {
        message["tool_calls"] = reply
            .calls
            .iter()
            .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments()}}))
            .collect();
    }
    json!({"id": format!("chatcmpl-mock{seq:016}"), "object": "chat.completion", "created": unix_now(),
           "model": reply.model, "system_fingerprint": "fp_mock",
           "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish_reason(reply.stop)}],
           "usage": usage(reply)})
}

fn content_texts(content: Option<&Value>) -> Vec<String> {
    match content {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(parts)) => parts
            .iter()
            .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

/// Reads `messages` into a [`Conversation`]: `tool` messages carry results, `system`/`developer` are ignored
/// by the turn counting.
pub(crate) fn conversation(body: &Value) -> Result<Conversation, String> {
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .ok_or_else(|| "Missing required parameter: 'messages'.".to_string())?;
    let mut out = Vec::with_capacity(messages.len());
    for (index, m) in messages.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        let mut msg = match role {
            "assistant" => Message::new(index, Side::Assistant),
            "user" => Message::new(index, Side::User),
            "tool" => Message::new(index, Side::User),
            "system" | "developer" => Message::new(index, Side::Other),
            other => {
                return Err(format!(
                    "Invalid value: '{other}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'."
                ));
            }
        };
        match role {
            "tool" => msg.results.push(ToolResult {
                call_id: m.get("tool_call_id").and_then(Value::as_str).unwrap_or("").to_string(),
                is_error: None,
                position: 0,
            }),
            "assistant" => {
                msg.texts = content_texts(m.get("content"));
                for call in m.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
                    msg.call_ids.push(call.get("id").and_then(Value::as_str).unwrap_or("").to_string());
                }
            }
            _ => msg.texts = content_texts(m.get("content")),
        }
        out.push(msg);
    }
    Ok(Conversation { messages: out })
}
