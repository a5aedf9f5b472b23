//! Encodes a [`ModelRequest`] as a Chat Completions request body.
//!
//! Ledger → `messages`: the system blocks become one `system` message; a user message becomes a
//! string (text only) or content parts (`text`, `image_url` data URLs); an assistant message
//! becomes `content` plus `tool_calls` (arguments as JSON text), and — on tool-call turns only —
//! the `reasoning_content` of its Chat-format thinking (DeepSeek requires it back while a tool loop
//! runs; other formats are dropped); each tool result becomes one `role: tool` message with its
//! text (Chat has no error flag; the text says what failed), and images from a run of results
//! follow in one user message after the last of them (tool messages must directly follow the call);
//! a compaction becomes a user message with the summary; meta items are skipped. A response
//! format (structured output) becomes `response_format` with a strict `json_schema`.

use lathe_protocol::{Content, LedgerItem, ModelRequest, ThinkingFormat};
use serde_json::{Map, Value, json};

/// The request body for `POST {base}/chat/completions`. `model` replaces an empty `request.model`.
pub fn encode(request: &ModelRequest, model: &str) -> Value {
    let model = if request.model.is_empty() { model } else { request.model.as_str() };
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    let mut messages = Vec::new();
    if !request.system.is_empty() {
        let text: Vec<&str> = request.system.iter().map(|block| block.text.as_str()).collect();
        messages.push(json!({"role": "system", "content": text.join("\n\n")}));
    }
    encode_messages(&request.messages, &mut messages);
    body.insert("messages".into(), Value::Array(messages));
    body.insert("stream".into(), json!(true));
    body.insert("stream_options".into(), json!({"include_usage": true}));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({"type": "function", "function": {
                    "name": tool.name, "description": tool.description, "parameters": tool.input_schema}})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    // OpenAI reasoning models reject `max_tokens` and sampling parameters; compatible servers only
    // know `max_tokens`.
    if let Some(format) = &request.response_format {
        body.insert(
            "response_format".into(),
            json!({"type": "json_schema", "json_schema": {"name": format.name, "schema": format.schema, "strict": true}}),
        );
    }
    let reasoning_model = is_openai_reasoning_model(model);
    let limit_key = if reasoning_model { "max_completion_tokens" } else { "max_tokens" };
    body.insert(limit_key.into(), json!(request.max_output_tokens));
    if let Some(thinking) = request.thinking {
        body.insert("reasoning_effort".into(), json!(reasoning_effort(thinking.budget_tokens)));
    }
    if !reasoning_model {
        if let Some(temperature) = request.temperature {
            body.insert("temperature".into(), json!(temperature));
        }
        if let Some(top_p) = request.top_p {
            body.insert("top_p".into(), json!(top_p));
        }
    }
    Value::Object(body)
}

/// OpenAI's reasoning models (o-series, gpt-5): they take `max_completion_tokens` and reject
/// `temperature` / `top_p`.
pub(crate) fn is_openai_reasoning_model(model: &str) -> bool {
    let model = model.rsplit('/').next().unwrap_or(model);
    ["o1", "o3", "o4", "gpt-5"].iter().any(|prefix| model.starts_with(prefix))
}

/// Thinking budget → OpenAI reasoning effort (see [`lathe_protocol::ThinkingConfig`]).
pub(crate) fn reasoning_effort(budget_tokens: u32) -> &'static str {
    match budget_tokens {
        0..4_096 => "low",
        4_096..16_384 => "medium",
        _ => "high",
    }
}

/// The text placed before an image that a tool result returned (Chat and Responses cannot carry
/// images inside tool output, so they follow in a user message).
pub(crate) fn image_label(call_id: &str) -> String {
    format!("Image returned by tool call {call_id}:")
}

/// A data URL for an image.
pub(crate) fn data_url(media_type: &str, data: &str) -> String {
    format!("data:{media_type};base64,{data}")
}

fn encode_messages(items: &[LedgerItem], out: &mut Vec<Value>) {
    let mut pending_images: Vec<Value> = Vec::new();
    for item in items {
        if !matches!(item, LedgerItem::ToolResult(_)) && !pending_images.is_empty() {
            out.push(json!({"role": "user", "content": std::mem::take(&mut pending_images)}));
        }
        match item {
            LedgerItem::User(message) => out.push(user_message(&message.content)),
            LedgerItem::Assistant(message) => {
                let text: String = message.text();
                let calls: Vec<Value> = message
                    .tool_calls()
                    .map(|call| {
                        let arguments =
                            if call.arguments.is_object() { call.arguments.to_string() } else { "{}".into() };
                        json!({"id": call.id, "type": "function",
                               "function": {"name": call.name, "arguments": arguments}})
                    })
                    .collect();
                let mut encoded = Map::new();
                encoded.insert("role".into(), json!("assistant"));
                encoded.insert(
                    "content".into(),
                    if text.is_empty() && !calls.is_empty() { Value::Null } else { json!(text) },
                );
                if !calls.is_empty() {
                    let reasoning: String = message
                        .content
                        .iter()
                        .filter_map(|content| match content {
                            Content::Thinking(thinking) if thinking.format == ThinkingFormat::OpenAiChat => {
                                Some(thinking.text.as_str())
                            }
                            Content::Thinking(_)
                            | Content::Text { .. }
                            | Content::Image { .. }
                            | Content::ToolCall(_) => None,
                        })
                        .collect();
                    if !reasoning.is_empty() {
                        encoded.insert("reasoning_content".into(), json!(reasoning));
                    }
                    encoded.insert("tool_calls".into(), Value::Array(calls));
                }
                out.push(Value::Object(encoded));
            }
            LedgerItem::ToolResult(result) => {
                out.push(
                    json!({"role": "tool", "tool_call_id": result.call_id, "content": result.text_content()}),
                );
                for content in &result.content {
                    if let Content::Image { media_type, data } = content {
                        pending_images.push(json!({"type": "text", "text": image_label(&result.call_id)}));
                        pending_images.push(
                            json!({"type": "image_url", "image_url": {"url": data_url(media_type, data)}}),
                        );
                    }
                }
            }
            LedgerItem::Compaction(compaction) => {
                out.push(json!({"role": "user", "content": compaction.summary}))
            }
            LedgerItem::Meta(_) => {}
        }
    }
    if !pending_images.is_empty() {
        out.push(json!({"role": "user", "content": pending_images}));
    }
}

/// A user message: a plain string when it is only text, content parts otherwise.
fn user_message(content: &[Content]) -> Value {
    let only_text = content.iter().all(|part| matches!(part, Content::Text { .. }));
    if only_text {
        let text: Vec<&str> = content
            .iter()
            .filter_map(|part| match part {
                Content::Text { text } => Some(text.as_str()),
                Content::Image { .. } | Content::Thinking(_) | Content::ToolCall(_) => None,
            })
            .collect();
        return json!({"role": "user", "content": text.join("\n\n")});
    }
    let parts: Vec<Value> = content
        .iter()
        .filter_map(|part| match part {
            Content::Text { text } => Some(json!({"type": "text", "text": text})),
            Content::Image { media_type, data } => {
                Some(json!({"type": "image_url", "image_url": {"url": data_url(media_type, data)}}))
            }
            Content::Thinking(_) | Content::ToolCall(_) => None,
        })
        .collect();
    json!({"role": "user", "content": parts})
}
