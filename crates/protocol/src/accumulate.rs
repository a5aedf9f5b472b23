//! Folds a [`ModelEvent`] stream into an [`AssistantMessage`].
//!
//! Order of content in the result: reasoning blocks and text in the order they started, then tool
//! calls in call-index order (Anthropic interleaves them by block index; we keep first-seen order).
//! An incomplete tool call (no `ToolCallEnd`, or unparseable JSON) is kept with `{}` arguments and
//! its raw text in `incomplete`, so the loop can answer it without running it. A
//! [`ModelEvent::Retry`] starts over: whatever a failed attempt streamed is dropped, so a response
//! that broke mid-stream and was sent again never mixes with its retry.

use serde_json::{Map, Value};

use crate::error::ProviderError;
use crate::event::{ModelEvent, StopReason, Usage};
use crate::ledger::{AssistantMessage, Content, Thinking, ThinkingFormat, ToolCall};

#[derive(Debug)]
enum Part {
    Text(String),
    Thinking { index: usize, thinking: Thinking },
    Call { index: usize, call: ToolCall, raw: String, done: bool },
}

/// Accumulates events of one response.
#[derive(Debug)]
pub struct Accumulator {
    format: ThinkingFormat,
    parts: Vec<Part>,
    refusal: Option<String>,
    usage: Usage,
    model: Option<String>,
    stop: Option<StopReason>,
    error: Option<ProviderError>,
}

impl Accumulator {
    /// A new accumulator; reasoning blocks are tagged with `format` (the protocol in use).
    pub fn new(format: ThinkingFormat) -> Self {
        Accumulator {
            format,
            parts: Vec::new(),
            refusal: None,
            usage: Usage::default(),
            model: None,
            stop: None,
            error: None,
        }
    }

