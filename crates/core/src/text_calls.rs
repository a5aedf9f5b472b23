//! Tool calls a model wrote as text (a documented fallback for local OpenAI-compatible servers).
//!
//! Some servers hand a model's tool call back as plain assistant text instead of a structured call
//! — Ollama with qwen2.5-coder answers `{"name": "write_file", "arguments": {...}}`, Hermes-style
//! templates `<tool_call>{...}</tool_call>` — and end the response with `stop`. Taken as text, such
//! an answer would end the run as a success although nothing was done. [`promote`] turns it into
//! real calls when the *whole* answer is calls (whitespace, a code fence and `<tool_call>` tags
//! aside) and every call names a tool on offer; the loop then runs them like any other call and
//! tells the user. Anything else — prose around the JSON, an unknown tool name, arguments that are
//! not an object — stays text.
//!
//! Accepted shapes per call: `{"name", "arguments"}`, `{"name", "parameters"}`, and
//! `{"type": "function", "function": {"name", "arguments"}}`; `arguments` may also be a string
//! holding the JSON object. Several calls: a JSON array of them, or several `<tool_call>` blocks.

use lathe_protocol::{AssistantMessage, Content, StopReason, ToolCall};
use serde_json::{Map, Value};

/// Replaces a text-only answer that consists of tool calls by those calls (stop reason `tool_use`)
/// and returns the called tool names; `None` (message unchanged) when it is not such an answer.
/// `known` are the tools on offer.
pub fn promote(message: &mut AssistantMessage, known: &[String]) -> Option<Vec<String>> {
    if message.tool_calls().next().is_some()
        || !matches!(message.stop, StopReason::EndTurn | StopReason::StopSequence)
    {
        return None;
    }
    let calls = parse_calls(&message.text())?;
    if !calls.iter().all(|(name, _)| known.iter().any(|tool| tool == name)) {
        return None;
    }
    let names = calls.iter().map(|(name, _)| name.clone()).collect();
    message.content.retain(|content| !matches!(content, Content::Text { .. }));
    message.content.extend(calls.into_iter().enumerate().map(|(n, (name, arguments))| {
        Content::ToolCall(ToolCall { id: format!("text_call_{}", n + 1), name, arguments, incomplete: None })
    }));
    message.stop = StopReason::ToolUse;
    Some(names)
}

/// The calls `text` consists of, or `None` when it is anything else.
fn parse_calls(text: &str) -> Option<Vec<(String, Value)>> {
    let text = strip_fence(text.trim());
    if text.starts_with("<tool_call>") {
        let mut calls = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            let inner = rest.strip_prefix("<tool_call>")?;
            let (body, after) = inner.split_once("</tool_call>")?;
            calls.extend(parse_json_calls(strip_fence(body.trim()))?);
            rest = after.trim_start();
        }
        return (!calls.is_empty()).then_some(calls);
    }
    parse_json_calls(text)
}

/// A JSON object that is one call, or an array of such objects.
fn parse_json_calls(text: &str) -> Option<Vec<(String, Value)>> {
    match serde_json::from_str::<Value>(text).ok()? {
        Value::Array(items) if !items.is_empty() => items.iter().map(call_of).collect(),
        object @ Value::Object(_) => Some(vec![call_of(&object)?]),
        _ => None,
    }
}

fn call_of(value: &Value) -> Option<(String, Value)> {
    let object = value.as_object()?;
    let inner = match object.get("function") {
        Some(Value::Object(function)) if object.get("type").and_then(Value::as_str) == Some("function") => {
            function
        }
        _ => object,
    };
    let name = inner.get("name")?.as_str()?.to_string();
    let arguments = match inner.get("arguments").or_else(|| inner.get("parameters")) {
        None => Value::Object(Map::new()),
        Some(Value::String(raw)) => serde_json::from_str::<Value>(raw).ok()?,
        Some(other) => other.clone(),
    };
    // Only these keys may appear: anything else means the JSON is data, not a call.
    let allowed = ["name", "arguments", "parameters", "type", "function", "id"];
    if !object.keys().all(|key| allowed.contains(&key.as_str())) || !arguments.is_object() {
        return None;
    }
    Some((name, arguments))
}

/// `text` without a surrounding Markdown code fence (```` ```json … ``` ````).
fn strip_fence(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else { return text };
    let Some(body) = rest.strip_suffix("```") else { return text };
    let body = body.split_once('\n').map_or(body, |(first, after)| {
        if first.trim().chars().all(|c| c.is_ascii_alphanumeric()) { after } else { body }
    });
    body.trim()
}

#[cfg(test)]
mod tests {
    use super::*;
    use lathe_protocol::Usage;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn answer(text: &str) -> AssistantMessage {
        AssistantMessage {
            content: vec![Content::text(text)],
            stop: StopReason::EndTurn,
            usage: Usage::default(),
            model: "qwen2.5-coder".into(),
        }
    }

    fn known() -> Vec<String> {
        vec!["write_file".to_string(), "read_file".to_string()]
    }

    fn calls(message: &AssistantMessage) -> Vec<(String, Value)> {
        message.tool_calls().map(|call| (call.name.clone(), call.arguments.clone())).collect()
    }

    #[test]
    fn whole_answers_that_are_calls_become_calls() {
        let write = ("write_file".to_string(), json!({"path": "hello.txt", "content": "hi\n"}));
        for text in [
            r#"{"name": "write_file", "arguments": {"path": "hello.txt", "content": "hi\n"}}"#,
            "<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"hello.txt\", \"content\": \"hi\\n\"}}\n</tool_call>",
            "```json\n{\"name\": \"write_file\", \"parameters\": {\"path\": \"hello.txt\", \"content\": \"hi\\n\"}}\n```",
            r#"{"type": "function", "function": {"name": "write_file", "arguments": "{\"path\": \"hello.txt\", \"content\": \"hi\\n\"}"}}"#,
        ] {
            let mut message = answer(text);
            assert_eq!(promote(&mut message, &known()), Some(vec!["write_file".to_string()]), "{text}");
            assert_eq!(calls(&message), vec![write.clone()], "{text}");
            assert_eq!(message.stop, StopReason::ToolUse);
            assert_eq!(message.text(), "");
        }
        let mut two = answer(
            "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}</tool_call>\n<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"b\"}}</tool_call>",
        );
        assert_eq!(promote(&mut two, &known()).map(|names| names.len()), Some(2));
        let ids: Vec<&str> = two.tool_calls().map(|call| call.id.as_str()).collect();
        assert_eq!(ids, vec!["text_call_1", "text_call_2"]);
    }

    #[test]
    fn prose_data_and_unknown_tools_stay_text() {
        for text in [
            "Here is the call: {\"name\": \"write_file\", \"arguments\": {}}",
            r#"{"name": "delete_everything", "arguments": {}}"#,
            r#"{"name": "Ada", "age": 36}"#,
            r#"{"name": "write_file", "arguments": "not json"}"#,
            r#"{"name": "write_file", "arguments": [1, 2]}"#,
            "<tool_call>{\"name\": \"write_file\", \"arguments\": {}}",
            "plain words",
        ] {
            let mut message = answer(text);
            assert_eq!(promote(&mut message, &known()), None, "{text}");
            assert_eq!(message.text(), text);
            assert_eq!(message.stop, StopReason::EndTurn);
        }
        let mut cut = answer(r#"{"name": "write_file", "arguments": {}}"#);
        cut.stop = StopReason::MaxTokens;
        assert_eq!(promote(&mut cut, &known()), None, "a cut answer is not run");
    }
}
