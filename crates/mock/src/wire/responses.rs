//! OpenAI Responses: event stream and response encoders, and the request parser.
//!
//! Stream shape (as in `shared/cassettes/openai-responses/`): `response.created`, `response.in_progress`,
//! then per output item `response.output_item.added` … `response.output_item.done`: a `reasoning` item
//! (summary part + `reasoning_summary_text.delta`s, `encrypted_content` = the thinking signature), a
//! `message` item (`content_part.added`, `output_text.delta`s, `output_text.done`, `content_part.done`), one
//! `function_call` item per call (`function_call_arguments.delta`s and `.done`, `call_id` = the call id);
//! then `response.completed` (or `response.incomplete` for `max_tokens`) with the output and usage. Every
//! event carries a `sequence_number`. A cut-off call gets no `.done` events. With `omit_call_index` no
//! event carries `output_index`; `drop_after_content` ends the events after the last output item.

use serde_json::{Value, json};

use super::{SseEvent, unix_now};
use crate::replay::{Conversation, Message, Side, ToolResult};
use crate::reply::{Reply, Stop};

fn reasoning_id(seq: usize) -> String {
    format!("rs_mock{seq:016}")
}
fn message_id(seq: usize) -> String {
    format!("msg_mock{seq:016}")
}
fn call_item_id(seq: usize, i: usize) -> String {
    format!("fc_mock{seq:012}{i:04}")
}

/// The `response` object; `output` holds the finished items.
pub(crate) fn response(reply: &Reply, seq: usize, output: &[Value]) -> Value {
    let u = reply.usage;
    let (status, incomplete) = match reply.stop {
        Stop::MaxTokens => ("incomplete", json!({"reason": "max_output_tokens"})),
        Stop::EndTurn | Stop::ToolUse => ("completed", Value::Null),
    };
    json!({"id": format!("resp_mock{seq:016}"), "object": "response", "created_at": unix_now(),
           "status": status, "error": null, "incomplete_details": incomplete, "model": reply.model,
           "output": output, "parallel_tool_calls": true, "previous_response_id": null,
           "usage": {"input_tokens": u.input_tokens,
                     "input_tokens_details": {"cached_tokens": u.cache_read_input_tokens},
                     "output_tokens": u.output_tokens,
                     "output_tokens_details": {"reasoning_tokens": 0},
                     "total_tokens": u.input_tokens + u.output_tokens}})
}

/// The finished output items of `reply`, in order (cut-off calls have `status: incomplete`).
pub(crate) fn output_items(reply: &Reply, seq: usize) -> Vec<Value> {
    let mut items = Vec::new();
    if let Some(t) = &reply.thinking {
        items.push(json!({"id": reasoning_id(seq), "type": "reasoning",
                          "summary": [{"type": "summary_text", "text": t.text.concat()}],
                          "encrypted_content": t.signature}));
    }
    if !reply.text.is_empty() {
        items.push(json!({"id": message_id(seq), "type": "message", "status": "completed", "role": "assistant",
                          "content": [{"type": "output_text", "annotations": [], "text": reply.full_text()}]}));
    }
    for (i, c) in reply.calls.iter().enumerate() {
        items.push(json!({"id": call_item_id(seq, i), "type": "function_call",
                          "status": if c.complete { "completed" } else { "incomplete" },
                          "arguments": c.arguments(), "call_id": c.id, "name": c.name}));
    }
    items
}

struct Events {
    out: Vec<SseEvent>,
    /// Leave `output_index` out of every event (items are then named by id only).
    omit_index: bool,
}

impl Events {
    fn push(&mut self, kind: &str, mut data: Value) {
        if self.omit_index
            && let Some(map) = data.as_object_mut()
        {
            map.remove("output_index");
        }
        data["type"] = json!(kind);
        data["sequence_number"] = json!(self.out.len());
        self.out.push(SseEvent::named(kind, &data));
    }
}

