//! Scripted mode: the script format and its lowering to [`Reply`]s.
//!
//! Each model request consumes the next [`ScriptTurn`]; the server encodes it in the protocol of the request.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::reply::{
    Answer, Delivery, ErrorReply, Reply, ReplyCall, ReplyThinking, Stop, StreamError, Usage, split_even,
};
use crate::{MockError, read_text};

/// A script: the turns served in order, one per model request.
///
/// ```json
/// {"context_window": 32000, "check_pairing": true,
///  "model_turns": {"sub-model": [{"text": "report", "first_byte_delay_ms": 500}]},
///  "side_replies": [{"when_last_user_contains": "Summarize the conversation", "text": "## Summary …"}],
///  "turns": [
///   {"error": {"status": 429, "headers": {"retry-after": "2"}, "message": "slow down"}},
///   {"thinking": {"text": "…", "signature": "sig"}, "text": "Hello", "text_chunks": 2,
///    "tool_calls": [{"id": "call_1", "name": "read_file", "arguments": {"path": "a.txt"}, "chunks": 3}],
///    "stop": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 5},
///    "first_byte_delay_ms": 0, "chunk_delay_ms": 0, "drop_after_events": 3},
///   {"text": "Let me look", "drop_after_content": true,
///    "tool_calls": [{"id": "toolu_1", "name": "read_file", "raw_arguments": "{\"path\":\"a.", "complete": false}]},
///   {"tool_calls": [{"id": "function-call-1", "name": "read_file", "arguments": {"path": "a.txt"}}],
///    "omit_call_index": true}
/// ],
///  "reject_images": {"status": 400, "message": "Could not process image"}}
/// ```
#[derive(Serialize, Deserialize, Clone, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// The turns, in order.
    pub turns: Vec<ScriptTurn>,
    /// Turns for the requests whose `model` is the key, served in order from their own list
    /// instead of `turns`: an agent on another model (a sub-agent running beside its parent) gets
    /// its answers whatever order the requests arrive in. A request past its list's end is answered
    /// as past the end of `turns` is.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub model_turns: BTreeMap<String, Vec<ScriptTurn>>,
    /// Answer every request that carries an image (Anthropic `image`, Chat `image_url`, Responses
    /// `input_image` content) with this error instead of the next turn; such a request consumes no
    /// turn. Models a provider that cannot process an image in the conversation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reject_images: Option<ScriptError>,
    /// Play a model with this context window, in tokens (`ceil(compact JSON body bytes / 4)`): a
    /// request whose input plus requested output exceeds it gets the provider's real HTTP 400
    /// context-length error and consumes no turn; every answer reports the counted input tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    /// Reject, as the provider does (HTTP 400 in its words), a request whose tool calls and tool
    /// results do not pair; it consumes no turn.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub check_pairing: bool,
    /// Report this input token count in every answer, whatever the request held: a server that
    /// under-reports usage (the window check, with `context_window`, still counts the real size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report_input_tokens: Option<u64>,
    /// Answers to side requests (e.g. a summary request), matched on the last user-side message;
    /// they consume no turn.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub side_replies: Vec<SideReply>,
}

/// A reply to requests whose last user-side message contains a string.
#[derive(Serialize, Deserialize, Clone, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct SideReply {
    /// The string to look for in the last user-side message's text.
    pub when_last_user_contains: String,
    /// Further strings the same message must contain (all of them), to tell requests with one
    /// marker apart: `["stage 2", "rm -rf"]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub and_contains: Vec<String>,
    /// The assistant text of the reply.
    pub text: String,
}

/// One scripted response: either an HTTP error (`error`) or a model answer (the other fields).
#[derive(Serialize, Deserialize, Clone, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct ScriptTurn {
    /// Answer with an HTTP error instead of a model response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ScriptError>,
    /// Thinking block (Anthropic), `reasoning_content` (Chat), reasoning item with summary (Responses).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<ScriptThinking>,
    /// Assistant text; `None` or `""` = no text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Split the text into this many deltas (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_chunks: Option<usize>,
    /// Tool calls, in order (sent as parallel calls of one assistant message).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ScriptToolCall>,
    /// `end_turn`, `tool_use` or `max_tokens`; default `tool_use` when there are calls, else `end_turn`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<String>,
    /// Reported usage; missing numbers are 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<ScriptUsage>,
    /// Model name in the response (default: the request's `model`, else `mock-model`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Delay before the response starts (headers included), in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_byte_delay_ms: Option<u64>,
    /// Delay before each SSE event after the first, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk_delay_ms: Option<u64>,
    /// Abort the connection after this many SSE events (no terminating chunk); a number at or past the
    /// event count sends every event and still aborts instead of ending the body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop_after_events: Option<usize>,
    /// An error event after the content: Anthropic `event: error`, Chat a `{"error":…}` chunk,
    /// Responses `error` + `response.failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_error: Option<ScriptStreamError>,
    /// Break the connection right after the content, in any protocol: no stop event for a cut-off
    /// call, no finish chunk, `message_delta` or `response.completed`. With a call that has
    /// `raw_arguments` cut mid-JSON and `complete: false`, the stream drops inside that call.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub drop_after_content: bool,
    /// Send the tool calls without their index, as some OpenAI-compatible servers do: Chat sends
    /// each call whole (id, name, all arguments) in one `tool_calls` delta without `index`;
    /// Responses events carry no `output_index`. Anthropic streams are unchanged.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub omit_call_index: bool,
}

