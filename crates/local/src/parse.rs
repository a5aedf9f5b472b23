//! Turns the model's streamed output text into [`ModelEvent`]s.
//!
//! The grammar ([`crate::grammar`]) guarantees the output is either free text or a sequence of
//! `<tool_call>\n{"name": "…", "arguments": {…}}\n</tool_call>` blocks separated by `\n` (the JSON
//! holds no raw newline). The parser re-scans the text received so far after every piece and emits
//! what became certain since the last piece:
//! - text → `TextDelta`;
//! - a call → `ToolCallStart` once its name is complete, `ToolCallDelta`s with the argument text
//!   (holding back the last character, which may be the closing `}` of the wrapper), and
//!   `ToolCallEnd` with the parsed arguments at the newline that ends the JSON;
//! - a `answer` call (in [`AnswerMode::FinalAnswerTool`]) → the decoded `answer` string as
//!   `TextDelta`s, so the front end sees a plain answer.
//!
//! [`OutputParser::finish`] closes an unfinished call as incomplete (`arguments: None`) and picks
//! the stop reason.

use lathe_protocol::{ModelEvent, StopReason};
use serde_json::Value;

use crate::chatml::FINAL_ANSWER_TOOL;
use crate::config::AnswerMode;

const OPEN: &str = "<tool_call>\n";
const CLOSE: &str = "</tool_call>";
const NAME_KEY: &str = "{\"name\": ";
const ARGS_KEY: &str = ", \"arguments\": ";
const ANSWER_KEY: &str = "{\"answer\": \"";
/// The `answer` arguments that open with the model's scratch work, then the answer.
const THOUGHT_KEY: &str = "{\"thought\": ";
const NEXT_ANSWER_KEY: &str = ", \"answer\": \"";

/// Why generation stopped, as the engine saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GenerationEnd {
    /// The model produced an end-of-turn token.
    EndOfTurn,
    /// The output-token limit was reached.
    TokenLimit,
}

#[derive(Debug, Default)]
struct CallProgress {
    started: bool,
    answer: bool,
    args_start: usize,
    args_emitted: usize,
    ended: bool,
}

/// Incremental parser of one response.
#[derive(Debug)]
pub struct OutputParser {
    mode: AnswerMode,
    structured: bool,
    id_prefix: String,
    buffer: String,
    text_emitted: usize,
    calls: Vec<CallProgress>,
    answered: bool,
}

impl OutputParser {
    /// `structured` is whether tool calls are possible (tools were offered, a grammar is active);
    /// call ids are `<id_prefix><index>`.
    pub fn new(mode: AnswerMode, structured: bool, id_prefix: impl Into<String>) -> Self {
        OutputParser {
            mode,
            structured,
            id_prefix: id_prefix.into(),
            buffer: String::new(),
            text_emitted: 0,
            calls: Vec::new(),
            answered: false,
        }
    }

    /// All output text received so far.
    pub fn text(&self) -> &str {
        &self.buffer
    }

    /// Adds a piece of output and returns the events it makes certain.
    pub fn push(&mut self, piece: &str) -> Vec<ModelEvent> {
        self.buffer.push_str(piece);
        let mut events = Vec::new();
        self.scan(&mut events);
        events
    }

    /// Ends the response: closes an unfinished call as incomplete and returns the final events,
    /// ending with `Stop`.
    pub fn finish(&mut self, end: GenerationEnd) -> Vec<ModelEvent> {
        let mut events = Vec::new();
        self.scan(&mut events);
        if self.is_calls() {
            for (index, call) in self.calls.iter_mut().enumerate() {
                if call.started && !call.ended && !call.answer {
                    call.ended = true;
                    let raw = self.buffer.get(call.args_start..).unwrap_or_default().to_string();
                    events.push(ModelEvent::ToolCallEnd { index, arguments: None, raw });
                }
            }
        } else if self.text_emitted < self.buffer.len() {
            events.push(ModelEvent::TextDelta { text: self.buffer[self.text_emitted..].to_string() });
            self.text_emitted = self.buffer.len();
        }
        let calls_done = self.calls.iter().any(|call| call.ended && !call.answer);
        let reason = match end {
            GenerationEnd::TokenLimit if !self.answered => StopReason::MaxTokens,
            _ if calls_done && !self.answered => StopReason::ToolUse,
            _ => StopReason::EndTurn,
        };
        events.push(ModelEvent::Stop { reason });
        events
    }

    fn is_calls(&self) -> bool {
        self.structured && (self.buffer.starts_with(OPEN) || OPEN.starts_with(self.buffer.as_str()))
    }

