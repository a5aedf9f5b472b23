//! Encodes a [`ModelRequest`] as an OpenAI Responses request body.
//!
//! The full `input` is sent every time with `store: false` (no `previous_response_id`: nothing
//! lives server-side, so a ledger can move between providers). The system blocks become
//! `instructions`. Ledger → input items: a user message becomes a `message` with `input_text` /
//! `input_image` parts; an assistant message becomes, in order, `reasoning` items for its
//! Responses-format thinking (summary text plus `encrypted_content`, which is why
//! `include: ["reasoning.encrypted_content"]` is requested), assistant `message` items with
//! `output_text`, and `function_call` items; a tool result becomes a `function_call_output` with its
//! text, and images from a run of results follow in one user message; a compaction becomes a user
//! message with the summary; meta items are skipped. A response format (structured output)
//! becomes `text.format` with a strict `json_schema`.

use lathe_protocol::{Content, LedgerItem, ModelRequest, ThinkingFormat};
use serde_json::{Map, Value, json};

use crate::catalog;
use crate::openai_chat::request::{data_url, image_label, is_openai_reasoning_model, reasoning_effort};

/// The request body for `POST {base}/responses`. `model` replaces an empty `request.model`.
pub fn encode(request: &ModelRequest, model: &str) -> Value {
    let model = if request.model.is_empty() { model } else { request.model.as_str() };
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    if !request.system.is_empty() {
        let text: Vec<&str> = request.system.iter().map(|block| block.text.as_str()).collect();
        body.insert("instructions".into(), json!(text.join("\n\n")));
    }
    body.insert("input".into(), Value::Array(input(&request.messages)));
    body.insert("stream".into(), json!(true));
    body.insert("store".into(), json!(false));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({"type": "function", "name": tool.name, "description": tool.description,
                       "parameters": tool.input_schema, "strict": false})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    body.insert("max_output_tokens".into(), json!(request.max_output_tokens));
    if let Some(format) = &request.response_format {
        body.insert(
            "text".into(),
            json!({"format": {"type": "json_schema", "name": format.name, "schema": format.schema, "strict": true}}),
        );
    }
    let reasoning_model = catalog::lookup(model).supports_thinking;
    if let Some(thinking) = request.thinking {
        body.insert(
            "reasoning".into(),
            json!({"effort": reasoning_effort(thinking.budget_tokens), "summary": "auto"}),
        );
    }
    if request.thinking.is_some() || reasoning_model {
        body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    }
    // OpenAI reasoning models reject sampling parameters.
    if !is_openai_reasoning_model(model) {
        if let Some(temperature) = request.temperature {
            body.insert("temperature".into(), json!(temperature));
        }
        if let Some(top_p) = request.top_p {
            body.insert("top_p".into(), json!(top_p));
        }
    }
    Value::Object(body)
}

fn user_item(parts: Vec<Value>) -> Value {
    json!({"type": "message", "role": "user", "content": parts})
}

fn input(items: &[LedgerItem]) -> Vec<Value> {
    let mut out = Vec::new();
    let mut pending_images: Vec<Value> = Vec::new();
    for item in items {
        if !matches!(item, LedgerItem::ToolResult(_)) && !pending_images.is_empty() {
            out.push(user_item(std::mem::take(&mut pending_images)));
        }
        match item {
            LedgerItem::User(message) => {
                let parts: Vec<Value> = message
                    .content
                    .iter()
                    .filter_map(|content| match content {
                        Content::Text { text } => Some(json!({"type": "input_text", "text": text})),
                        Content::Image { media_type, data } => {
                            Some(json!({"type": "input_image", "image_url": data_url(media_type, data)}))
                        }
                        Content::Thinking(_) | Content::ToolCall(_) => None,
                    })
                    .collect();
                if !parts.is_empty() {
                    out.push(user_item(parts));
                }
            }
            LedgerItem::Assistant(message) => {
                for content in &message.content {
                    match content {
                        Content::Thinking(thinking) if thinking.format == ThinkingFormat::OpenAiResponses => {
                            let summary: Vec<Value> = if thinking.text.is_empty() {
                                Vec::new()
                            } else {
                                vec![json!({"type": "summary_text", "text": thinking.text})]
                            };
                            let mut reasoning = Map::new();
                            reasoning.insert("type".into(), json!("reasoning"));
                            reasoning.insert("summary".into(), Value::Array(summary));
                            if let Some(encrypted) = &thinking.signature {
                                reasoning.insert("encrypted_content".into(), json!(encrypted));
                            }
                            out.push(Value::Object(reasoning));
                        }
                        Content::Thinking(_) | Content::Image { .. } => {}
                        Content::Text { text } if text.is_empty() => {}
                        Content::Text { text } => out.push(json!({
                            "type": "message", "role": "assistant",
                            "content": [{"type": "output_text", "text": text, "annotations": []}]
                        })),
                        Content::ToolCall(call) => {
                            let arguments = if call.arguments.is_object() {
                                call.arguments.to_string()
                            } else {
                                "{}".into()
                            };
                            out.push(json!({"type": "function_call", "call_id": call.id, "name": call.name,
                                            "arguments": arguments}));
                        }
                    }
                }
            }
            LedgerItem::ToolResult(result) => {
                out.push(json!({"type": "function_call_output", "call_id": result.call_id,
                                "output": result.text_content()}));
                for content in &result.content {
                    if let Content::Image { media_type, data } = content {
                        pending_images
                            .push(json!({"type": "input_text", "text": image_label(&result.call_id)}));
                        pending_images
                            .push(json!({"type": "input_image", "image_url": data_url(media_type, data)}));
                    }
                }
            }
            LedgerItem::Compaction(compaction) => {
                out.push(user_item(vec![json!({"type": "input_text", "text": compaction.summary})]));
            }
            LedgerItem::Meta(_) => {}
        }
    }
    if !pending_images.is_empty() {
        out.push(user_item(pending_images));
    }
    out
}
