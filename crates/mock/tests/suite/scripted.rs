//! Scripted mode over all three protocols: streams, JSON bodies, errors with headers, delays, drops.

use lathe_mock::{MockServer, Mode, Protocol, Script};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::{ALL, decode, endpoint, eventually, parse_sse, post, simple_request};

fn script(v: Value) -> Script {
    Script::from_json(&v.to_string()).unwrap()
}

fn thinking_text_and_calls_turn() -> Value {
    json!({"thinking": {"text": "Let me look.", "signature": "sig-123", "chunks": 2},
           "text": "Reading both files.", "text_chunks": 3,
           "tool_calls": [
               {"id": "call_1", "name": "read_file", "arguments": {"path": "a.txt"}, "chunks": 3},
               {"id": "call_2", "name": "read_file", "arguments": {"path": "b/é.txt"}, "chunks": 4}],
           "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 2}})
}

#[tokio::test]
async fn streams_thinking_text_and_parallel_calls_in_each_protocol() {
    for protocol in ALL {
        let server =
            MockServer::start(Mode::Scripted(script(json!({"turns": [thinking_text_and_calls_turn()]}))))
                .await
                .unwrap();
        let (status, headers, body) =
            post(&endpoint(&server.url(), protocol), &simple_request(protocol, true)).await;
        assert_eq!(status, 200);
        assert!(headers["content-type"].to_str().unwrap().starts_with("text/event-stream"));
        let d = decode(protocol, &body);
        assert_eq!(d.text, "Reading both files.", "{protocol:?}");
        assert_eq!(d.thinking, "Let me look.", "{protocol:?}");
        assert_eq!(
            d.calls,
            vec![
                ("call_1".into(), "read_file".into(), r#"{"path":"a.txt"}"#.into()),
                ("call_2".into(), "read_file".into(), r#"{"path":"b/é.txt"}"#.into()),
            ],
            "{protocol:?}"
        );
        let expected_stop = match protocol {
            Protocol::Anthropic => "tool_use",
            Protocol::OpenaiChat => "tool_calls",
            Protocol::OpenaiResponses => "response.completed",
        };
        assert_eq!(d.stop, expected_stop);
        if protocol != Protocol::OpenaiChat {
            assert_eq!(d.signature, "sig-123", "{protocol:?}");
        }
        let logged = server.requests();
        assert_eq!(logged.len(), 1);
        assert_eq!(logged[0].protocol, Some(protocol));
        assert_eq!(logged[0].status, 200);
        assert_eq!(logged[0].body["stream"], json!(true));
        assert_eq!(server.stats().turns_served, 1);
        assert!(server.stats().done);
    }
}

#[tokio::test]
async fn anthropic_stream_has_the_real_event_order_and_padding() {
    let server =
        MockServer::start(Mode::Scripted(script(json!({"turns": [thinking_text_and_calls_turn()]}))))
            .await
            .unwrap();
    let (_, _, body) =
        post(&endpoint(&server.url(), Protocol::Anthropic), &simple_request(Protocol::Anthropic, true)).await;
    let names: Vec<String> = parse_sse(&body).into_iter().map(|e| e.name.unwrap()).collect();
    assert_eq!(&names[..2], ["message_start", "ping"]);
    assert_eq!(&names[names.len() - 2..], ["message_delta", "message_stop"]);
    assert_eq!(names.iter().filter(|n| *n == "content_block_stop").count(), 4);
    assert!(body.contains(r#"{"type":"content_block_stop","index":0 "#), "padded block stop");
    let delta =
        parse_sse(&body).into_iter().find(|e| e.name.as_deref() == Some("message_delta")).unwrap().json();
    assert_eq!(delta["usage"]["output_tokens"], 5);
    assert_eq!(delta["usage"]["cache_read_input_tokens"], 2);
}

#[tokio::test]
async fn chat_stream_ends_with_usage_chunk_then_done() {
    let server = MockServer::start(Mode::Scripted(script(json!({"turns": [
        {"text": "hi", "usage": {"input_tokens": 7, "output_tokens": 3}},
        {"text": "again"}]}))))
    .await
    .unwrap();
    let url = endpoint(&server.url(), Protocol::OpenaiChat);
    let (_, _, body) = post(&url, &simple_request(Protocol::OpenaiChat, true)).await;
    let events = parse_sse(&body);
    let usage = events[events.len() - 2].json();
    assert_eq!(usage["choices"], json!([]));
    assert_eq!(usage["usage"]["prompt_tokens"], 7);
    assert_eq!(usage["usage"]["completion_tokens"], 3);
    assert_eq!(events[events.len() - 3].json()["choices"][0]["finish_reason"], "stop");
    // Without include_usage there is no usage chunk.
    let mut req = simple_request(Protocol::OpenaiChat, true);
    req.as_object_mut().unwrap().remove("stream_options");
    let (_, _, body) = post(&url, &req).await;
    assert!(parse_sse(&body).iter().all(|e| e.data == "[DONE]" || e.json()["choices"] != json!([])));
}

#[tokio::test]
async fn non_streaming_requests_get_json_bodies() {
    for protocol in ALL {
        let server =
            MockServer::start(Mode::Scripted(script(json!({"turns": [thinking_text_and_calls_turn()]}))))
                .await
                .unwrap();
        let (status, headers, body) =
            post(&endpoint(&server.url(), protocol), &simple_request(protocol, false)).await;
        assert_eq!(status, 200);
        assert_eq!(headers["content-type"], "application/json");
        let v: Value = serde_json::from_str(&body).unwrap();
        match protocol {
            Protocol::Anthropic => {
                assert_eq!(v["type"], "message");
                assert_eq!(v["stop_reason"], "tool_use");
                assert_eq!(v["content"][1], json!({"type": "text", "text": "Reading both files."}));
                assert_eq!(v["content"][2]["input"], json!({"path": "a.txt"}));
            }
            Protocol::OpenaiChat => {
                assert_eq!(v["object"], "chat.completion");
                assert_eq!(v["choices"][0]["finish_reason"], "tool_calls");
                assert_eq!(v["choices"][0]["message"]["content"], "Reading both files.");
                assert_eq!(
                    v["choices"][0]["message"]["tool_calls"][1]["function"]["arguments"],
                    r#"{"path":"b/é.txt"}"#
                );
            }
            Protocol::OpenaiResponses => {
                assert_eq!(v["status"], "completed");
                let kinds: Vec<&str> =
                    v["output"].as_array().unwrap().iter().map(|i| i["type"].as_str().unwrap()).collect();
                assert_eq!(kinds, ["reasoning", "message", "function_call", "function_call"]);
                assert_eq!(v["output"][3]["call_id"], "call_2");
            }
        }
    }
}

#[tokio::test]
async fn error_turns_use_each_provider_shape_status_and_headers() {
    for protocol in ALL {
        let server = MockServer::start(Mode::Scripted(script(json!({"turns": [
            {"error": {"status": 429, "headers": {"retry-after": "2"}, "message": "slow down"}},
            {"error": {"status": 502, "body": "<html>Bad Gateway</html>"}},
            {"text": "ok"}]}))))
        .await
        .unwrap();
        let url = endpoint(&server.url(), protocol);
        let (status, headers, body) = post(&url, &simple_request(protocol, true)).await;
        assert_eq!(status, 429);
        assert_eq!(headers["retry-after"], "2");
        let v: Value = serde_json::from_str(&body).unwrap();
        match protocol {
            Protocol::Anthropic => assert_eq!(
                v,
                json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}})
            ),
            Protocol::OpenaiChat | Protocol::OpenaiResponses => {
                assert_eq!(v["error"]["message"], "slow down");
                assert_eq!(v["error"]["code"], "rate_limit_exceeded");
            }
        }
        let (status, headers, body) = post(&url, &simple_request(protocol, true)).await;
        assert_eq!(status, 502);
        assert!(headers["content-type"].to_str().unwrap().starts_with("text/html"));
        assert_eq!(body, "<html>Bad Gateway</html>");
        let (status, _, body) = post(&url, &simple_request(protocol, true)).await;
        assert_eq!(status, 200);
        assert_eq!(decode(protocol, &body).text, "ok");
        let statuses: Vec<u16> = server.requests().iter().map(|r| r.status).collect();
        assert_eq!(statuses, [429, 502, 200]);
    }
}

#[tokio::test]
async fn requests_after_the_last_turn_get_script_exhausted() {
    let server =
        MockServer::start(Mode::Scripted(script(json!({"turns": [{"text": "only"}]})))).await.unwrap();
    let url = endpoint(&server.url(), Protocol::Anthropic);
    post(&url, &simple_request(Protocol::Anthropic, true)).await;
    let (status, _, body) = post(&url, &simple_request(Protocol::Anthropic, true)).await;
    assert_eq!(status, 400);
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["error"]["message"], "script exhausted");
    assert_eq!(v["error"]["type"], "invalid_request_error");
    let stats = server.stats();
    assert_eq!((stats.requests, stats.turns_served, stats.extra_requests), (2, 1, 1));
}

#[tokio::test]
async fn drop_after_events_cuts_the_connection_mid_body() {
    for protocol in ALL {
        let server = MockServer::start(Mode::Scripted(script(json!({"turns": [
            {"text": "a long answer", "text_chunks": 8, "drop_after_events": 3}]}))))
        .await
        .unwrap();
        let resp = super::http_client()
            .post(endpoint(&server.url(), protocol))
            .json(&simple_request(protocol, true))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        let mut resp = resp;
        let mut received = Vec::new();
        let err = loop {
            match resp.chunk().await {
                Ok(Some(chunk)) => received.extend_from_slice(&chunk),
                Ok(None) => panic!("{protocol:?}: the body ended cleanly; it should have been cut"),
                Err(e) => break e,
            }
        };
        assert!(err.is_body() || err.is_decode() || err.is_request(), "{err:?}");
        let text = String::from_utf8(received).unwrap();
        assert_eq!(parse_sse(&text).len(), 3, "{protocol:?}: exactly three events before the cut");
    }
}

#[tokio::test]
async fn drop_after_every_event_still_breaks_the_body() {
    let server = MockServer::start(Mode::Scripted(script(json!({"turns": [
        {"text": "complete but cut", "drop_after_events": 1000}]}))))
    .await
    .unwrap();
    let resp = super::http_client()
        .post(endpoint(&server.url(), Protocol::OpenaiChat))
        .json(&simple_request(Protocol::OpenaiChat, true))
        .send()
        .await
        .unwrap();
    assert!(resp.text().await.is_err(), "the body must not end cleanly");
}

#[tokio::test]
async fn delays_are_real_and_the_end_time_is_logged() {
    let server = MockServer::start(Mode::Scripted(script(json!({"turns": [
        {"text": "abcde", "text_chunks": 5, "first_byte_delay_ms": 100, "chunk_delay_ms": 30}]}))))
    .await
    .unwrap();
    let (status, _, _) =
        post(&endpoint(&server.url(), Protocol::Anthropic), &simple_request(Protocol::Anthropic, true)).await;
    assert_eq!(status, 200);
    // The client can see the body's end before the server's guard records it: wait for the record.
    let (r, end) = eventually(|| {
        let r = server.requests().into_iter().next()?;
        let end = r.response_end_ms?;
        Some((r, end))
    })
    .await;
    // 100 ms before the headers, then 30 ms before each of the 10 events after the first (message_start,
    // ping, block start, 5 deltas, block stop, message_delta, message_stop).
    assert!(end - r.received_ms >= 100.0 + 10.0 * 30.0, "took {} ms", end - r.received_ms);
}

#[tokio::test]
async fn log_file_gets_one_json_line_per_request_and_control_routes_answer() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("requests.jsonl");
    let server = MockServer::start_with(
        Mode::Scripted(script(json!({"turns": [{"text": "one"}, {"text": "two"}]}))),
        0,
        Some(log.clone()),
    )
    .await
    .unwrap();
    for protocol in [Protocol::OpenaiChat, Protocol::OpenaiResponses] {
        post(&endpoint(&server.url(), protocol), &simple_request(protocol, true)).await;
    }
    // The log line is written when the response has ended, which the client may see first.
    let lines: Vec<Value> = eventually(|| {
        let text = std::fs::read_to_string(&log).ok()?;
        (text.lines().count() == 2).then(|| text.lines().map(|l| serde_json::from_str(l).unwrap()).collect())
    })
    .await;
    assert_eq!(lines[0]["protocol"], "openai-chat");
    assert_eq!(lines[1]["protocol"], "openai-responses");
    assert_eq!(lines[1]["seq"], 1);
    assert_eq!(lines[1]["status"], 200);
    assert!(lines[1]["response_end_ms"].as_f64().is_some());
    assert_eq!(lines[0]["headers"]["content-type"], "application/json");

    let requests: Value = super::http_client()
        .get(format!("{}/_mock/requests", server.url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(requests.as_array().unwrap().len(), 2, "control routes are not logged");
    let stats: Value = super::http_client()
        .get(format!("{}/_mock/stats", server.url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(stats["requests"], 2);
    assert_eq!(stats["turns_served"], 2);
    assert_eq!(stats["done"], true);
}

#[tokio::test]
async fn cut_off_tool_call_has_no_block_stop_and_max_tokens() {
    let server = MockServer::start(Mode::Scripted(script(json!({"turns": [
        {"tool_calls": [{"id": "toolu_1", "name": "write_file", "raw_arguments": "{\"path\": \"a", "complete": false}],
         "stop": "max_tokens"}]}))))
    .await
    .unwrap();
    let (_, _, body) =
        post(&endpoint(&server.url(), Protocol::Anthropic), &simple_request(Protocol::Anthropic, true)).await;
    let d = decode(Protocol::Anthropic, &body);
    assert_eq!(d.stop, "max_tokens");
    assert_eq!(d.calls[0].2, "{\"path\": \"a");
    assert!(!body.contains("content_block_stop"));
}

#[test]
fn bad_scripts_are_clear_errors() {
    let err = Script::from_json(r#"{"turns": [{"txt": "typo"}]}"#).unwrap_err().to_string();
    assert!(err.contains("txt"), "{err}");
    let err =
        Script::from_json(r#"{"turns": [{"error": {"status": 429}, "text": "x"}]}"#).unwrap_err().to_string();
    assert!(err.contains("turns[0]"), "{err}");
    let err = Script::from_json(r#"{"turns": [{"stop": "done"}]}"#).unwrap_err().to_string();
    assert!(err.contains("done"), "{err}");
    let err = Script::load(std::path::Path::new("/nonexistent/script.json")).unwrap_err().to_string();
    assert!(err.contains("/nonexistent/script.json"), "{err}");
}

/// The body bytes received before the connection broke; panics if the body ended cleanly.
async fn body_until_the_cut(server: &MockServer, protocol: Protocol) -> String {
    let mut resp = super::http_client()
        .post(endpoint(&server.url(), protocol))
        .json(&simple_request(protocol, true))
        .send()
        .await
        .unwrap();
    let mut received = Vec::new();
    loop {
        match resp.chunk().await {
            Ok(Some(chunk)) => received.extend_from_slice(&chunk),
            Ok(None) => panic!("{protocol:?}: the body ended cleanly; it should have been cut"),
            Err(_) => break,
        }
    }
    String::from_utf8(received).unwrap()
}

#[tokio::test]
async fn drop_after_content_cuts_inside_a_tool_call_in_each_protocol() {
    for protocol in ALL {
        let server = MockServer::start(Mode::Scripted(script(json!({"turns": [
            {"text": "Let me look", "drop_after_content": true,
             "tool_calls": [{"id": "toolu_1", "name": "read_file", "raw_arguments": "{\"path\":\"a.", "complete": false}]}
        ]}))))
        .await
        .unwrap();
        let body = body_until_the_cut(&server, protocol).await;
        let events = parse_sse(&body);
        let last = events.last().unwrap().json();
        let last_is_the_cut_argument = match protocol {
            Protocol::Anthropic => last["delta"]["partial_json"] == "{\"path\":\"a.",
            Protocol::OpenaiChat => {
                last["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"] == "{\"path\":\"a."
            }
            Protocol::OpenaiResponses => last["delta"] == "{\"path\":\"a.",
        };
        assert!(last_is_the_cut_argument, "{protocol:?}: the stream ends inside the call: {body}");
        assert!(body.contains("Let me look"), "{protocol:?}");
        for terminal in ["message_delta", "finish_reason\":\"", "response.completed", "[DONE]"] {
            assert!(!body.contains(terminal), "{protocol:?}: {terminal} was sent: {body}");
        }
    }
}

#[tokio::test]
async fn omit_call_index_sends_whole_calls_without_index() {
    let turn = json!({"omit_call_index": true, "tool_calls": [
        {"id": "function-call-1", "name": "read_file", "arguments": {"path": "a.txt"}},
        {"id": "function-call-2", "name": "read_file", "arguments": {"path": "b.txt"}}]});
    let server =
        MockServer::start(Mode::Scripted(script(json!({"turns": [turn.clone(), turn]})))).await.unwrap();
    let (_, _, body) =
        post(&endpoint(&server.url(), Protocol::OpenaiChat), &simple_request(Protocol::OpenaiChat, true))
            .await;
    let pieces: Vec<Value> = parse_sse(&body)
        .iter()
        .filter(|e| e.data != "[DONE]")
        .filter_map(|e| e.json()["choices"][0]["delta"]["tool_calls"].get(0).cloned())
        .collect();
    assert_eq!(
        pieces,
        vec![
            json!({"id": "function-call-1", "type": "function",
                   "function": {"name": "read_file", "arguments": "{\"path\":\"a.txt\"}"}}),
            json!({"id": "function-call-2", "type": "function",
                   "function": {"name": "read_file", "arguments": "{\"path\":\"b.txt\"}"}}),
        ]
    );
    let (_, _, body) = post(
        &endpoint(&server.url(), Protocol::OpenaiResponses),
        &simple_request(Protocol::OpenaiResponses, true),
    )
    .await;
    let events = parse_sse(&body);
    assert!(events.iter().all(|e| e.json().get("output_index").is_none()), "{body}");
    assert!(events.iter().any(|e| e.json()["item_id"] == "fc_mock0000000000010001"), "{body}");
}

#[tokio::test]
async fn reject_images_answers_image_requests_without_using_a_turn() {
    let server = MockServer::start(Mode::Scripted(script(json!({
        "turns": [{"text": "no image here"}],
        "reject_images": {"status": 400, "message": "Could not process image"}}))))
    .await
    .unwrap();
    let mut with_image = simple_request(Protocol::Anthropic, false);
    with_image["messages"][0]["content"] = json!([
        {"type": "text", "text": "look"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}]);
    let (status, _, body) = post(&endpoint(&server.url(), Protocol::Anthropic), &with_image).await;
    assert_eq!(status, 400);
    assert!(body.contains("Could not process image"), "{body}");
    let mut chat_image = simple_request(Protocol::OpenaiChat, false);
    chat_image["messages"][0]["content"] =
        json!([{"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]);
    assert_eq!(post(&endpoint(&server.url(), Protocol::OpenaiChat), &chat_image).await.0, 400);
    let (status, _, body) =
        post(&endpoint(&server.url(), Protocol::Anthropic), &simple_request(Protocol::Anthropic, false))
            .await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("no image here"));
    assert_eq!(server.requests().len(), 3);
}

/// A request body whose conversation is padded with `bytes` of user text, in `protocol`'s shape.
fn padded_request(protocol: Protocol, bytes: usize, last_user: &str) -> Value {
    let mut request = simple_request(protocol, false);
    let pad = "x".repeat(bytes);
    let key = if protocol == Protocol::OpenaiResponses { "input" } else { "messages" };
    request[key] = json!([{"role": "user", "content": format!("{pad} {last_user}")}]);
    request
}

#[tokio::test]
async fn a_context_window_rejects_long_requests_in_each_providers_words_without_using_a_turn() {
    for protocol in ALL {
        let server = MockServer::start(Mode::Scripted(script(json!({
            "context_window": 2000,
            "side_replies": [{"when_last_user_contains": "SUMMARIZE", "text": "the summary"}],
            "turns": [{"text": "fits"}]
        }))))
        .await
        .unwrap();
        let url = endpoint(&server.url(), protocol);
        let (status, _, body) = post(&url, &padded_request(protocol, 9_000, "go")).await;
        assert_eq!(status, 400, "{protocol:?}");
        let error: Value = serde_json::from_str(&body).unwrap();
        let message = error["error"]["message"].as_str().unwrap();
        match protocol {
            Protocol::Anthropic => assert!(message.starts_with("prompt is too long: "), "{message}"),
            Protocol::OpenaiChat => {
                assert!(
                    message.starts_with("This model's maximum context length is 2000 tokens."),
                    "{message}"
                );
                assert_eq!(error["error"]["code"], "context_length_exceeded");
            }
            Protocol::OpenaiResponses => assert_eq!(error["error"]["code"], "context_length_exceeded"),
        }
        // A side request is answered without using the turn; the turn then reports the count.
        let (status, _, body) = post(&url, &padded_request(protocol, 100, "please SUMMARIZE")).await;
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("the summary"), "{body}");
        assert_eq!(server.stats().turns_served, 0);
        let request = padded_request(protocol, 100, "go");
        let (status, _, body) = post(&url, &request).await;
        assert_eq!(status, 200);
        assert!(body.contains("fits"), "{body}");
        let counted = lathe_mock::input_tokens(&request).to_string();
        assert!(body.contains(&counted), "usage reports {counted} input tokens: {body}");
        assert!(server.stats().done);
    }
}

#[tokio::test]
async fn check_pairing_answers_an_unpaired_call_with_the_providers_error() {
    let server =
        MockServer::start(Mode::Scripted(script(json!({"check_pairing": true, "turns": [{"text": "ok"}]}))))
            .await
            .unwrap();
    let request = json!({"model": "m", "max_tokens": 10, "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}]},
        {"role": "user", "content": "next"}]});
    let (status, _, body) = post(&endpoint(&server.url(), Protocol::Anthropic), &request).await;
    assert_eq!(status, 400);
    assert!(body.contains("toolu_1"), "{body}");
    assert_eq!(server.stats().turns_served, 0);
}
