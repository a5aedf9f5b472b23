use lathe_protocol::{Accumulator, ModelEvent, ProviderError, StopReason, ThinkingFormat};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::config::Protocol;
use crate::{decode_bytes, decode_chunks};

fn terminal(events: &[ModelEvent]) -> &ModelEvent {
    let terminals = events
        .iter()
        .filter(|event| matches!(event, ModelEvent::Stop { .. } | ModelEvent::Error { .. }))
        .count();
    assert_eq!(terminals, 1, "exactly one terminal event in {events:#?}");
    events.last().unwrap()
}

fn error_of(events: &[ModelEvent]) -> ProviderError {
    match terminal(events) {
        ModelEvent::Error { error } => error.clone(),
        other => panic!("expected an error, got {other:?}"),
    }
}

fn text_of(events: &[ModelEvent]) -> String {
    events
        .iter()
        .filter_map(|event| match event {
            ModelEvent::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

const ANTHROPIC_HELLO: &str = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-x\",\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Héllo 👋\"}}\n\nevent: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":3}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}";

#[test]
fn cr_and_crlf_line_endings_decode_like_lf() {
    let lf = decode_bytes(Protocol::Anthropic, 200, ANTHROPIC_HELLO.as_bytes());
    assert_eq!(text_of(&lf), "Héllo 👋");
    assert_eq!(terminal(&lf), &ModelEvent::Stop { reason: StopReason::EndTurn });
    let cr = ANTHROPIC_HELLO.replace('\n', "\r");
    let crlf = ANTHROPIC_HELLO.replace('\n', "\r\n");
    assert_eq!(decode_bytes(Protocol::Anthropic, 200, cr.as_bytes()), lf);
    assert_eq!(decode_bytes(Protocol::Anthropic, 200, crlf.as_bytes()), lf);
    // A split between CR and LF must not create an extra blank line.
    let bytes = crlf.as_bytes();
    for cut in 0..bytes.len() {
        assert_eq!(
            decode_chunks(Protocol::Anthropic, 200, &[&bytes[..cut], &bytes[cut..]]),
            lf,
            "cut at {cut}"
        );
    }
}

#[test]
fn last_event_without_blank_line_is_dispatched() {
    // ANTHROPIC_HELLO ends right after message_stop's data line, with no newline at all.
    let events = decode_bytes(Protocol::Anthropic, 200, ANTHROPIC_HELLO.as_bytes());
    assert_eq!(terminal(&events), &ModelEvent::Stop { reason: StopReason::EndTurn });
    let with_one_newline = format!("{ANTHROPIC_HELLO}\n");
    assert_eq!(decode_bytes(Protocol::Anthropic, 200, with_one_newline.as_bytes()), events);
}

#[test]
fn chat_comments_done_and_usage_only_chunk() {
    let body = concat!(
        ": OPENROUTER PROCESSING\n\n",
        "data: {\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"tool_calls\":[",
        "{\"index\":0,\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"read\",\"arguments\":\"\"}},",
        "{\"index\":1,\"id\":\"call_b\",\"type\":\"function\",\"function\":{\"name\":\"glob\",\"arguments\":\"\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"function\":{\"arguments\":\"{\\\"p\\\":\"}}]}}]}\n\n",
        ": keep-alive\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"function\":{\"arguments\":\"1}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n",
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":4,\"prompt_tokens_details\":{\"cached_tokens\":2}}}\n\n",
        "data: [DONE]\n\n",
    );
    let events = decode_bytes(Protocol::OpenAiChat, 200, body.as_bytes());
    assert_eq!(terminal(&events), &ModelEvent::Stop { reason: StopReason::ToolUse });
    let mut acc = Accumulator::new(ThinkingFormat::OpenAiChat);
    events.iter().for_each(|event| acc.push(event));
    let message = acc.finish("m");
    let calls: Vec<_> = message.tool_calls().map(|call| (call.id.clone(), call.arguments.clone())).collect();
    assert_eq!(calls, vec![("call_a".into(), json!({})), ("call_b".into(), json!({"p": 1}))]);
    assert_eq!(message.usage.cache_read_input_tokens, Some(2));
    assert_eq!(message.usage.cache_creation_input_tokens, None);
}

#[test]
fn malformed_json_event_is_a_decode_error_after_the_content() {
    let body = "data: {\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\ndata: {\"choices\": [oops\n\n";
    let events = decode_bytes(Protocol::OpenAiChat, 200, body.as_bytes());
    assert_eq!(text_of(&events), "Hi");
    let error = error_of(&events);
    assert!(
        matches!(&error, ProviderError::Decode { detail } if detail.contains("invalid JSON") && detail.contains("oops")),
        "{error}"
    );
}

#[test]
fn unknown_event_types_are_ignored_unless_they_carry_an_error() {
    let unknown = ANTHROPIC_HELLO.replace(
        "event: message_stop",
        "event: shiny_new_event\ndata: {\"type\":\"shiny_new_event\",\"x\":1}\n\nevent: message_stop",
    );
    assert_eq!(
        decode_bytes(Protocol::Anthropic, 200, unknown.as_bytes()),
        decode_bytes(Protocol::Anthropic, 200, ANTHROPIC_HELLO.as_bytes())
    );
    let responses = "data: {\"type\":\"response.audio.delta\",\"delta\":\"AAAA\"}\n\ndata: {\"type\":\"response.brand_new.failed\",\"error\":{\"code\":\"server_error\",\"message\":\"boom\"}}\n\n";
    let error = error_of(&decode_bytes(Protocol::OpenAiResponses, 200, responses.as_bytes()));
    assert_eq!(error.api().map(|api| api.message.as_str()), Some("boom"));
    assert_eq!(error.api().and_then(|api| api.error_type.as_deref()), Some("server_error"));
}

#[test]
fn truncated_streams_are_incomplete_for_every_protocol() {
    let anthropic = ANTHROPIC_HELLO.split("event: message_delta").next().unwrap();
    let chat = "data: {\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n";
    let responses = "data: {\"type\":\"response.created\",\"response\":{\"model\":\"m\"}}\n\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"Hi\"}\n\n";
    for (protocol, body) in [
        (Protocol::Anthropic, anthropic),
        (Protocol::OpenAiChat, chat),
        (Protocol::OpenAiResponses, responses),
    ] {
        let events = decode_bytes(protocol, 200, body.as_bytes());
        assert!(text_of(&events).starts_with('H'), "{protocol:?}: content before the cut is kept");
        assert!(matches!(error_of(&events), ProviderError::IncompleteStream { .. }), "{protocol:?}");
    }
}

#[test]
fn max_tokens_inside_tool_json_leaves_the_call_incomplete() {
    let body = concat!(
        "data: {\"type\":\"message_start\",\"message\":{\"model\":\"c\",\"usage\":{\"input_tokens\":1}}}\n\n",
        "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"write\",\"input\":{}}}\n\n",
        "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"path\\\": \\\"a\"}}\n\n",
        "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\"},\"usage\":{\"output_tokens\":9}}\n\n",
        "data: {\"type\":\"message_stop\"}\n\n",
    );
    let events = decode_bytes(Protocol::Anthropic, 200, body.as_bytes());
    assert!(!events.iter().any(|event| matches!(event, ModelEvent::ToolCallEnd { .. })));
    let mut acc = Accumulator::new(ThinkingFormat::Anthropic);
    events.iter().for_each(|event| acc.push(event));
    let message = acc.finish("c");
    assert_eq!(message.stop, StopReason::MaxTokens);
    let call = message.tool_calls().next().unwrap();
    assert_eq!(call.incomplete.as_deref(), Some("{\"path\": \"a"));
}

#[test]
fn html_and_empty_bodies_are_typed_errors() {
    let html = b"<html><body><h1>502 Bad Gateway</h1></body></html>\n";
    for protocol in [Protocol::Anthropic, Protocol::OpenAiChat, Protocol::OpenAiResponses] {
        let error = error_of(&decode_bytes(protocol, 200, html));
        assert!(
            matches!(&error, ProviderError::Decode { detail } if detail.contains("502 Bad Gateway")),
            "{error}"
        );
        let empty = error_of(&decode_bytes(protocol, 200, b""));
        assert!(
            matches!(&empty, ProviderError::IncompleteStream { detail } if detail.contains("empty body")),
            "{empty}"
        );
        let bad_gateway = error_of(&decode_bytes(protocol, 502, html));
        assert_eq!(bad_gateway.kind(), "server");
        assert!(bad_gateway.is_retryable());
        assert!(bad_gateway.api().unwrap().message.contains("502 Bad Gateway"));
    }
    let json_error = error_of(&decode_bytes(
        Protocol::OpenAiChat,
        200,
        b"{\"error\":{\"message\":\"no\",\"type\":\"x\"}}",
    ));
    assert_eq!(json_error.api().unwrap().message, "no");
}

#[test]
fn invalid_utf8_is_a_decode_error_not_a_panic() {
    let mut body = b"data: {\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"".to_vec();
    body.extend_from_slice(&[0xff, 0xfe]);
    body.extend_from_slice(b"\"}}]}\n\n");
    let error = error_of(&decode_bytes(Protocol::OpenAiChat, 200, &body));
    assert_eq!(error.kind(), "decode");
}

#[test]
fn a_second_choice_is_rejected() {
    let body = "data: {\"choices\":[{\"index\":1,\"delta\":{\"content\":\"x\"}}]}\n\n";
    let error = error_of(&decode_bytes(Protocol::OpenAiChat, 200, body.as_bytes()));
    assert!(
        matches!(&error, ProviderError::Decode { detail } if detail.contains("choice index 1")),
        "{error}"
    );
}

#[test]
fn responses_summary_parts_join_with_a_blank_line_and_raw_text_wins() {
    let summary = concat!(
        "data: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"reasoning\"}}\n\n",
        "data: {\"type\":\"response.reasoning_summary_text.delta\",\"output_index\":0,\"summary_index\":0,\"delta\":\"One\"}\n\n",
        "data: {\"type\":\"response.reasoning_summary_text.delta\",\"output_index\":0,\"summary_index\":1,\"delta\":\"Two\"}\n\n",
        "data: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"type\":\"reasoning\",\"encrypted_content\":\"enc\"}}\n\n",
        "data: {\"type\":\"response.completed\",\"response\":{\"output\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":2}}}\n\n",
    );
    let fold = |body: &str| {
        let mut acc = Accumulator::new(ThinkingFormat::OpenAiResponses);
        decode_bytes(Protocol::OpenAiResponses, 200, body.as_bytes())
            .iter()
            .for_each(|event| acc.push(event));
        acc.finish("m")
    };
    let message = fold(summary);
    assert_eq!(message.stop, StopReason::EndTurn);
    match &message.content[0] {
        lathe_protocol::Content::Thinking(thinking) => {
            assert_eq!(thinking.text, "One\n\nTwo");
            assert_eq!(thinking.signature.as_deref(), Some("enc"));
        }
        other => panic!("{other:?}"),
    }
    let raw = summary.replace(
        "data: {\"type\":\"response.output_item.done\"",
        "data: {\"type\":\"response.reasoning_text.delta\",\"output_index\":0,\"delta\":\"raw\"}\n\ndata: {\"type\":\"response.output_item.done\"",
    );
    match &fold(&raw).content[0] {
        lathe_protocol::Content::Thinking(thinking) => assert_eq!(thinking.text, "raw"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn responses_incomplete_maps_its_reason() {
    let body = |reason: &str| {
        format!(
            "data: {{\"type\":\"response.incomplete\",\"response\":{{\"incomplete_details\":{{\"reason\":\"{reason}\"}}}}}}\n\n"
        )
    };
    let stop = |reason: &str| {
        terminal(&decode_bytes(Protocol::OpenAiResponses, 200, body(reason).as_bytes())).clone()
    };
    assert_eq!(stop("max_output_tokens"), ModelEvent::Stop { reason: StopReason::MaxTokens });
    assert_eq!(stop("content_filter"), ModelEvent::Stop { reason: StopReason::Refusal });
}

#[test]
fn chat_done_after_the_finish_ends_the_stream_and_is_skipped_before_it() {
    let finished = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\ndata: {not json, never read\n\n";
    let events = decode_bytes(Protocol::OpenAiChat, 200, finished.as_bytes());
    assert_eq!(terminal(&events), &ModelEvent::Stop { reason: StopReason::EndTurn });
    let early = "data: [DONE]\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\n";
    let events = decode_bytes(Protocol::OpenAiChat, 200, early.as_bytes());
    assert_eq!(text_of(&events), "ok");
    assert_eq!(terminal(&events), &ModelEvent::Stop { reason: StopReason::EndTurn });
}

/// The calls (id, name, arguments) of a decoded stream, through the accumulator.
fn calls_of(protocol: Protocol, body: &str) -> Vec<(String, String, serde_json::Value)> {
    let mut acc = Accumulator::new(ThinkingFormat::OpenAiChat);
    for event in decode_bytes(protocol, 200, body.as_bytes()) {
        acc.push(&event);
    }
    let message = acc.finish("m");
    message.tool_calls().map(|call| (call.id.clone(), call.name.clone(), call.arguments.clone())).collect()
}

fn chat_chunk(delta: serde_json::Value, finish: Option<&str>) -> String {
    format!(
        "data: {}\n\n",
        json!({"model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    )
}

#[test]
fn chat_parallel_calls_without_index_stay_apart() {
    let whole = |id: &str, path: &str| {
        json!({"tool_calls": [{"id": id, "type": "function",
               "function": {"name": "read_file", "arguments": json!({"path": path}).to_string()}}]})
    };
    let expected = vec![
        ("function-call-1".to_string(), "read_file".to_string(), json!({"path": "a.txt"})),
        ("function-call-2".to_string(), "read_file".to_string(), json!({"path": "b.txt"})),
    ];
    for finish in ["tool_calls", "stop"] {
        let body = [
            chat_chunk(whole("function-call-1", "a.txt"), None),
            chat_chunk(whole("function-call-2", "b.txt"), None),
            chat_chunk(json!({}), Some(finish)),
            "data: [DONE]\n\n".to_string(),
        ]
        .concat();
        assert_eq!(calls_of(Protocol::OpenAiChat, &body), expected, "finish {finish}");
    }
    // Index 0 repeated for every call, ids differing.
    let mut same_index = whole("function-call-1", "a.txt");
    same_index["tool_calls"][0]["index"] = json!(0);
    let mut second = whole("function-call-2", "b.txt");
    second["tool_calls"][0]["index"] = json!(0);
    let body =
        [chat_chunk(same_index, None), chat_chunk(second, None), chat_chunk(json!({}), Some("tool_calls"))]
            .concat();
    assert_eq!(calls_of(Protocol::OpenAiChat, &body), expected);
    // No index and no id: a named piece starts a call, a bare arguments piece continues it, and a
    // second complete object never joins the first.
    let named = json!({"tool_calls": [{"function": {"name": "read_file", "arguments": ""}}]});
    let args = |text: &str| json!({"tool_calls": [{"function": {"arguments": text}}]});
    let body = [
        chat_chunk(named, None),
        chat_chunk(args("{\"path\":"), None),
        chat_chunk(args("\"a.txt\"}"), None),
        chat_chunk(args("{\"path\":\"b.txt\"}"), None),
        chat_chunk(json!({}), Some("tool_calls")),
    ]
    .concat();
    let calls = calls_of(Protocol::OpenAiChat, &body);
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(calls[0].2, json!({"path": "a.txt"}));
    assert_eq!(calls[1].2, json!({"path": "b.txt"}));
    assert_ne!(calls[0].0, calls[1].0);
}

#[test]
fn responses_items_without_output_index_stay_apart() {
    let event = |value: serde_json::Value| format!("data: {value}\n\n");
    let call = |n: usize, path: &str| {
        let args = json!({"path": path}).to_string();
        [
            event(json!({"type": "response.output_item.added", "item": {"id": format!("fc_{n}"), "type": "function_call",
                          "call_id": format!("call_{n}"), "name": "read_file", "arguments": ""}})),
            event(json!({"type": "response.function_call_arguments.delta", "item_id": format!("fc_{n}"), "delta": args})),
        ]
        .concat()
    };
    let done = |n: usize, path: &str| {
        event(
            json!({"type": "response.output_item.done", "item": {"id": format!("fc_{n}"), "type": "function_call",
                      "call_id": format!("call_{n}"), "name": "read_file",
                      "arguments": json!({"path": path}).to_string()}}),
        )
    };
    let body = [
        event(json!({"type": "response.created", "response": {"model": "m"}})),
        call(1, "a.txt"),
        call(2, "b.txt"),
        done(1, "a.txt"),
        done(2, "b.txt"),
        event(json!({"type": "response.completed", "response": {"model": "m", "output": []}})),
    ]
    .concat();
    assert_eq!(
        calls_of(Protocol::OpenAiResponses, &body),
        vec![
            ("call_1".to_string(), "read_file".to_string(), json!({"path": "a.txt"})),
            ("call_2".to_string(), "read_file".to_string(), json!({"path": "b.txt"})),
        ]
    );
}

#[test]
fn a_body_cut_inside_an_event_is_an_incomplete_stream() {
    let body = "data: {\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\ndata: {\"model\":\"m\",\"choices\":[{\"ind";
    let events = decode_bytes(Protocol::OpenAiChat, 200, body.as_bytes());
    assert_eq!(text_of(&events), "Hi");
    let error = error_of(&events);
    assert!(
        matches!(&error, ProviderError::IncompleteStream { detail } if detail.contains("middle of an event")),
        "{error}"
    );
}

#[test]
fn in_stream_server_errors_are_retryable_and_keep_a_stated_delay() {
    let body = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\"}}\n\nevent: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"Internal server error\"}}\n\n";
    let error = error_of(&decode_bytes(Protocol::Anthropic, 200, body.as_bytes()));
    assert!(matches!(error, ProviderError::Server { .. }), "{error:?}");
    assert!(error.is_retryable());
    let chat =
        "data: {\"error\":{\"type\":\"rate_limit_exceeded\",\"message\":\"Please try again in 250ms.\"}}\n\n";
    let error = error_of(&decode_bytes(Protocol::OpenAiChat, 200, chat.as_bytes()));
    assert!(matches!(error, ProviderError::RateLimited { retry_after_ms: Some(250), .. }), "{error:?}");
}