/// An HTTP error turn.
#[derive(Serialize, Deserialize, Clone, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct ScriptError {
    /// HTTP status, e.g. 429.
    pub status: u16,
    /// Extra response headers (e.g. `retry-after`).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Body to send instead of the provider's error shape: a JSON value is sent as JSON, a string verbatim
    /// (e.g. an HTML page from a proxy; content-type `text/html` unless `headers` sets one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<serde_json::Value>,
    /// Message in the provider error shape (default: a description of the status).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Error type in the provider error shape (default: the provider's usual type for the status,
    /// e.g. Anthropic `rate_limit_error` for 429).
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Delay before the response, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_byte_delay_ms: Option<u64>,
}

/// Thinking content of a turn.
#[derive(Serialize, Deserialize, Clone, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct ScriptThinking {
    /// Thinking text.
    pub text: String,
    /// Signature (Anthropic `signature_delta`; Responses `encrypted_content`).
    #[serde(default)]
    pub signature: String,
    /// Split the text into this many deltas (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunks: Option<usize>,
}

/// A tool call of a turn.
#[derive(Serialize, Deserialize, Clone, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct ScriptToolCall {
    /// Call id.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments, serialised compactly (ignored when `raw_arguments` is set).
    #[serde(default)]
    pub arguments: serde_json::Value,
    /// Split the argument text into this many deltas (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunks: Option<usize>,
    /// Send this argument text verbatim (e.g. truncated JSON).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_arguments: Option<String>,
    /// `false` = cut off: no `content_block_stop` / `function_call_arguments.done` / `output_item.done`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub complete: Option<bool>,
}

/// Usage numbers (Anthropic naming); Chat and Responses report them as given (`prompt_tokens` =
/// `input_tokens`, `cached_tokens` = `cache_read_input_tokens`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct ScriptUsage {
    /// Input tokens.
    #[serde(default)]
    pub input_tokens: u64,
    /// Output tokens.
    #[serde(default)]
    pub output_tokens: u64,
    /// Cache read tokens.
    #[serde(default)]
    pub cache_read_input_tokens: u64,
    /// Cache creation tokens.
    #[serde(default)]
    pub cache_creation_input_tokens: u64,
}

/// An in-stream error event.
#[derive(Serialize, Deserialize, Clone, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct ScriptStreamError {
    /// Error type, e.g. `overloaded_error`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Message.
    pub message: String,
}

impl Script {
    /// Parses a script from JSON text and checks it.
    ///
    /// # Errors
    /// [`MockError::Json`] for bad JSON or unknown fields, [`MockError::Invalid`] for a turn that is both an
    /// error and an answer, an unknown `stop`, or an error status outside 100..=599.
    pub fn from_json(text: &str) -> Result<Script, MockError> {
        let script: Script = serde_json::from_str(text).map_err(|source| MockError::Json {
            what: "script",
            path: None,
            source,
        })?;
        script.validate()?;
        Ok(script)
    }

    /// Reads and parses a script file.
    ///
    /// # Errors
    /// [`MockError::Io`] if the file cannot be read, else as [`Script::from_json`] (with the path).
    pub fn load(path: &Path) -> Result<Script, MockError> {
        let text = read_text(path)?;
        Script::from_json(&text).map_err(|e| match e {
            MockError::Json { what, source, .. } => {
                MockError::Json { what, path: Some(path.to_path_buf()), source }
            }
            other => other,
        })
    }

    fn validate(&self) -> Result<(), MockError> {
        let lists = std::iter::once(("turns".to_string(), &self.turns))
            .chain(self.model_turns.iter().map(|(model, turns)| (format!("model_turns.{model}"), turns)));
        for (list, turns) in lists {
            for (i, t) in turns.iter().enumerate() {
                validate_turn(t).map_err(|detail| MockError::Invalid {
                    what: "script",
                    detail: format!("{list}[{i}]: {detail}"),
                })?;
            }
        }
        Ok(())
    }
}

