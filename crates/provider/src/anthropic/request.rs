//! Encodes a [`ModelRequest`] as an Anthropic Messages request body.
//!
//! Ledger → messages: a user message becomes `text` / `image` blocks; an assistant message becomes
//! its Anthropic thinking (`thinking` with `signature`, `redacted_thinking` with `data`, echoed
//! unchanged; reasoning from other protocols is dropped), `text` and `tool_use` blocks; each tool
//! result becomes a `tool_result` block (with `is_error`, and images inside it); a compaction
//! becomes a user text message carrying the summary; meta items are skipped. Consecutive user-side
//! items are merged into one user message (so parallel results share one message, results first).
//! Cache breakpoints are added afterwards by [`super::cache`]. The Messages API has no structured
//! output: a request's response format is left to its prompt (not sent).

use lathe_protocol::{Content, LedgerItem, ModelRequest, ThinkingFormat};
use serde_json::{Map, Value, json};

use super::cache::place_breakpoints;

/// The request body for `POST {base}/v1/messages`. `model` replaces an empty `request.model`.
pub fn encode(request: &ModelRequest, model: &str) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(if request.model.is_empty() { model } else { &request.model }));
    let messages = messages(&request.messages);
    // The API's minimum budget is 1024 tokens. With thinking on, an assistant turn that is still in
    // a tool loop must start with its thinking block; a turn produced by another protocol has none
    // (its reasoning was dropped), so thinking is left off for such a request rather than rejected.
    let thinking_budget = request
        .thinking
        .map(|thinking| thinking.budget_tokens.max(MIN_THINKING_BUDGET))
        .filter(|_| !open_tool_turn_without_thinking(&messages));
    // Anthropic requires max_tokens > budget_tokens; keep the requested output room on top of it.
    let max_tokens = match thinking_budget {
        Some(budget) if request.max_output_tokens <= budget => {
            budget.saturating_add(request.max_output_tokens.max(1024))
        }
        _ => request.max_output_tokens,
    };
    body.insert("max_tokens".into(), json!(max_tokens));
    body.insert("stream".into(), json!(true));
    if !request.system.is_empty() {
        let blocks: Vec<Value> =
            request.system.iter().map(|block| json!({"type": "text", "text": block.text})).collect();
        body.insert("system".into(), Value::Array(blocks));
    }
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| json!({"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}))
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    match thinking_budget {
        Some(budget) => {
            // Temperature and top_p must be left at their defaults with extended thinking.
            body.insert("thinking".into(), json!({"type": "enabled", "budget_tokens": budget}));
        }
        None => {
            if let Some(temperature) = request.temperature {
                body.insert("temperature".into(), json!(temperature));
            }
            if let Some(top_p) = request.top_p {
                body.insert("top_p".into(), json!(top_p));
            }
        }
    }
    let mut body = Value::Object(body);
    if request.prompt_caching {
        place_breakpoints(&mut body, request);
    }
    body
}

/// Anthropic's smallest accepted `thinking.budget_tokens`.
const MIN_THINKING_BUDGET: u32 = 1_024;

/// Whether the last assistant message calls tools without starting with a thinking block (the
/// API rejects such a turn when thinking is enabled).
fn open_tool_turn_without_thinking(messages: &[Value]) -> bool {
    let Some(last) = messages.iter().rev().find(|message| message["role"] == "assistant") else {
        return false;
    };
    let blocks = last["content"].as_array().map(Vec::as_slice).unwrap_or_default();
    let calls_tools = blocks.iter().any(|block| block["type"] == "tool_use");
    let starts_with_thinking = blocks
        .first()
        .is_some_and(|block| block["type"] == "thinking" || block["type"] == "redacted_thinking");
    calls_tools && !starts_with_thinking
}

/// Ledger items → `messages`, merging consecutive same-role messages.
fn messages(items: &[LedgerItem]) -> Vec<Value> {
    let mut out: Vec<(&'static str, Vec<Value>)> = Vec::new();
    let mut push = |role: &'static str, blocks: Vec<Value>| {
        if blocks.is_empty() {
            return;
        }
        match out.last_mut() {
            Some((last_role, last_blocks)) if *last_role == role => last_blocks.extend(blocks),
            _ => out.push((role, blocks)),
        }
    };
    for item in items {
        match item {
            LedgerItem::User(message) => {
                push("user", message.content.iter().filter_map(user_block).collect())
            }
            LedgerItem::Assistant(message) => {
                push("assistant", message.content.iter().filter_map(assistant_block).collect())
            }
            LedgerItem::ToolResult(result) => {
                let content: Vec<Value> = result.content.iter().filter_map(user_block).collect();
                let mut block =
                    json!({"type": "tool_result", "tool_use_id": result.call_id, "content": content});
                if result.is_error {
                    block["is_error"] = json!(true);
                }
                push("user", vec![block]);
            }
            LedgerItem::Compaction(compaction) => push("user", vec![text_block(&compaction.summary)]),
            LedgerItem::Meta(_) => {}
        }
    }
    out.into_iter().map(|(role, content)| json!({"role": role, "content": content})).collect()
}

fn text_block(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

/// A user-side content block; empty text is dropped (the API rejects empty text blocks).
fn user_block(content: &Content) -> Option<Value> {
    match content {
        Content::Text { text } if text.is_empty() => None,
        Content::Text { text } => Some(text_block(text)),
        Content::Image { media_type, data } => Some(
            json!({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}),
        ),
        Content::Thinking(_) | Content::ToolCall(_) => None,
    }
}

/// An assistant content block; foreign-format reasoning and empty text are dropped.
fn assistant_block(content: &Content) -> Option<Value> {
    match content {
        Content::Text { text } if text.is_empty() => None,
        Content::Text { text } => Some(text_block(text)),
        Content::Thinking(thinking) if thinking.format == ThinkingFormat::Anthropic => {
            match (&thinking.redacted, &thinking.signature) {
                (Some(data), _) => Some(json!({"type": "redacted_thinking", "data": data})),
                (None, Some(signature)) if !signature.is_empty() => Some(json!({
                    "type": "thinking",
                    "thinking": thinking.text,
                    "signature": signature,
                })),
                // Without its signature the API rejects the block; the reasoning is dropped.
                (None, _) => None,
            }
        }
        Content::Thinking(_) => None,
        Content::ToolCall(call) => {
            let input = if call.arguments.is_object() { call.arguments.clone() } else { json!({}) };
            Some(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}))
        }
        // Anthropic accepts no images from the assistant; the ledger never records one there.
        Content::Image { .. } => None,
    }
}
