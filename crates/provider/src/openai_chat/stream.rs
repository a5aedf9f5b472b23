//! Decodes Chat Completions chunks (OpenAI "Streaming" reference, plus what compatible servers
//! send).
//!
//! Per chunk: the first `model` starts the response; a non-null `usage` (in a `choices: []` chunk,
//! on the finish chunk, or after it) is reported; a top-level `error` object ends the stream with
//! that error (after the chunk's usage); `choices[0].delta` carries `reasoning_content` (DeepSeek)
//! or `reasoning` (Ollama, OpenRouter) as thinking, `reasoning_details[].signature` as its
//! signature, `content`, `refusal`, and `tool_calls` pieces (id and name come once, arguments in
//! pieces). A `finish_reason` closes every call; the stream still runs to EOF because usage may
//! follow. Only choice 0 is supported: `n > 1` is never requested.
//!
//! Which call a `tool_calls` piece belongs to ([`ChatDecoder::slot`]): its `index` when present;
//! else its `id`; else a piece that names a function starts a new call and one with only arguments
//! continues the latest call. Servers that omit `index` (and some that repeat index 0 for every
//! call) send each parallel call whole, so under every rule a piece with a new `id`, or a second
//! JSON object after a call's arguments are already complete, starts a new call: two complete
//! argument objects are never concatenated. Calls are numbered in the order they start.

use lathe_protocol::{ModelEvent, ProviderError, StopReason, Usage};
use serde_json::Value;

use crate::error::{parse_error_object, stream_error};
use crate::sse::{WireDecoder, index_of, non_empty, parse_arguments};

/// One tool call being assembled.
#[derive(Debug, Default)]
struct Call {
    /// The wire `index` it was announced with, if any.
    wire_index: Option<u64>,
    /// The provider's call id, if it sent one.
    id: Option<String>,
    raw: String,
    ended: bool,
}

impl Call {
    /// Whether `piece` cannot continue this call: a different id, or a new JSON value after
    /// arguments that already form a complete object.
    fn rejects(&self, id: Option<&str>, arguments: Option<&str>) -> bool {
        let other_id = matches!((id, self.id.as_deref()), (Some(new), Some(old)) if new != old);
        let restarts = arguments.is_some_and(|piece| piece.trim_start().starts_with('{'))
            && serde_json::from_str::<Value>(&self.raw).is_ok_and(|value| value.is_object());
        other_id || restarts
    }
}

/// Chat stream state.
#[derive(Debug, Default)]
pub(crate) struct ChatDecoder {
    started: bool,
    /// Calls in the order they started; the position is the call index of the events.
    calls: Vec<Call>,
    finish: Option<StopReason>,
    refusal: bool,
}

/// Maps a Chat `finish_reason`.
pub(crate) fn map_finish_reason(reason: &str) -> StopReason {
    match reason {
        "stop" => StopReason::EndTurn,
        "tool_calls" | "function_call" => StopReason::ToolUse,
        "length" => StopReason::MaxTokens,
        "content_filter" => StopReason::Refusal,
        other => {
            tracing::warn!(finish_reason = other, "unknown finish_reason; treating it as end_turn");
            StopReason::EndTurn
        }
    }
}

/// Chat usage object → [`Usage`] (cache creation is never reported by this protocol).
fn usage(value: &Value) -> Option<Usage> {
    if !value.is_object() {
        return None;
    }
    Some(Usage {
        input_tokens: value.get("prompt_tokens").and_then(Value::as_u64),
        output_tokens: value.get("completion_tokens").and_then(Value::as_u64),
        cache_read_input_tokens: value
            .get("prompt_tokens_details")
            .and_then(|details| details.get("cached_tokens"))
            .and_then(Value::as_u64),
        cache_creation_input_tokens: None,
    })
}

