//! Decodes Anthropic Messages stream events (Anthropic "Streaming Messages" docs).
//!
//! `message_start` gives the model and initial usage; `content_block_start/delta/stop` carry text,
//! `tool_use` (arguments as `input_json_delta` pieces), `thinking` (`thinking_delta`,
//! `signature_delta`) and `redacted_thinking`; `message_delta` gives the stop reason and usage
//! overlays; `message_stop` ends the response; `ping` is ignored; `error` ends it with an error.
//! Events are dispatched on the JSON `type` (the `event:` line is optional). A `tool_use` block that
//! never gets `content_block_stop` (cut by `max_tokens`) gets no `ToolCallEnd`, so the accumulator
//! marks it incomplete.

use std::collections::BTreeMap;

use lathe_protocol::{ModelEvent, ProviderError, StopReason, Usage};
use serde_json::Value;

use crate::error::{parse_error_object, stream_error};
use crate::sse::{WireDecoder, non_empty, parse_arguments};

/// The kind of an open content block.
#[derive(Debug)]
enum Block {
    Text,
    Tool { raw: String },
    Thinking,
    Other,
}

/// Anthropic stream state.
#[derive(Debug, Default)]
pub(crate) struct AnthropicDecoder {
    blocks: BTreeMap<usize, Block>,
    /// The index of the latest block started: a start event without `index` takes the next one,
    /// a delta or stop without it belongs to the latest block (blocks are never merged).
    latest: Option<usize>,
    stop: Option<StopReason>,
}

/// Maps an Anthropic `stop_reason`.
pub(crate) fn map_stop_reason(reason: &str) -> StopReason {
    match reason {
        "end_turn" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" | "model_context_window_exceeded" => StopReason::MaxTokens,
        "stop_sequence" => StopReason::StopSequence,
        "refusal" => StopReason::Refusal,
        "pause_turn" => StopReason::PauseTurn,
        other => {
            tracing::warn!(stop_reason = other, "unknown Anthropic stop_reason; treating it as end_turn");
            StopReason::EndTurn
        }
    }
}

/// Anthropic usage object → [`Usage`]; `None` when no field is reported.
fn usage(value: Option<&Value>) -> Option<Usage> {
    let value = value?;
    let field = |key: &str| value.get(key).and_then(Value::as_u64);
    let usage = Usage {
        input_tokens: field("input_tokens"),
        output_tokens: field("output_tokens"),
        cache_read_input_tokens: field("cache_read_input_tokens"),
        cache_creation_input_tokens: field("cache_creation_input_tokens"),
    };
    usage.is_reported().then_some(usage)
}

impl AnthropicDecoder {
    /// The block index an event names; `None` when it names none (see [`AnthropicDecoder::latest`]).
    fn named_index(data: &Value) -> Option<usize> {
        data.get("index").and_then(Value::as_u64).and_then(|index| usize::try_from(index).ok())
    }

    fn block_start(&mut self, data: &Value, out: &mut Vec<ModelEvent>) {
        let index = Self::named_index(data).unwrap_or_else(|| self.latest.map_or(0, |latest| latest + 1));
        self.latest = Some(index);
        let block = data.get("content_block").unwrap_or(&Value::Null);
        let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
        let state = match kind {
            "text" => {
                if let Some(text) = non_empty(block, "text") {
                    out.push(ModelEvent::TextDelta { text: text.to_string() });
                }
                Block::Text
            }
            "tool_use" => {
                out.push(ModelEvent::ToolCallStart {
                    index,
                    id: block.get("id").and_then(Value::as_str).unwrap_or_default().to_string(),
                    name: block.get("name").and_then(Value::as_str).unwrap_or_default().to_string(),
                });
                Block::Tool { raw: String::new() }
            }
            "thinking" => {
                let text = block.get("thinking").and_then(Value::as_str).unwrap_or_default();
                out.push(ModelEvent::ThinkingDelta { index, text: text.to_string() });
                if let Some(signature) = non_empty(block, "signature") {
                    out.push(ModelEvent::ThinkingSignature { index, signature: signature.to_string() });
                }
                Block::Thinking
            }
            "redacted_thinking" => {
                let data = block.get("data").and_then(Value::as_str).unwrap_or_default();
                out.push(ModelEvent::RedactedThinking { index, data: data.to_string() });
                Block::Other
            }
            other => {
                tracing::debug!(block_type = other, "ignoring Anthropic content block");
                Block::Other
            }
        };
        self.blocks.insert(index, state);
    }

