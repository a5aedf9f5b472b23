//! Decodes OpenAI Responses stream events (OpenAI "Responses streaming events" reference).
//!
//! Output items are keyed by `output_index`, or by `item_id` / the item's `id` for servers that
//! omit it (an event with neither belongs to the latest item), and numbered in the order they
//! start, so two items are never merged: `function_call` items start a tool call (its id is the
//! `call_id`, not the `fc_…` item id) whose arguments arrive as
//! `response.function_call_arguments.delta` and end at `response.output_item.done`; `reasoning` items
//! give thinking — their `response.reasoning_text.delta`s, or else their summary deltas joined by a
//! blank line per summary part — and their `encrypted_content` from `output_item.done` as the
//! signature; `message` items give `response.output_text.delta` text and `response.refusal.delta`.
//! Terminal events: `response.completed` (tool_use when a function call was produced, else
//! end_turn), `response.incomplete` (max_tokens, or refusal for `content_filter`), and
//! `response.failed` or `error` (an error).

use lathe_protocol::{ModelEvent, StopReason, Usage};
use serde_json::Value;

use crate::error::{parse_error_object, stream_error};
use crate::sse::{WireDecoder, non_empty, parse_arguments};

/// One output item being assembled.
#[derive(Debug)]
enum Item {
    Reasoning { raw_text: bool, summary: String, summary_part: Option<u64> },
    Call { raw: String, ended: bool },
    Other,
}

/// How the stream identifies an output item.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct ItemKey {
    output_index: Option<u64>,
    item_id: Option<String>,
}

impl ItemKey {
    /// The key an event names: its `output_index`, and its `item_id` (or `item.id`).
    fn of(data: &Value) -> ItemKey {
        let item_id = non_empty(data, "item_id")
            .or_else(|| data.get("item").and_then(|item| non_empty(item, "id")))
            .map(str::to_string);
        ItemKey { output_index: data.get("output_index").and_then(Value::as_u64), item_id }
    }
}

/// Responses stream state.
#[derive(Debug, Default)]
pub(crate) struct ResponsesDecoder {
    started: bool,
    /// Items in the order they started; the position is the index of their events.
    items: Vec<(ItemKey, Item)>,
    function_calls: bool,
    refusal: bool,
}

/// Responses usage object → [`Usage`].
fn usage(response: &Value) -> Option<Usage> {
    let value = response.get("usage").filter(|usage| usage.is_object())?;
    Some(Usage {
        input_tokens: value.get("input_tokens").and_then(Value::as_u64),
        output_tokens: value.get("output_tokens").and_then(Value::as_u64),
        cache_read_input_tokens: value
            .get("input_tokens_details")
            .and_then(|details| details.get("cached_tokens"))
            .and_then(Value::as_u64),
        cache_creation_input_tokens: None,
    })
}

impl ResponsesDecoder {
    /// The item an event belongs to: by `output_index` when the stream sends it, else by item id,
    /// else (an event naming neither) the latest item.
    fn slot(&self, key: &ItemKey) -> Option<usize> {
        let by_index = key
            .output_index
            .and_then(|wanted| self.items.iter().rposition(|(k, _)| k.output_index == Some(wanted)));
        let by_id = || {
            key.item_id
                .as_ref()
                .and_then(|wanted| self.items.iter().rposition(|(k, _)| k.item_id.as_ref() == Some(wanted)))
        };
        match (key.output_index, &key.item_id) {
            (Some(_), _) => by_index.or_else(by_id),
            (None, Some(_)) => by_id(),
            (None, None) => self.items.len().checked_sub(1),
        }
    }

    fn item(&mut self, key: &ItemKey) -> Option<(usize, &mut Item)> {
        let slot = self.slot(key)?;
        self.items.get_mut(slot).map(|(_, item)| (slot, item))
    }

    fn item_added(&mut self, key: ItemKey, item: &Value, out: &mut Vec<ModelEvent>) -> usize {
        if (key.output_index.is_some() || key.item_id.is_some())
            && let Some(slot) = self.slot(&key)
        {
            return slot;
        }
        let index = self.items.len();
        let state = match item.get("type").and_then(Value::as_str).unwrap_or("") {
            "function_call" => {
                self.function_calls = true;
                let id = non_empty(item, "call_id").or_else(|| non_empty(item, "id")).unwrap_or_default();
                out.push(ModelEvent::ToolCallStart {
                    index,
                    id: id.to_string(),
                    name: item.get("name").and_then(Value::as_str).unwrap_or_default().to_string(),
                });
                Item::Call { raw: String::new(), ended: false }
            }
            "reasoning" => {
                out.push(ModelEvent::ThinkingDelta { index, text: String::new() });
                Item::Reasoning { raw_text: false, summary: String::new(), summary_part: None }
            }
            _ => Item::Other,
        };
        self.items.push((key, state));
        index
    }

    fn item_done(&mut self, key: ItemKey, item: &Value, out: &mut Vec<ModelEvent>) {
        let index = self.item_added(key, item, out);
        match self.items.get_mut(index).map(|(_, item)| item) {
            Some(Item::Reasoning { raw_text, summary, .. }) => {
                if !*raw_text && !summary.is_empty() {
                    out.push(ModelEvent::ThinkingDelta { index, text: std::mem::take(summary) });
                }
                if let Some(signature) = non_empty(item, "encrypted_content") {
                    out.push(ModelEvent::ThinkingSignature { index, signature: signature.to_string() });
                }
            }
            Some(Item::Call { raw, ended }) => {
                if !*ended {
                    *ended = true;
                    out.push(ModelEvent::ToolCallEnd {
                        index,
                        arguments: parse_arguments(raw),
                        raw: raw.clone(),
                    });
                }
            }
            Some(Item::Other) | None => {}
        }
    }