fn validate_turn(t: &ScriptTurn) -> Result<(), String> {
    if let Some(e) = &t.error {
        if t.text.is_some() || t.thinking.is_some() || !t.tool_calls.is_empty() {
            return Err("a turn is either an error or an answer, not both".into());
        }
        if !(100..=599).contains(&e.status) {
            return Err(format!("error status {} is not an HTTP status", e.status));
        }
    }
    if let Some(stop) = &t.stop {
        parse_stop(stop)
            .ok_or_else(|| format!("stop `{stop}` is not one of end_turn, tool_use, max_tokens"))?;
    }
    Ok(())
}

fn parse_stop(s: &str) -> Option<Stop> {
    match s {
        "end_turn" => Some(Stop::EndTurn),
        "tool_use" => Some(Stop::ToolUse),
        "max_tokens" => Some(Stop::MaxTokens),
        _ => None,
    }
}

impl ScriptError {
    /// The error reply this describes.
    pub(crate) fn lower(&self) -> ErrorReply {
        ErrorReply {
            status: self.status,
            kind: self.kind.clone(),
            message: self.message.clone().unwrap_or_else(|| default_message(self.status)),
            headers: self.headers.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            body: self.body.clone(),
            first_byte_delay_ms: self.first_byte_delay_ms.unwrap_or(0),
        }
    }
}

/// Whether a request body carries image content in any protocol: an object whose `type` is
/// `image` (Anthropic), `image_url` (Chat) or `input_image` (Responses), at any depth.
pub(crate) fn carries_image(body: &serde_json::Value) -> bool {
    match body {
        serde_json::Value::Object(map) => {
            matches!(
                map.get("type").and_then(serde_json::Value::as_str),
                Some("image" | "image_url" | "input_image")
            ) || map.values().any(carries_image)
        }
        serde_json::Value::Array(items) => items.iter().any(carries_image),
        _ => false,
    }
}

impl ScriptTurn {
    /// Lowers the turn; `model` is the request's model name, if any.
    pub(crate) fn lower(&self, model: Option<&str>) -> Answer {
        if let Some(e) = &self.error {
            return Answer::Error(e.lower());
        }
        let calls: Vec<ReplyCall> = self
            .tool_calls
            .iter()
            .map(|c| {
                let text = c.raw_arguments.clone().unwrap_or_else(|| {
                    if c.arguments.is_null() { "{}".to_string() } else { c.arguments.to_string() }
                });
                ReplyCall {
                    id: c.id.clone(),
                    name: c.name.clone(),
                    pieces: split_even(&text, c.chunks.unwrap_or(1)),
                    complete: c.complete.unwrap_or(true),
                }
            })
            .collect();
        let stop = self.stop.as_deref().and_then(parse_stop).unwrap_or(if calls.is_empty() {
            Stop::EndTurn
        } else {
            Stop::ToolUse
        });
        let text = match self.text.as_deref() {
            None | Some("") => Vec::new(),
            Some(t) => split_even(t, self.text_chunks.unwrap_or(1)),
        };
        let u = self.usage.unwrap_or_default();
        let reply = Reply {
            thinking: self.thinking.as_ref().map(|t| ReplyThinking {
                text: split_even(&t.text, t.chunks.unwrap_or(1)),
                signature: t.signature.clone(),
            }),
            text,
            calls,
            stop,
            usage: Usage {
                input_tokens: u.input_tokens,
                output_tokens: u.output_tokens,
                cache_read_input_tokens: u.cache_read_input_tokens,
                cache_creation_input_tokens: u.cache_creation_input_tokens,
            },
            model: self
                .model
                .clone()
                .or_else(|| model.map(str::to_string))
                .unwrap_or_else(|| "mock-model".to_string()),
            stream_error: self
                .stream_error
                .as_ref()
                .map(|e| StreamError { kind: e.kind.clone(), message: e.message.clone() }),
            drop_after_content: self.drop_after_content,
            omit_call_index: self.omit_call_index,
        };
        // Past the last event: every event is sent, then the connection breaks.
        let drop_after_events =
            if self.drop_after_content { Some(usize::MAX) } else { self.drop_after_events };
        let delivery = Delivery {
            first_byte_delay_ms: self.first_byte_delay_ms.unwrap_or(0),
            chunk_delay_ms: self.chunk_delay_ms.unwrap_or(0),
            drop_after_events,
        };
        Answer::Reply(reply, delivery)
    }
}

fn default_message(status: u16) -> String {
    match status {
        400 => "invalid request".into(),
        401 => "invalid x-api-key".into(),
        403 => "permission denied".into(),
        404 => "not found".into(),
        408 => "request timed out".into(),
        413 => "request too large".into(),
        429 => "rate limited".into(),
        500 => "internal server error".into(),
        502 => "bad gateway".into(),
        503 => "service unavailable".into(),
        504 => "gateway timeout".into(),
        529 => "Overloaded".into(),
        s => format!("HTTP {s}"),
    }
}
