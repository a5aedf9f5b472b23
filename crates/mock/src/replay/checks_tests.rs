#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::wire;

fn conv(protocol: Protocol, body: serde_json::Value) -> Conversation {
    wire::conversation(protocol, &body).unwrap()
}

#[test]
fn responses_assistant_side_items_in_a_row_are_one_turn() {
    let c = conv(
        Protocol::OpenaiResponses,
        json!({"input": [
            {"role": "user", "content": "go"},
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]},
            {"type": "function_call", "call_id": "c1", "name": "glob", "arguments": "{}"},
            {"type": "function_call", "call_id": "c2", "name": "glob", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "x"},
            {"type": "function_call_output", "call_id": "c2", "output": "y"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]},
            {"role": "user", "content": [{"type": "input_text", "text": "more"}]}]}),
    );
    let spans = c.assistant_turns();
    assert_eq!(spans.len(), 2);
    assert_eq!(c.call_ids(spans[0]), ["c1", "c2"]);
    assert!(pairing(Protocol::OpenaiResponses, &c).is_none());
    assert_eq!(c.user_texts(spans[1].last + 1, c.messages.len()), ["more"]);
}

#[test]
fn anthropic_consecutive_assistant_messages_count_once_and_system_is_not_user_text() {
    let c = conv(
        Protocol::Anthropic,
        json!({"system": "be brief", "messages": [
            {"role": "user", "content": "task"},
            {"role": "assistant", "content": "thinking aloud"},
            {"role": "assistant", "content": [{"type": "text", "text": "more"}]},
            {"role": "user", "content": [{"type": "text", "text": "next"}]}]}),
    );
    assert_eq!(c.assistant_turns().len(), 1);
    assert_eq!(c.user_texts(0, c.messages.len()), ["task", "next"]);
}

#[test]
fn anthropic_results_must_be_in_the_very_next_message() {
    let c = conv(
        Protocol::Anthropic,
        json!({"messages": [
            {"role": "user", "content": "task"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_a", "name": "glob", "input": {}}]},
            {"role": "user", "content": "hurry"},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_a", "content": "x"}]}]}),
    );
    let err = pairing(Protocol::Anthropic, &c).unwrap();
    assert_eq!(
        err.message,
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_a. Each `tool_use` block must have a corresponding `tool_result` block in the next message."
    );
}

#[test]
fn anthropic_result_without_its_call_names_the_block() {
    let c = conv(
        Protocol::Anthropic,
        json!({"messages": [
            {"role": "user", "content": "task"},
            {"role": "assistant", "content": "hi"},
            {"role": "user", "content": [{"type": "text", "text": "see"},
                                         {"type": "tool_result", "tool_use_id": "toolu_x", "content": "x"}]}]}),
    );
    let err = pairing(Protocol::Anthropic, &c).unwrap();
    assert!(err.message.starts_with(
        "messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_x."
    ));
}

#[test]
fn chat_tool_message_without_a_call_is_rejected_with_its_index() {
    let c = conv(
        Protocol::OpenaiChat,
        json!({"messages": [
            {"role": "system", "content": "s"},
            {"role": "user", "content": "task"},
            {"role": "tool", "tool_call_id": "call_1", "content": "x"}]}),
    );
    let err = pairing(Protocol::OpenaiChat, &c).unwrap();
    assert_eq!(err.param.as_deref(), Some("messages.[2].role"));
    assert!(err.message.contains("must be a response to a preceeding message with 'tool_calls'"));
}

#[test]
fn chat_user_message_before_all_results_is_a_missing_result() {
    let c = conv(
        Protocol::OpenaiChat,
        json!({"messages": [
            {"role": "user", "content": "task"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "glob", "arguments": "{}"}},
                {"id": "call_2", "type": "function", "function": {"name": "glob", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "call_2", "content": "x"},
            {"role": "user", "content": "and?"}]}),
    );
    let err = pairing(Protocol::OpenaiChat, &c).unwrap();
    assert!(err.message.ends_with("did not have response messages: call_1"), "{}", err.message);
    assert_eq!(err.param.as_deref(), Some("messages.[3].role"));
}

#[test]
fn a_body_without_a_conversation_is_a_provider_style_error() {
    assert_eq!(wire::conversation(Protocol::Anthropic, &json!({})).unwrap_err(), "messages: Field required");
    assert!(wire::conversation(Protocol::OpenaiResponses, &json!({"input": 3})).is_err());
    let c = wire::conversation(Protocol::OpenaiResponses, &json!({"input": "just text"})).unwrap();
    assert_eq!(c.user_texts(0, 1), ["just text"]);
}