/// The SSE events of a streamed response.
pub(crate) fn stream(reply: &Reply, seq: usize) -> Vec<SseEvent> {
    let mut ev = Events { out: Vec::new(), omit_index: reply.omit_call_index };
    let mut started = response(reply, seq, &[]);
    started["status"] = json!("in_progress");
    started["usage"] = Value::Null;
    started["incomplete_details"] = Value::Null;
    ev.push("response.created", json!({"response": started}));
    ev.push("response.in_progress", json!({"response": started}));
    let finished = output_items(reply, seq);
    let mut done_items = Vec::new();
    let mut index = 0;
    if let Some(t) = &reply.thinking {
        let id = reasoning_id(seq);
        ev.push(
            "response.output_item.added",
            json!({"output_index": index,
            "item": {"id": id, "type": "reasoning", "summary": [], "encrypted_content": t.signature}}),
        );
        ev.push(
            "response.reasoning_summary_part.added",
            json!({"item_id": id, "output_index": index,
            "summary_index": 0, "part": {"type": "summary_text", "text": ""}}),
        );
        for piece in &t.text {
            ev.push(
                "response.reasoning_summary_text.delta",
                json!({"item_id": id, "output_index": index,
                "summary_index": 0, "delta": piece}),
            );
        }
        let full = t.text.concat();
        ev.push(
            "response.reasoning_summary_text.done",
            json!({"item_id": id, "output_index": index,
            "summary_index": 0, "text": full}),
        );
        ev.push(
            "response.reasoning_summary_part.done",
            json!({"item_id": id, "output_index": index,
            "summary_index": 0, "part": {"type": "summary_text", "text": full}}),
        );
        let item = finished[index].clone();
        ev.push("response.output_item.done", json!({"output_index": index, "item": item}));
        done_items.push(item);
        index += 1;
    }
    if !reply.text.is_empty() {
        let id = message_id(seq);
        ev.push("response.output_item.added", json!({"output_index": index,
            "item": {"id": id, "type": "message", "status": "in_progress", "role": "assistant", "content": []}}));
        ev.push(
            "response.content_part.added",
            json!({"item_id": id, "output_index": index, "content_index": 0,
            "part": {"type": "output_text", "annotations": [], "text": ""}}),
        );
        for piece in &reply.text {
            ev.push(
                "response.output_text.delta",
                json!({"item_id": id, "output_index": index,
                "content_index": 0, "delta": piece}),
            );
        }
        let full = reply.full_text();
        ev.push(
            "response.output_text.done",
            json!({"item_id": id, "output_index": index, "content_index": 0,
            "text": full}),
        );
        ev.push(
            "response.content_part.done",
            json!({"item_id": id, "output_index": index, "content_index": 0,
            "part": {"type": "output_text", "annotations": [], "text": full}}),
        );
        let item = finished[index].clone();
        ev.push("response.output_item.done", json!({"output_index": index, "item": item}));
        done_items.push(item);
        index += 1;
    }
    for (i, call) in reply.calls.iter().enumerate() {
        let id = call_item_id(seq, i);
        ev.push(
            "response.output_item.added",
            json!({"output_index": index,
            "item": {"id": id, "type": "function_call", "status": "in_progress", "arguments": "",
                     "call_id": call.id, "name": call.name}}),
        );
        for piece in &call.pieces {
            ev.push(
                "response.function_call_arguments.delta",
                json!({"item_id": id, "output_index": index,
                "delta": piece}),
            );
        }
        if call.complete {
            ev.push(
                "response.function_call_arguments.done",
                json!({"item_id": id, "output_index": index,
                "arguments": call.arguments()}),
            );
            let item = finished[index].clone();
            ev.push("response.output_item.done", json!({"output_index": index, "item": item}));
            done_items.push(item);
        }
        index += 1;
    }
    if reply.drop_after_content {
        return ev.out;
    }
    if let Some(e) = &reply.stream_error {
        ev.push("error", json!({"code": e.kind, "message": e.message, "param": null}));
        let mut failed = response(reply, seq, &done_items);
        failed["status"] = json!("failed");
        failed["error"] = json!({"code": e.kind, "message": e.message});
        ev.push("response.failed", json!({"response": failed}));
        return ev.out;
    }
    let end = response(reply, seq, &done_items);
    let kind = match reply.stop {
        Stop::MaxTokens => "response.incomplete",
        Stop::EndTurn | Stop::ToolUse => "response.completed",
    };
    ev.push(kind, json!({"response": end}));
    ev.out
}

fn content_texts(content: Option<&Value>) -> Vec<String> {
    match content {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(parts)) => parts
            .iter()
            .filter(|p| {
                matches!(p.get("type").and_then(Value::as_str), Some("input_text" | "output_text" | "text"))
            })
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

/// Reads `input` (a string, or a list of items) into a [`Conversation`]. Assistant-side items are
/// `message` with role assistant, `function_call` and `reasoning`; `function_call_output` carries a result.
pub(crate) fn conversation(body: &Value) -> Result<Conversation, String> {
    let items = match body.get("input") {
        Some(Value::String(s)) => {
            let mut m = Message::new(0, Side::User);
            m.texts.push(s.clone());
            return Ok(Conversation { messages: vec![m] });
        }
        Some(Value::Array(items)) => items,
        _ => return Err("Missing required parameter: 'input'.".to_string()),
    };
    let mut out = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let kind = item.get("type").and_then(Value::as_str).unwrap_or("message");
        let role = item.get("role").and_then(Value::as_str).unwrap_or("");
        let msg = match (kind, role) {
            ("message", "assistant") => {
                let mut m = Message::new(index, Side::Assistant);
                m.texts = content_texts(item.get("content"));
                m
            }
            ("message", "user") => {
                let mut m = Message::new(index, Side::User);
                m.texts = content_texts(item.get("content"));
                m
            }
            ("function_call", _) => {
                let mut m = Message::new(index, Side::Assistant);
                m.call_ids.push(item.get("call_id").and_then(Value::as_str).unwrap_or("").to_string());
                m
            }
            ("reasoning", _) => Message::new(index, Side::Assistant),
            ("function_call_output", _) => {
                let mut m = Message::new(index, Side::User);
                m.results.push(ToolResult {
                    call_id: item.get("call_id").and_then(Value::as_str).unwrap_or("").to_string(),
                    is_error: None,
                    position: 0,
                });
                m
            }
            _ => Message::new(index, Side::Other),
        };
        out.push(msg);
    }
    Ok(Conversation { messages: out })
}