    /// Applies one event.
    pub fn push(&mut self, event: &ModelEvent) {
        match event {
            ModelEvent::Started { model } => {
                if model.is_some() {
                    self.model.clone_from(model);
                }
            }
            ModelEvent::TextDelta { text } => match self.parts.last_mut() {
                Some(Part::Text(existing)) => existing.push_str(text),
                _ => self.parts.push(Part::Text(text.clone())),
            },
            ModelEvent::RefusalDelta { text } => self.refusal.get_or_insert_with(String::new).push_str(text),
            ModelEvent::ThinkingDelta { index, text } => self.thinking(*index).text.push_str(text),
            ModelEvent::ThinkingSignature { index, signature } => {
                self.thinking(*index).signature.get_or_insert_with(String::new).push_str(signature)
            }
            ModelEvent::RedactedThinking { index, data } => {
                self.thinking(*index).redacted = Some(data.clone())
            }
            ModelEvent::ToolCallStart { index, id, name } => self.parts.push(Part::Call {
                index: *index,
                call: ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    arguments: Value::Null,
                    incomplete: None,
                },
                raw: String::new(),
                done: false,
            }),
            ModelEvent::ToolCallDelta { index, arguments } => {
                if let Some((_, raw, _)) = self.call(*index) {
                    raw.push_str(arguments);
                }
            }
            ModelEvent::ToolCallEnd { index, arguments, raw: end_raw } => {
                if let Some((call, raw, done)) = self.call(*index) {
                    *done = true;
                    if raw.is_empty() {
                        raw.clone_from(end_raw);
                    }
                    match arguments {
                        Some(value) if value.is_object() => call.arguments = value.clone(),
                        // A string, array or null is not an argument object: keep what arrived.
                        Some(value) => {
                            call.incomplete =
                                Some(if raw.is_empty() { value.to_string() } else { raw.clone() })
                        }
                        None => call.incomplete = Some(raw.clone()),
                    }
                }
            }
            ModelEvent::Usage(usage) => self.usage.overlay(usage),
            ModelEvent::Retry(_) => self.start_over(),
            ModelEvent::Stop { reason } => self.stop = Some(*reason),
            ModelEvent::Error { error } => self.error = Some(error.clone()),
        }
    }

    /// Forgets everything the failed attempt streamed (content, usage, stop, error).
    fn start_over(&mut self) {
        self.parts.clear();
        self.refusal = None;
        self.usage = Usage::default();
        self.model = None;
        self.stop = None;
        self.error = None;
    }

    fn thinking(&mut self, index: usize) -> &mut Thinking {
        let position =
            self.parts.iter().position(|part| matches!(part, Part::Thinking { index: i, .. } if *i == index));
        let position = match position {
            Some(position) => position,
            None => {
                self.parts.push(Part::Thinking {
                    index,
                    thinking: Thinking {
                        text: String::new(),
                        signature: None,
                        redacted: None,
                        format: self.format,
                    },
                });
                self.parts.len() - 1
            }
        };
        match &mut self.parts[position] {
            Part::Thinking { thinking, .. } => thinking,
            // The position was found or created as a thinking part just above.
            Part::Text(_) | Part::Call { .. } => unreachable!("position points at a thinking part"),
        }
    }

    fn call(&mut self, index: usize) -> Option<(&mut ToolCall, &mut String, &mut bool)> {
        self.parts.iter_mut().rev().find_map(|part| match part {
            Part::Call { index: i, call, raw, done } if *i == index => Some((call, raw, done)),
            Part::Text(_) | Part::Thinking { .. } | Part::Call { .. } => None,
        })
    }

    /// The terminal error, if the stream ended with one.
    pub fn error(&self) -> Option<&ProviderError> {
        self.error.as_ref()
    }

    /// The refusal text, if any.
    pub fn refusal(&self) -> Option<&str> {
        self.refusal.as_deref()
    }

    /// The stop reason the stream reported (before any normalisation of errors and refusals).
    pub fn reported_stop(&self) -> Option<StopReason> {
        self.stop
    }

    /// The usage reported so far.
    pub fn usage(&self) -> Usage {
        self.usage
    }

    /// Whether any content (text, reasoning, tool call) has arrived.
    pub fn has_content(&self) -> bool {
        !self.parts.is_empty() || self.refusal.is_some()
    }

    /// Builds the assistant message. `fallback_model` is used when the provider reported none.
    ///
    /// The stop reason follows the cassette precedence: error, then refusal, then the reported
    /// reason; a stream with no terminal signal is `Error`.
    pub fn finish(self, fallback_model: &str) -> AssistantMessage {
        let stop = if self.error.is_some() {
            StopReason::Error
        } else if self.refusal.is_some() {
            StopReason::Refusal
        } else {
            self.stop.unwrap_or(StopReason::Error)
        };
        let mut content = Vec::with_capacity(self.parts.len() + 1);
        let mut calls = Vec::new();
        for part in self.parts {
            match part {
                Part::Text(text) => content.push(Content::Text { text }),
                Part::Thinking { thinking, .. } => content.push(Content::Thinking(thinking)),
                Part::Call { index, mut call, raw, done } => {
                    if !done && call.incomplete.is_none() {
                        call.incomplete = Some(raw);
                    }
                    if call.incomplete.is_some() || !call.arguments.is_object() {
                        call.arguments = Value::Object(Map::new());
                    }
                    calls.push((index, call));
                }
            }
        }
        if let Some(refusal) = self.refusal {
            content.push(Content::Text { text: refusal });
        }
        calls.sort_by_key(|(index, _)| *index);
        content.extend(calls.into_iter().map(|(_, call)| Content::ToolCall(call)));
        AssistantMessage {
            content,
            stop,
            usage: self.usage,
            model: self.model.unwrap_or_else(|| fallback_model.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn assembles_text_thinking_and_calls() {
        let mut acc = Accumulator::new(ThinkingFormat::Anthropic);
        for event in [
            ModelEvent::ThinkingDelta { index: 0, text: "let me ".into() },
            ModelEvent::ThinkingDelta { index: 0, text: "think".into() },
            ModelEvent::ThinkingSignature { index: 0, signature: "sig".into() },
            ModelEvent::TextDelta { text: "Hi".into() },
            ModelEvent::ToolCallStart { index: 1, id: "b".into(), name: "glob".into() },
            ModelEvent::ToolCallStart { index: 0, id: "a".into(), name: "read_file".into() },
            ModelEvent::ToolCallDelta { index: 0, arguments: "{\"path\":".into() },
            ModelEvent::ToolCallDelta { index: 0, arguments: "\"x\"}".into() },
            ModelEvent::ToolCallEnd { index: 0, arguments: Some(json!({"path": "x"})), raw: String::new() },
            ModelEvent::Stop { reason: StopReason::MaxTokens },
        ] {
            acc.push(&event);
        }
        let message = acc.finish("m");
        assert_eq!(message.stop, StopReason::MaxTokens);
        assert_eq!(message.text(), "Hi");
        let calls: Vec<&ToolCall> = message.tool_calls().collect();
        assert_eq!(calls[0].arguments, json!({"path": "x"}));
        assert_eq!(calls[0].incomplete, None);
        assert_eq!(calls[1].id, "b");
        assert_eq!(calls[1].incomplete.as_deref(), Some(""));
        assert_eq!(calls[1].arguments, json!({}));
        assert!(matches!(&message.content[0], Content::Thinking(t) if t.text == "let me think"));
    }

    #[test]
    fn a_retry_discards_what_the_failed_attempt_streamed() {
        let mut acc = Accumulator::new(ThinkingFormat::Anthropic);
        for event in [
            ModelEvent::Started { model: Some("first".into()) },
            ModelEvent::TextDelta { text: "Let me look".into() },
            ModelEvent::ToolCallStart { index: 1, id: "toolu_1".into(), name: "read_file".into() },
            ModelEvent::ToolCallDelta { index: 1, arguments: "{\"path\":\"a.".into() },
            ModelEvent::Usage(Usage { output_tokens: Some(9), ..Usage::default() }),
            ModelEvent::Retry(crate::RetryInfo {
                attempt: 1,
                max_retries: 4,
                delay_ms: 10,
                error: ProviderError::Network { message: "reset".into() },
                discards_partial: true,
            }),
            ModelEvent::Started { model: Some("second".into()) },
            ModelEvent::TextDelta { text: "Reading".into() },
            ModelEvent::Stop { reason: StopReason::EndTurn },
        ] {
            acc.push(&event);
        }
        let message = acc.finish("m");
        assert_eq!(message.text(), "Reading");
        assert_eq!(message.tool_calls().count(), 0);
        assert_eq!(message.usage, Usage::default());
        assert_eq!(message.model, "second");
        assert_eq!(message.stop, StopReason::EndTurn);
    }
}
