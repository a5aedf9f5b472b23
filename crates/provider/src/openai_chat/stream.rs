//! Decodes Chat Completions chunks (OpenAI "Streaming" reference, plus what compatible servers
//! send).
//!
//! Per chunk: the first `model` starts the response; a non-null `usage` (in a `choices: []` chunk,
//! on the finish chunk, or after it) is reported; a top-level `error` object ends the stream with
//! that error (after the chunk's usage); `choices[0].delta` carries `reasoning_content` (DeepSeek)
//! or `reasoning` (Ollama, OpenRouter) as thinking, `reasoning_details[].signature` as its
//! signature, `content`, `refusal`, and `tool_calls` pieces grouped by `index` (id and name come
//! once, arguments in pieces). A `finish_reason` closes every call; the stream still runs to EOF
//! because usage may follow. Only choice 0 is supported: `n > 1` is never requested.

use std::collections::BTreeMap;

use lathe_protocol::{ModelEvent, ProviderError, StopReason, Usage};
use serde_json::Value;

use crate::error::{parse_error_object, stream_error};
use crate::sse::{WireDecoder, index_of, non_empty, parse_arguments};

/// One tool call being assembled.
#[derive(Debug, Default)]
struct Call {
    raw: String,
    ended: bool,
}

/// Chat stream state.
#[derive(Debug, Default)]
pub(crate) struct ChatDecoder {
    started: bool,
    calls: BTreeMap<usize, Call>,
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
            for (position, piece) in calls.iter().enumerate() {
                let index = piece.get("index").map_or(position, |index| index_of(Some(index)));
                let function = piece.get("function").unwrap_or(&Value::Null);
                self.call_piece(index, piece.get("id"), function, out);
            }
        }
        // The legacy single `function_call` delta: one call at index 0.
        if let Some(function) = delta.get("function_call").filter(|value| value.is_object()) {
            self.call_piece(0, None, function, out);
        }
    }

    fn call_piece(&mut self, index: usize, id: Option<&Value>, function: &Value, out: &mut Vec<ModelEvent>) {
        let call = self.calls.entry(index).or_insert_with(|| {
            out.push(ModelEvent::ToolCallStart {
                index,
                id: id
                    .and_then(Value::as_str)
                    .filter(|id| !id.is_empty())
                    .map_or_else(|| format!("call_{index}"), str::to_string),
                name: function.get("name").and_then(Value::as_str).unwrap_or_default().to_string(),
            });
            Call::default()
        });
        if let Some(piece) = non_empty(function, "arguments") {
            call.raw.push_str(piece);
            out.push(ModelEvent::ToolCallDelta { index, arguments: piece.to_string() });
        }
    }

    fn finish(&mut self, reason: &str, out: &mut Vec<ModelEvent>) {
        self.finish = Some(map_finish_reason(reason));
        for (index, call) in &mut self.calls {
            if !call.ended {
                call.ended = true;
                out.push(ModelEvent::ToolCallEnd {
                    index: *index,
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