    fn block_delta(&mut self, data: &Value, out: &mut Vec<ModelEvent>) {
        let index = Self::named_index(data).or(self.latest).unwrap_or(0);
        let delta = data.get("delta").unwrap_or(&Value::Null);
        match delta.get("type").and_then(Value::as_str).unwrap_or("") {
            "text_delta" => {
                if let Some(text) = non_empty(delta, "text") {
                    out.push(ModelEvent::TextDelta { text: text.to_string() });
                }
            }
            "input_json_delta" => {
                let piece = delta.get("partial_json").and_then(Value::as_str).unwrap_or_default();
                if let Some(Block::Tool { raw }) = self.blocks.get_mut(&index) {
                    raw.push_str(piece);
                }
                if !piece.is_empty() {
                    out.push(ModelEvent::ToolCallDelta { index, arguments: piece.to_string() });
                }
            }
            "thinking_delta" => {
                let text = delta.get("thinking").and_then(Value::as_str).unwrap_or_default();
                out.push(ModelEvent::ThinkingDelta { index, text: text.to_string() });
            }
            "signature_delta" => {
                if let Some(signature) = non_empty(delta, "signature") {
                    out.push(ModelEvent::ThinkingSignature { index, signature: signature.to_string() });
                }
            }
            other => tracing::debug!(delta_type = other, "ignoring Anthropic delta"),
        }
    }

    fn block_stop(&mut self, data: &Value, out: &mut Vec<ModelEvent>) {
        let index = Self::named_index(data).or(self.latest).unwrap_or(0);
        match self.blocks.remove(&index) {
            Some(Block::Tool { raw }) => {
                out.push(ModelEvent::ToolCallEnd { index, arguments: parse_arguments(&raw), raw });
            }
            Some(Block::Text | Block::Thinking | Block::Other) | None => {}
        }
    }
}

impl WireDecoder for AnthropicDecoder {
    fn on_event(&mut self, name: &str, data: Value, out: &mut Vec<ModelEvent>) {
        let kind = data.get("type").and_then(Value::as_str).unwrap_or(name).to_string();
        match kind.as_str() {
            "message_start" => {
                let message = data.get("message").unwrap_or(&Value::Null);
                let model = message.get("model").and_then(Value::as_str).map(str::to_string);
                out.push(ModelEvent::Started { model });
                if let Some(usage) = usage(message.get("usage")) {
                    out.push(ModelEvent::Usage(usage));
                }
            }
            "content_block_start" => self.block_start(&data, out),
            "content_block_delta" => self.block_delta(&data, out),
            "content_block_stop" => self.block_stop(&data, out),
            "message_delta" => {
                if let Some(reason) =
                    data.get("delta").and_then(|delta| delta.get("stop_reason")).and_then(Value::as_str)
                {
                    self.stop = Some(map_stop_reason(reason));
                }
                if let Some(usage) = usage(data.get("usage")) {
                    out.push(ModelEvent::Usage(usage));
                }
            }
            "message_stop" => match self.stop {
                Some(reason) => out.push(ModelEvent::Stop { reason }),
                None => out.push(ModelEvent::Error {
                    error: ProviderError::IncompleteStream {
                        detail: "message_stop arrived without a stop_reason".into(),
                    },
                }),
            },
            "ping" => {}
            "error" => {
                let (kind, message) = parse_error_object(&data).unwrap_or((None, data.to_string()));
                out.push(ModelEvent::Error { error: stream_error(kind, message) });
            }
            other => {
                if data.get("error").is_some_and(|error| !error.is_null())
                    && let Some((kind, message)) = parse_error_object(&data)
                {
                    out.push(ModelEvent::Error { error: stream_error(kind, message) });
                    return;
                }
                tracing::debug!(event_type = other, "ignoring unknown Anthropic event");
            }
        }
    }

    fn on_eof(&mut self, out: &mut Vec<ModelEvent>) {
        match self.stop {
            // message_delta said why the model stopped; only message_stop was lost.
            Some(reason) => out.push(ModelEvent::Stop { reason }),
            None => out.push(ModelEvent::Error {
                error: ProviderError::IncompleteStream {
                    detail: "the Anthropic stream ended before message_delta / message_stop".into(),
                },
            }),
        }
    }
}
