#![allow(clippy::unwrap_used, clippy::expect_used)]

use lathe_protocol::{Accumulator, ModelEvent, StopReason, ThinkingFormat};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

/// Feeds `output` in pieces of `step` characters and returns every event.
fn run(mode: AnswerMode, structured: bool, output: &str, step: usize, end: GenerationEnd) -> Vec<ModelEvent> {
    let mut parser = OutputParser::new(mode, structured, "call_");
    let chars: Vec<char> = output.chars().collect();
    let mut events = Vec::new();
    for piece in chars.chunks(step) {
        events.extend(parser.push(&piece.iter().collect::<String>()));
    }
    events.extend(parser.finish(end));
    events
}

fn fold(events: &[ModelEvent]) -> lathe_protocol::AssistantMessage {
    let mut acc = Accumulator::new(ThinkingFormat::Local);
    for event in events {
        acc.push(event);
    }
    acc.finish("m")
}

const TWO_CALLS: &str = "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a}.txt\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"shell\", \"arguments\": {\"command\": \"ls -é\"}}\n</tool_call>";

#[test]
fn calls_parse_identically_whatever_the_piece_size() {
    for step in [1, 2, 3, 7, 1000] {
        let events = run(AnswerMode::Text, true, TWO_CALLS, step, GenerationEnd::EndOfTurn);
        let message = fold(&events);
        let calls: Vec<_> =
            message.tool_calls().map(|c| (c.id.clone(), c.name.clone(), c.arguments.clone())).collect();
        assert_eq!(
            calls,
            vec![
                ("call_0".to_string(), "read_file".to_string(), json!({"path": "a}.txt"})),
                ("call_1".to_string(), "shell".to_string(), json!({"command": "ls -é"})),
            ],
            "step {step}"
        );
        assert_eq!(message.stop, StopReason::ToolUse);
        assert_eq!(message.text(), "");
        let deltas: String = events
            .iter()
            .filter_map(|e| match e {
                ModelEvent::ToolCallDelta { index: 0, arguments } => Some(arguments.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(deltas, "{\"path\": \"a}.txt\"}", "step {step}");
    }
}

#[test]
fn text_streams_as_it_arrives_and_ends_the_turn() {
    let mut parser = OutputParser::new(AnswerMode::Text, true, "c");
    assert_eq!(parser.push("The first"), vec![ModelEvent::TextDelta { text: "The first".into() }]);
    assert_eq!(parser.push(" line."), vec![ModelEvent::TextDelta { text: " line.".into() }]);
    assert_eq!(
        parser.finish(GenerationEnd::EndOfTurn),
        vec![ModelEvent::Stop { reason: StopReason::EndTurn }]
    );
}

#[test]
fn final_answer_calls_become_plain_text() {
    let output = "<tool_call>\n{\"name\": \"answer\", \"arguments\": {\"answer\": \"Line one:\\n\\\"hello\\\" \\u00e9\"}}\n</tool_call>";
    for step in [1, 4, 1000] {
        let events = run(AnswerMode::FinalAnswerTool, true, output, step, GenerationEnd::EndOfTurn);
        assert!(events.iter().all(|e| !matches!(e, ModelEvent::ToolCallStart { .. })), "{events:?}");
        let message = fold(&events);
        assert_eq!(message.text(), "Line one:\n\"hello\" é", "step {step}");
        assert_eq!(message.stop, StopReason::EndTurn);
    }
}

#[test]
fn the_thought_before_an_answer_is_not_shown() {
    let output = "<tool_call>\n{\"name\": \"answer\", \"arguments\": {\"thought\": \"Line 8 is the last: \\\"8\\\", minus the header.\", \"answer\": \"7 rows.\"}}\n</tool_call>";
    for step in [1, 3, 1000] {
        let events = run(AnswerMode::FinalAnswerTool, true, output, step, GenerationEnd::EndOfTurn);
        let message = fold(&events);
        assert_eq!(message.text(), "7 rows.", "step {step}: {events:?}");
        assert_eq!(message.stop, StopReason::EndTurn);
    }
}

#[test]
fn a_call_cut_by_the_token_limit_is_incomplete() {
    let output =
        "<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"x\", \"content\": \"abc";
    let events = run(AnswerMode::Text, true, output, 5, GenerationEnd::TokenLimit);
    let message = fold(&events);
    let call = message.tool_calls().next().unwrap();
    assert!(call.incomplete.is_some(), "{call:?}");
    assert_eq!(message.stop, StopReason::MaxTokens);
}

#[test]
fn unstructured_output_is_all_text_even_if_it_looks_like_a_call() {
    let events = run(AnswerMode::Text, false, "<tool_call>\nnot really", 3, GenerationEnd::EndOfTurn);
    assert_eq!(fold(&events).text(), "<tool_call>\nnot really");
}
