//! Retries against lathe-mock's scripted failures, asserting on the requests the mock logged.

use std::time::{Duration, Instant};

use futures::StreamExt;
use lathe_mock::{MockServer, Mode, Script};
use lathe_protocol::{ModelEvent, ProviderError, StopReason};
use lathe_provider::{Protocol, RetryConfig};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::support::{hello_request, provider_at};

async fn scripted(script: Value) -> MockServer {
    MockServer::start(Mode::Scripted(Script::from_json(&script.to_string()).unwrap())).await.unwrap()
}

fn fast_retries(max_retries: u32) -> RetryConfig {
    RetryConfig {
        max_retries,
        initial_delay_ms: 10,
        max_delay_ms: 40,
        jitter: false,
        ..RetryConfig::default()
    }
}

fn retries(events: &[ModelEvent]) -> Vec<&lathe_protocol::RetryInfo> {
    events
        .iter()
        .filter_map(|event| match event {
            ModelEvent::Retry(info) => Some(info),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn rate_limit_with_retry_after_is_retried_once_after_the_delay() {
    let server = scripted(json!({"turns": [
        {"error": {"status": 429, "headers": {"retry-after": "2"}, "message": "slow down"}},
        {"text": "ok"}
    ]}))
    .await;
    let provider = provider_at(Protocol::Anthropic, &server.url(), RetryConfig::default());
    let events: Vec<ModelEvent> = provider.stream(&hello_request(), CancellationToken::new()).collect().await;
    let retry = retries(&events);
    assert_eq!(retry.len(), 1, "{events:#?}");
    assert_eq!(retry[0].delay_ms, 2_000);
    assert_eq!(retry[0].describe(), "rate limited, retrying in 2 s (1/4)");
    assert!(matches!(&retry[0].error, ProviderError::RateLimited { retry_after_ms: Some(2_000), .. }));
    assert_eq!(events.last(), Some(&ModelEvent::Stop { reason: StopReason::EndTurn }));
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!((requests[0].status, requests[1].status), (429, 200));
    let gap_ms = requests[1].received_ms - requests[0].received_ms;
    assert!(gap_ms >= 2_000.0, "the retry came {gap_ms} ms after the first request");
}

#[tokio::test]
async fn persistent_overload_gives_up_after_the_configured_retries() {
    let overloaded = json!({"error": {"status": 529, "message": "Overloaded"}});
    let server = scripted(json!({"turns": [
        overloaded, overloaded, overloaded, overloaded, overloaded, {"text": "too late"}
    ]}))
    .await;
    let provider = provider_at(Protocol::Anthropic, &server.url(), fast_retries(4));
    let events: Vec<ModelEvent> = provider.stream(&hello_request(), CancellationToken::new()).collect().await;
    let attempts: Vec<u32> = retries(&events).iter().map(|info| info.attempt).collect();
    assert_eq!(attempts, vec![1, 2, 3, 4]);
    match events.last() {
        Some(ModelEvent::Error { error: error @ ProviderError::Overloaded { api, .. } }) => {
            assert_eq!(api.status, Some(529));
            assert!(error.to_string().contains("overloaded"), "{error}");
        }
        other => panic!("expected the overload error, got {other:?}"),
    }
    assert_eq!(server.requests().len(), 5, "1 attempt + 4 retries, and no sixth request");
}

#[tokio::test]
async fn bad_request_is_never_retried() {
    for protocol in [Protocol::Anthropic, Protocol::OpenAiChat, Protocol::OpenAiResponses] {
        let server = scripted(json!({"turns": [
            {"error": {"status": 400, "message": "messages.0: bad things"}},
            {"text": "unreachable"}
        ]}))
        .await;
        let provider = provider_at(protocol, &server.url(), fast_retries(4));
        let events: Vec<ModelEvent> =
            provider.stream(&hello_request(), CancellationToken::new()).collect().await;
        assert!(retries(&events).is_empty(), "{protocol:?}");
        match events.last() {
            Some(ModelEvent::Error { error: ProviderError::BadRequest { api } }) => {
                assert_eq!(
                    api.message, "messages.0: bad things",
                    "{protocol:?}: the provider's message verbatim"
                );
            }
            other => panic!("{protocol:?}: expected BadRequest, got {other:?}"),
        }
        assert_eq!(server.requests().len(), 1, "{protocol:?}");
    }
}

#[tokio::test]
async fn cancel_during_backoff_returns_promptly_and_sends_nothing_more() {
    let server = scripted(json!({"turns": [
        {"error": {"status": 429, "headers": {"retry-after": "30"}, "message": "slow down"}},
        {"text": "never"}
    ]}))
    .await;
    let provider = provider_at(Protocol::OpenAiChat, &server.url(), RetryConfig::default());
    let cancel = CancellationToken::new();
    let mut stream = provider.stream(&hello_request(), cancel.clone());
    match stream.next().await {
        Some(ModelEvent::Retry(info)) => assert_eq!(info.delay_ms, 30_000),
        other => panic!("expected a retry announcement, got {other:?}"),
    }
    let cancelled_at = Instant::now();
    cancel.cancel();
    let next = tokio::time::timeout(Duration::from_secs(2), stream.next()).await.unwrap();
    assert_eq!(next, Some(ModelEvent::Error { error: ProviderError::Cancelled }));
    assert!(cancelled_at.elapsed() < Duration::from_secs(2));
    assert_eq!(stream.next().await, None, "nothing after the cancellation");
    // The retry lives inside the stream (no task is spawned): once the stream has ended and is
    // dropped, nothing is left that could send the retried request 30 s later.
    drop(stream);
    assert_eq!(server.requests().len(), 1, "no request after the cancellation");
}

#[tokio::test]
async fn server_errors_are_retried_for_every_protocol() {
    for protocol in [Protocol::Anthropic, Protocol::OpenAiChat, Protocol::OpenAiResponses] {
        let server = scripted(json!({"turns": [
            {"error": {"status": 503, "headers": {"retry-after-ms": "20"}, "message": "unavailable"}},
            {"text": "recovered", "text_chunks": 3}
        ]}))
        .await;
        let provider = provider_at(protocol, &server.url(), fast_retries(2));
        let events: Vec<ModelEvent> =
            provider.stream(&hello_request(), CancellationToken::new()).collect().await;
        assert_eq!(retries(&events).len(), 1, "{protocol:?}");
        assert_eq!(retries(&events)[0].delay_ms, 20, "{protocol:?}: retry-after-ms honoured");
        let text: String = events
            .iter()
            .filter_map(|event| match event {
                ModelEvent::TextDelta { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(text, "recovered", "{protocol:?}");
        assert_eq!(events.last(), Some(&ModelEvent::Stop { reason: StopReason::EndTurn }), "{protocol:?}");
        assert_eq!(server.requests().len(), 2, "{protocol:?}");
    }
}

/// What a consumer ends up with: the events folded by the accumulator (which starts over on a
/// retry that discards a partial response).
fn folded(events: &[ModelEvent]) -> lathe_protocol::AssistantMessage {
    let mut acc = lathe_protocol::Accumulator::new(lathe_protocol::ThinkingFormat::Anthropic);
    for event in events {
        acc.push(event);
    }
    acc.finish("m")
}

#[tokio::test]
async fn a_stream_that_breaks_after_content_is_retried_as_a_whole() {
    for protocol in [Protocol::Anthropic, Protocol::OpenAiChat, Protocol::OpenAiResponses] {
        let server = scripted(json!({"turns": [
            {"text": "a long answer that is cut off", "text_chunks": 6,
             "tool_calls": [{"id": "toolu_1", "name": "read_file", "raw_arguments": "{\"path\":\"a.", "complete": false}],
             "drop_after_content": true},
            {"text": "replayed"}
        ]}))
        .await;
        let provider = provider_at(protocol, &server.url(), fast_retries(4));
        let events: Vec<ModelEvent> =
            provider.stream(&hello_request(), CancellationToken::new()).collect().await;
        let retry = retries(&events);
        assert_eq!(retry.len(), 1, "{protocol:?}: {events:#?}");
        assert!(retry[0].discards_partial, "{protocol:?}");
        assert!(retry[0].describe().contains("partial response discarded"), "{}", retry[0].describe());
        let message = folded(&events);
        assert_eq!(message.text(), "replayed", "{protocol:?}");
        assert_eq!(message.tool_calls().count(), 0, "{protocol:?}");
        assert_eq!(message.stop, StopReason::EndTurn, "{protocol:?}");
        assert_eq!(server.requests().len(), 2, "{protocol:?}");
    }
}

#[tokio::test]
async fn an_in_stream_overload_after_text_is_retried_as_a_whole() {
    for protocol in [Protocol::Anthropic, Protocol::OpenAiChat, Protocol::OpenAiResponses] {
        let server = scripted(json!({"turns": [
            {"text": "Partial thoughts", "stream_error": {"type": "overloaded_error", "message": "Overloaded"}},
            {"text": "whole answer"}
        ]}))
        .await;
        let provider = provider_at(protocol, &server.url(), fast_retries(2));
        let events: Vec<ModelEvent> =
            provider.stream(&hello_request(), CancellationToken::new()).collect().await;
        assert_eq!(retries(&events).len(), 1, "{protocol:?}: {events:#?}");
        assert_eq!(folded(&events).text(), "whole answer", "{protocol:?}");
    }
}

#[tokio::test]
async fn a_broken_stream_is_surfaced_once_the_retries_are_spent() {
    let server = scripted(json!({"turns": [
        {"text": "first cut", "drop_after_content": true},
        {"text": "second cut", "drop_after_content": true}
    ]}))
    .await;
    let provider = provider_at(Protocol::Anthropic, &server.url(), fast_retries(1));
    let events: Vec<ModelEvent> = provider.stream(&hello_request(), CancellationToken::new()).collect().await;
    assert_eq!(retries(&events).len(), 1);
    assert!(
        matches!(
            events.last(),
            Some(ModelEvent::Error {
                error: ProviderError::IncompleteStream { .. } | ProviderError::Network { .. }
            })
        ),
        "{events:#?}"
    );
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_delay_stated_only_in_the_body_is_honoured() {
    let server = scripted(json!({"turns": [
        {"error": {"status": 429, "message": "Rate limit reached for requests. Please try again in 1.5s."}},
        {"text": "ok"}
    ]}))
    .await;
    let provider = provider_at(Protocol::OpenAiChat, &server.url(), RetryConfig::default());
    let events: Vec<ModelEvent> = provider.stream(&hello_request(), CancellationToken::new()).collect().await;
    let retry = retries(&events);
    assert_eq!(retry.len(), 1, "{events:#?}");
    assert_eq!(retry[0].delay_ms, 1_500);
    let requests = server.requests();
    let gap_ms = requests[1].received_ms - requests[0].received_ms;
    assert!(gap_ms >= 1_500.0, "the retry came {gap_ms} ms after the first request");
}

#[tokio::test]
async fn refused_connections_are_reported_at_once() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let provider = provider_at(Protocol::OpenAiResponses, &url, fast_retries(2));
    let events: Vec<ModelEvent> = provider.stream(&hello_request(), CancellationToken::new()).collect().await;
    assert_eq!(retries(&events).len(), 0);
    assert!(
        matches!(events.last(), Some(ModelEvent::Error { error: ProviderError::Unreachable { .. } })),
        "{events:?}"
    );
}

#[tokio::test]
async fn no_response_before_the_first_byte_timeout_is_retried() {
    let server = scripted(json!({"turns": [
        {"text": "too slow", "first_byte_delay_ms": 1_500},
        {"text": "on time"}
    ]}))
    .await;
    let provider = lathe_provider::build_provider(&lathe_provider::ProviderConfig {
        protocol: Protocol::Anthropic,
        base_url: Some(server.url()),
        first_byte_timeout_ms: 300,
        retry: fast_retries(1),
        ..lathe_provider::ProviderConfig::default()
    })
    .unwrap();
    let events: Vec<ModelEvent> = provider.stream(&hello_request(), CancellationToken::new()).collect().await;
    let retry = retries(&events);
    assert_eq!(retry.len(), 1, "{events:#?}");
    assert!(
        matches!(&retry[0].error, ProviderError::Timeout { message } if message.contains("first_byte_timeout_ms"))
    );
    assert_eq!(events.last(), Some(&ModelEvent::Stop { reason: StopReason::EndTurn }));
    assert_eq!(server.requests().len(), 2);
}

/// The scripted stream pauses before every event, so it falls silent before any content arrives:
/// that is retried (nothing was shown yet), and the retry is bounded like any other.
#[tokio::test]
async fn a_silent_stream_times_out_and_is_retried_within_the_limit() {
    let slow = json!({"text": "one two three four", "text_chunks": 4, "chunk_delay_ms": 1_500});
    let server = scripted(json!({"turns": [slow, slow, {"text": "not requested"}]})).await;
    let provider = lathe_provider::build_provider(&lathe_provider::ProviderConfig {
        protocol: Protocol::OpenAiChat,
        base_url: Some(format!("{}/v1", server.url())),
        idle_timeout_ms: 300,
        retry: fast_retries(1),
        ..lathe_provider::ProviderConfig::default()
    })
    .unwrap();
    let started = Instant::now();
    let events: Vec<ModelEvent> = provider.stream(&hello_request(), CancellationToken::new()).collect().await;
    assert_eq!(retries(&events).len(), 1, "{events:#?}");
    assert!(
        matches!(events.last(), Some(ModelEvent::Error { error: ProviderError::Timeout { message } }) if message.contains("idle_timeout_ms")),
        "{events:#?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5), "the idle timeout ended each attempt");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn each_protocol_posts_to_its_endpoint_with_its_headers() {
    for (protocol, path, key_header) in [
        (Protocol::Anthropic, "/v1/messages", "x-api-key"),
        (Protocol::OpenAiChat, "/v1/chat/completions", "authorization"),
        (Protocol::OpenAiResponses, "/v1/responses", "authorization"),
    ] {
        let server = scripted(json!({"turns": [{"text": "a"}, {"text": "b"}]})).await;
        let keyless = provider_at(protocol, &server.url(), fast_retries(0));
        let _: Vec<ModelEvent> = keyless.stream(&hello_request(), CancellationToken::new()).collect().await;
        let base = match protocol {
            Protocol::Anthropic => server.url(),
            Protocol::OpenAiChat | Protocol::OpenAiResponses => format!("{}/v1", server.url()),
        };
        let keyed = lathe_provider::build_provider(&lathe_provider::ProviderConfig {
            protocol,
            base_url: Some(base),
            api_key: Some("sk-test".into()),
            headers: [("X-Title".to_string(), "lathe".to_string())].into(),
            ..lathe_provider::ProviderConfig::default()
        })
        .unwrap();
        let _: Vec<ModelEvent> = keyed.stream(&hello_request(), CancellationToken::new()).collect().await;
        let requests = server.requests();
        assert_eq!(requests.len(), 2, "{protocol:?}");
        for request in &requests {
            assert_eq!(request.method, "POST");
            assert!(request.path.ends_with(path), "{protocol:?}: {}", request.path);
            assert_eq!(request.body["stream"], json!(true));
        }
        assert!(
            !requests[0].headers.contains_key(key_header),
            "{protocol:?}: no key, no auth header on loopback"
        );
        let sent = requests[1].headers.get(key_header).map(String::as_str);
        let expected = if key_header == "authorization" { "Bearer sk-test" } else { "sk-test" };
        assert_eq!(sent, Some(expected), "{protocol:?}");
        assert_eq!(requests[1].headers.get("x-title").map(String::as_str), Some("lathe"));
        if protocol == Protocol::Anthropic {
            assert_eq!(requests[1].headers.get("anthropic-version").map(String::as_str), Some("2023-06-01"));
        }
    }
}

#[tokio::test]
async fn a_connection_dropped_before_any_content_is_retried_invisibly() {
    for protocol in [Protocol::Anthropic, Protocol::OpenAiResponses] {
        let server = scripted(json!({"turns": [
            {"text": "lost", "drop_after_events": 1},
            {"text": "second try"}
        ]}))
        .await;
        let provider = provider_at(protocol, &server.url(), fast_retries(2));
        let events: Vec<ModelEvent> =
            provider.stream(&hello_request(), CancellationToken::new()).collect().await;
        assert_eq!(retries(&events).len(), 1, "{protocol:?}: {events:#?}");
        let starts = events.iter().filter(|event| matches!(event, ModelEvent::Started { .. })).count();
        assert_eq!(starts, 1, "{protocol:?}: the abandoned attempt's start is not shown");
        let text: String = events
            .iter()
            .filter_map(|event| match event {
                ModelEvent::TextDelta { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(text, "second try", "{protocol:?}");
        assert_eq!(server.requests().len(), 2, "{protocol:?}");
    }
}
