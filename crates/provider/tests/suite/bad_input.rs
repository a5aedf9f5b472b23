//! Bad input from the wire becomes a typed error the user can read — never a panic — and the
//! content that arrived before it is kept.

use lathe_protocol::{Accumulator, ModelEvent, ProviderError, StopReason, ThinkingFormat};
use lathe_provider::{Protocol, decode_bytes};

fn fold(
    protocol: Protocol,
    status: u16,
    body: &[u8],
) -> (lathe_protocol::AssistantMessage, Option<ProviderError>) {
    let events = decode_bytes(protocol, status, body);
    let terminals =
        events.iter().filter(|event| matches!(event, ModelEvent::Stop { .. } | ModelEvent::Error { .. }));
    assert_eq!(terminals.count(), 1, "{events:?}");
    let mut acc = Accumulator::new(ThinkingFormat::Anthropic);
    events.iter().for_each(|event| acc.push(event));
    let error = acc.error().cloned();
    (acc.finish("m"), error)
}

#[test]
fn malformed_json_in_an_event() {
    let body = b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"c\"}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"partial\"}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"\n\n";
    let (message, error) = fold(Protocol::Anthropic, 200, body);
    assert_eq!(message.stop, StopReason::Error);
    assert_eq!(message.text(), "partial");
    let error = error.unwrap();
    assert_eq!(error.kind(), "decode");
    assert!(error.to_string().contains("content_block_delta"), "{error}");
}

#[test]
fn unknown_event_type_is_ignored() {
    let body = b"data: {\"type\":\"response.created\",\"response\":{\"model\":\"gpt\"}}\n\ndata: {\"type\":\"response.future_feature.delta\",\"delta\":\"?\"}\n\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"fine\"}\n\ndata: {\"type\":\"response.completed\",\"response\":{\"output\":[]}}\n\n";
    let (message, error) = fold(Protocol::OpenAiResponses, 200, body);
    assert_eq!(error, None);
    assert_eq!(message.text(), "fine");
    assert_eq!(message.stop, StopReason::EndTurn);
}

#[test]
fn truncated_stream() {
    let body = b"data: {\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"half an ans\"}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"wer";
    let (message, error) = fold(Protocol::OpenAiChat, 200, body);
    assert_eq!(message.text(), "half an ans");
    assert!(
        matches!(error, Some(ProviderError::Decode { .. } | ProviderError::IncompleteStream { .. })),
        "{error:?}"
    );
    let cut_between_events =
        b"data: {\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"half\"}}]}\n\n";
    let (_, error) = fold(Protocol::OpenAiChat, 200, cut_between_events);
    assert!(matches!(error, Some(ProviderError::IncompleteStream { .. })), "{error:?}");
}

#[test]
fn html_error_body_from_a_proxy() {
    let html = b"<!DOCTYPE html>\n<html><head><title>503 Service Temporarily Unavailable</title></head>\n<body><center><h1>503 Service Temporarily Unavailable</h1></center><hr><center>nginx</center></body></html>\n";
    let (_, error) = fold(Protocol::Anthropic, 503, html);
    let error = error.unwrap();
    assert!(matches!(error, ProviderError::Server { .. }), "{error:?}");
    assert!(error.to_string().contains("non-JSON body"), "{error}");
    assert!(error.to_string().contains("503 Service Temporarily Unavailable"), "{error}");
    let (_, error) = fold(Protocol::OpenAiChat, 200, html);
    let error = error.unwrap();
    assert!(matches!(error, ProviderError::Decode { .. }), "{error:?}");
    assert!(error.to_string().contains("expected a server-sent event stream"), "{error}");
}

#[test]
fn empty_200_body() {
    for protocol in [Protocol::Anthropic, Protocol::OpenAiChat, Protocol::OpenAiResponses] {
        let (message, error) = fold(protocol, 200, b"");
        assert_eq!(message.stop, StopReason::Error);
        assert!(
            matches!(&error, Some(ProviderError::IncompleteStream { detail }) if detail.contains("empty body")),
            "{protocol:?}: {error:?}"
        );
    }
}