    fn scan(&mut self, events: &mut Vec<ModelEvent>) {
        if self.buffer.is_empty() {
            return;
        }
        if !self.is_calls() {
            if self.text_emitted < self.buffer.len() {
                events.push(ModelEvent::TextDelta { text: self.buffer[self.text_emitted..].to_string() });
                self.text_emitted = self.buffer.len();
            }
            return;
        }
        let mut pos = 0;
        let mut index = 0;
        while let Some(rest) = self.buffer.get(pos..) {
            if !rest.starts_with(OPEN) {
                return;
            }
            let json_start = pos + OPEN.len();
            if self.calls.len() <= index {
                self.calls.push(CallProgress::default());
            }
            match self.scan_call(index, json_start, events) {
                Some(json_end) => {
                    // `json_end` is the index of the newline that ends the JSON.
                    let after = json_end + 1 + CLOSE.len();
                    if self.buffer.len() < after {
                        return;
                    }
                    pos = after + 1; // the "\n" before the next call, if any
                    index += 1;
                    if self.buffer.len() < pos {
                        return;
                    }
                }
                None => return,
            }
        }
    }

    /// Emits what is certain about call `index` whose JSON starts at `start`; returns the index of
    /// the newline ending the JSON once it has arrived.
    fn scan_call(&mut self, index: usize, start: usize, events: &mut Vec<ModelEvent>) -> Option<usize> {
        let json = &self.buffer[start..];
        let newline = json.find('\n').map(|offset| start + offset);
        let name_start = NAME_KEY.len();
        if !json.starts_with(NAME_KEY) {
            return newline;
        }
        let (name, name_len) = json_string_at(&json[name_start..])?;
        let args_start = start + name_start + name_len + ARGS_KEY.len();
        if !self.buffer.get(start + name_start + name_len..)?.starts_with(ARGS_KEY) {
            return None;
        }
        let progress = &mut self.calls[index];
        if !progress.started {
            progress.started = true;
            progress.args_start = args_start;
            progress.answer = self.mode != AnswerMode::ToolRequired && name == FINAL_ANSWER_TOOL;
            if !progress.answer {
                events.push(ModelEvent::ToolCallStart {
                    index,
                    id: format!("{}{index}", self.id_prefix),
                    name,
                });
            }
        }
        let args_end = match newline {
            Some(end) => end.saturating_sub(1).max(args_start),
            None => floor_char_boundary(&self.buffer, self.buffer.len().saturating_sub(1)).max(args_start),
        };
        let args = &self.buffer[args_start..args_end];
        if progress.answer {
            let decoded = answer_body(args).map(decode_string_prefix).unwrap_or_default();
            if decoded.len() > progress.args_emitted {
                events.push(ModelEvent::TextDelta { text: decoded[progress.args_emitted..].to_string() });
                progress.args_emitted = decoded.len();
            }
            if newline.is_some() {
                progress.ended = true;
                self.answered = true;
            }
            return newline;
        }
        if args.len() > progress.args_emitted {
            events.push(ModelEvent::ToolCallDelta {
                index,
                arguments: args[progress.args_emitted..].to_string(),
            });
            progress.args_emitted = args.len();
        }
        if newline.is_some() && !progress.ended {
            progress.ended = true;
            let raw = args.to_string();
            let arguments =
                serde_json::from_str::<Value>(if raw.trim().is_empty() { "{}" } else { &raw }).ok();
            events.push(ModelEvent::ToolCallEnd { index, arguments, raw });
        }
        newline
    }
}

/// The body of the `answer` string (after its opening quote) in the arguments of an `answer` call
/// as far as they have arrived: `{"answer": "…` or, after the model's `thought` (not shown),
/// `{"thought": "…", "answer": "…`. `None` until the answer string has started.
fn answer_body(args: &str) -> Option<&str> {
    if let Some(rest) = args.strip_prefix(THOUGHT_KEY) {
        let (_, used) = json_string_at(rest)?;
        return rest[used..].strip_prefix(NEXT_ANSWER_KEY);
    }
    args.strip_prefix(ANSWER_KEY)
}

/// Parses the complete JSON string at the start of `text`: `(value, bytes consumed)`.
fn json_string_at(text: &str) -> Option<(String, usize)> {
    if !text.starts_with('"') {
        return None;
    }
    let mut escaped = false;
    for (offset, c) in text.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => {
                let literal = &text[..=offset];
                return serde_json::from_str::<String>(literal).ok().map(|value| (value, offset + 1));
            }
            _ => {}
        }
    }
    None
}

/// Decodes the body of a JSON string (after the opening quote) as far as it is complete: stops
/// at the closing quote or before an unfinished escape.
fn decode_string_prefix(body: &str) -> String {
    let mut out = String::new();
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => break,
            '\\' => {
                let Some(kind) = chars.next() else { break };
                match kind {
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    'r' => out.push('\r'),
                    'b' => out.push('\u{8}'),
                    'f' => out.push('\u{c}'),
                    'u' => {
                        let hex: String = chars.by_ref().take(4).collect();
                        if hex.len() < 4 {
                            break;
                        }
                        match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                            Some(decoded) => out.push(decoded),
                            None => out.push('\u{fffd}'),
                        }
                    }
                    other => out.push(other),
                }
            }
            c => out.push(c),
        }
    }
    out
}

fn floor_char_boundary(text: &str, mut index: usize) -> usize {
    while index > 0 && !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
