//! Anthropic prompt-cache breakpoints (`cache_control: {"type": "ephemeral"}`), placed on the
//! encoded request body — a copy — so the ledger never carries them.
//!
//! At most four breakpoints (the API's limit), in this order of priority: the last system block
//! marked `cache_breakpoint` (the static core), the last tool definition, and the rolling tail —
//! the last block of the last message and the last block of the user message before it — so each
//! turn reads the previous turn's cache entry and writes a new one. Thinking blocks and empty text
//! cannot carry `cache_control`; the nearest earlier block of the same message is used instead.

use lathe_protocol::ModelRequest;
use serde_json::{Value, json};

/// The API's limit on `cache_control` blocks per request.
pub const MAX_BREAKPOINTS: usize = 4;

/// Adds breakpoints to an encoded Messages body.
pub fn place_breakpoints(body: &mut Value, request: &ModelRequest) {
    let mut budget = MAX_BREAKPOINTS;
    let marker = json!({"type": "ephemeral"});
    if let Some(position) = request.system.iter().rposition(|block| block.cache_breakpoint)
        && let Some(block) = body.get_mut("system").and_then(|system| system.get_mut(position))
    {
        block["cache_control"] = marker.clone();
        budget -= 1;
    }
    if let Some(last_tool) =
        body.get_mut("tools").and_then(Value::as_array_mut).and_then(|tools| tools.last_mut())
    {
        last_tool["cache_control"] = marker.clone();
        budget -= 1;
    }
    let Some(messages) = body.get_mut("messages").and_then(Value::as_array_mut) else { return };
    let mut targets = Vec::new();
    if let Some(last) = messages.len().checked_sub(1) {
        targets.push(last);
        if let Some(previous_user) = messages[..last]
            .iter()
            .rposition(|message| message.get("role").and_then(Value::as_str) == Some("user"))
        {
            targets.push(previous_user);
        }
    }
    for index in targets.into_iter().take(budget) {
        let Some(blocks) = messages[index].get_mut("content").and_then(Value::as_array_mut) else { continue };
        if let Some(block) = blocks.iter_mut().rev().find(|block| cacheable(block)) {
            block["cache_control"] = marker.clone();
        }
    }
}

/// Whether a content block may carry `cache_control`.
fn cacheable(block: &Value) -> bool {
    match block.get("type").and_then(Value::as_str) {
        Some("thinking" | "redacted_thinking") => false,
        Some("text") => block.get("text").and_then(Value::as_str).is_some_and(|text| !text.is_empty()),
        _ => true,
    }
}

/// Counts `cache_control` markers anywhere in an encoded body.
pub fn count_breakpoints(body: &Value) -> usize {
    match body {
        Value::Object(map) => {
            usize::from(map.contains_key("cache_control"))
                + map.values().map(count_breakpoints).sum::<usize>()
        }
        Value::Array(items) => items.iter().map(count_breakpoints).sum(),
        _ => 0,
    }
}