impl ChatDecoder {
    fn delta(&mut self, delta: &Value, out: &mut Vec<ModelEvent>) {
        let reasoning = non_empty(delta, "reasoning_content").or_else(|| non_empty(delta, "reasoning"));
        if let Some(text) = reasoning {
            out.push(ModelEvent::ThinkingDelta { index: 0, text: text.to_string() });
        }
        if let Some(details) = delta.get("reasoning_details").and_then(Value::as_array) {
            for detail in details {
                if let Some(signature) = non_empty(detail, "signature") {
                    out.push(ModelEvent::ThinkingSignature { index: 0, signature: signature.to_string() });
                }
            }
        }
        if let Some(text) = non_empty(delta, "content") {
            out.push(ModelEvent::TextDelta { text: text.to_string() });
        }
        if let Some(text) = non_empty(delta, "refusal") {
            self.refusal = true;
            out.push(ModelEvent::RefusalDelta { text: text.to_string() });
        }
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for piece in calls {
                let wire_index = piece.get("index").and_then(Value::as_u64);
                let id = non_empty(piece, "id");
                let function = piece.get("function").unwrap_or(&Value::Null);
                self.call_piece(wire_index, id, function, out);
            }
        }
        // The legacy single `function_call` delta: one call, its name on the first piece.
        if let Some(function) = delta.get("function_call").filter(|value| value.is_object()) {
            self.call_piece(None, None, function, out);
        }
    }

    /// The call a piece belongs to (see the module docs), or `None` when it starts a new one.
    fn slot(&self, wire_index: Option<u64>, id: Option<&str>, function: &Value) -> Option<usize> {
        let arguments = non_empty(function, "arguments");
        let found = match (wire_index, id) {
            (Some(wire_index), _) => self.calls.iter().rposition(|call| call.wire_index == Some(wire_index)),
            (None, Some(id)) => self.calls.iter().rposition(|call| call.id.as_deref() == Some(id)),
            (None, None) if non_empty(function, "name").is_some() => None,
            (None, None) => self.calls.len().checked_sub(1),
        };
        found.filter(|&slot| !self.calls[slot].rejects(id, arguments))
    }

    fn call_piece(
        &mut self,
        wire_index: Option<u64>,
        id: Option<&str>,
        function: &Value,
        out: &mut Vec<ModelEvent>,
    ) {
        let index = match self.slot(wire_index, id, function) {
            Some(index) => index,
            None => {
                let index = self.calls.len();
                out.push(ModelEvent::ToolCallStart {
                    index,
                    id: id.map_or_else(|| format!("call_{index}"), str::to_string),
                    name: function.get("name").and_then(Value::as_str).unwrap_or_default().to_string(),
                });
                self.calls.push(Call { wire_index, id: id.map(str::to_string), ..Call::default() });
                index
            }
        };
        if let Some(piece) = non_empty(function, "arguments") {
            self.calls[index].raw.push_str(piece);
            out.push(ModelEvent::ToolCallDelta { index, arguments: piece.to_string() });
        }
    }

    fn finish(&mut self, reason: &str, out: &mut Vec<ModelEvent>) {
        self.finish = Some(map_finish_reason(reason));
        for (index, call) in self.calls.iter_mut().enumerate() {
            if !call.ended {
                call.ended = true;
                out.push(ModelEvent::ToolCallEnd {
                    index,
                    arguments: parse_arguments(&call.raw),
                    raw: call.raw.clone(),
                });
            }
        }
    }
}

impl WireDecoder for ChatDecoder {
    fn on_event(&mut self, _name: &str, data: Value, out: &mut Vec<ModelEvent>) {
        if !self.started {
            self.started = true;
            out.push(ModelEvent::Started {
                model: data.get("model").and_then(Value::as_str).map(str::to_string),
            });
        }
        if let Some(usage) = data.get("usage").and_then(usage) {
            out.push(ModelEvent::Usage(usage));
        }
        if data.get("error").is_some_and(|error| !error.is_null()) {
            let (kind, message) = parse_error_object(&data).unwrap_or((None, data.to_string()));
            out.push(ModelEvent::Error { error: stream_error(kind, message) });
            return;
        }
        let Some(choices) = data.get("choices").and_then(Value::as_array) else { return };
        for choice in choices {
            let index = index_of(choice.get("index"));
            if index != 0 {
                out.push(ModelEvent::Error {
                    error: ProviderError::Decode {
                        detail: format!(
                            "the stream carries choice index {index}; only one choice (n = 1) is supported"
                        ),
                    },
                });
                return;
            }
            if let Some(delta) = choice.get("delta") {
                self.delta(delta, out);
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish(reason, out);
            }
        }
    }

    /// After a `finish_reason`, `[DONE]` ends the response (a server that keeps the connection open
    /// would otherwise hold the stream until the idle timeout); before it, `[DONE]` is skipped.
    fn on_done(&mut self, out: &mut Vec<ModelEvent>) {
        if self.finish.is_some() {
            self.on_eof(out);
        }
    }

    fn on_eof(&mut self, out: &mut Vec<ModelEvent>) {
        match self.finish {
            Some(reason) => {
                let reason = if self.refusal { StopReason::Refusal } else { reason };
                out.push(ModelEvent::Stop { reason });
            }
            None => out.push(ModelEvent::Error {
                error: ProviderError::IncompleteStream {
                    detail: "the stream ended without a finish_reason".into(),
                },
            }),
        }
    }
}