    fn arguments_delta(&mut self, key: &ItemKey, piece: &str, out: &mut Vec<ModelEvent>) {
        if let Some((index, Item::Call { raw, ended: false })) = self.item(key) {
            raw.push_str(piece);
            if !piece.is_empty() {
                out.push(ModelEvent::ToolCallDelta { index, arguments: piece.to_string() });
            }
        }
    }

    fn terminal(&mut self, kind: &str, data: &Value, out: &mut Vec<ModelEvent>) {
        let response = data.get("response").unwrap_or(&Value::Null);
        if let Some(usage) = usage(response) {
            out.push(ModelEvent::Usage(usage));
        }
        let reason = match kind {
            "response.incomplete" => {
                let why = response
                    .get("incomplete_details")
                    .and_then(|details| details.get("reason"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if why == "content_filter" { StopReason::Refusal } else { StopReason::MaxTokens }
            }
            _ => {
                let listed_call = response.get("output").and_then(Value::as_array).is_some_and(|items| {
                    items.iter().any(|item| item.get("type").and_then(Value::as_str) == Some("function_call"))
                });
                if self.function_calls || listed_call { StopReason::ToolUse } else { StopReason::EndTurn }
            }
        };
        let reason = if self.refusal { StopReason::Refusal } else { reason };
        out.push(ModelEvent::Stop { reason });
    }
}

impl WireDecoder for ResponsesDecoder {
    fn on_event(&mut self, name: &str, data: Value, out: &mut Vec<ModelEvent>) {
        let kind = data.get("type").and_then(Value::as_str).unwrap_or(name).to_string();
        let key = ItemKey::of(&data);
        match kind.as_str() {
            "response.created" | "response.in_progress" => {
                if !self.started {
                    self.started = true;
                    let model = data.get("response").and_then(|response| response.get("model"));
                    out.push(ModelEvent::Started {
                        model: model.and_then(Value::as_str).map(str::to_string),
                    });
                }
            }
            "response.output_item.added" => {
                self.item_added(key, data.get("item").unwrap_or(&Value::Null), out);
            }
            "response.output_item.done" => self.item_done(key, data.get("item").unwrap_or(&Value::Null), out),
            "response.output_text.delta" => {
                if let Some(text) = non_empty(&data, "delta") {
                    out.push(ModelEvent::TextDelta { text: text.to_string() });
                }
            }
            "response.refusal.delta" => {
                if let Some(text) = non_empty(&data, "delta") {
                    self.refusal = true;
                    out.push(ModelEvent::RefusalDelta { text: text.to_string() });
                }
            }
            "response.reasoning_text.delta" => {
                let Some((index, item)) = self.item(&key) else { return };
                if let Item::Reasoning { raw_text, .. } = item {
                    *raw_text = true;
                }
                if let Some(text) = non_empty(&data, "delta") {
                    out.push(ModelEvent::ThinkingDelta { index, text: text.to_string() });
                }
            }
            "response.reasoning_summary_text.delta" => {
                let part = data.get("summary_index").and_then(Value::as_u64);
                if let Some((_, Item::Reasoning { summary, summary_part, .. })) = self.item(&key) {
                    if summary_part.is_some() && *summary_part != part {
                        summary.push_str("\n\n");
                    }
                    *summary_part = part;
                    summary.push_str(data.get("delta").and_then(Value::as_str).unwrap_or_default());
                }
            }
            "response.function_call_arguments.delta" => {
                let piece = data.get("delta").and_then(Value::as_str).unwrap_or_default().to_string();
                self.arguments_delta(&key, &piece, out);
            }
            "response.function_call_arguments.done" => {
                // Only used when no delta carried the arguments.
                if let Some((_, Item::Call { raw, .. })) = self.item(&key)
                    && raw.is_empty()
                {
                    let whole = data.get("arguments").and_then(Value::as_str).unwrap_or_default().to_string();
                    self.arguments_delta(&key, &whole, out);
                }
            }
            "response.completed" | "response.incomplete" => self.terminal(&kind, &data, out),
            "response.failed" => {
                let response = data.get("response").unwrap_or(&Value::Null);
                if let Some(usage) = usage(response) {
                    out.push(ModelEvent::Usage(usage));
                }
                let (kind, message) = response
                    .get("error")
                    .filter(|error| !error.is_null())
                    .and_then(parse_error_object)
                    .unwrap_or((None, "the response failed without an error object".into()));
                out.push(ModelEvent::Error { error: stream_error(kind, message) });
            }
            "error" => {
                let (kind, message) = parse_error_object(&data).unwrap_or((None, data.to_string()));
                out.push(ModelEvent::Error { error: stream_error(kind, message) });
            }
            other => {
                if (other.ends_with(".failed") || data.get("error").is_some_and(|error| error.is_object()))
                    && let Some((kind, message)) = data.get("error").and_then(parse_error_object)
                {
                    out.push(ModelEvent::Error { error: stream_error(kind, message) });
                    return;
                }
                tracing::trace!(event_type = other, "ignoring Responses event");
            }
        }
    }

    fn on_eof(&mut self, out: &mut Vec<ModelEvent>) {
        out.push(ModelEvent::Error {
            error: lathe_protocol::ProviderError::IncompleteStream {
                detail: "the stream ended without response.completed, response.incomplete or response.failed"
                    .into(),
            },
        });
    }
}
