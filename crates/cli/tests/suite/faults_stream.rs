//! Faults of model streams, through the real binary against lathe-mock, over every protocol:
//! a stream that breaks after content started (K1), parallel calls without `index` (K3), what
//! the model did not really finish (K4), and retry delays stated only in the body (K11).

use serde_json::{Value, json};

use super::harness::{
    Env, FAST_RETRIES, PROTOCOLS, json_lines, output, request_texts, serve, stderr, stdout, tool_results,
};

fn read_call(id: &str, path: &str) -> Value {
    json!({"id": id, "name": "read_file", "arguments": {"path": path}})
}

#[tokio::test]
async fn a_stream_cut_inside_a_tool_call_is_retried_and_its_partial_is_never_sent_or_stored() {
    for provider in PROTOCOLS {
        let env = Env::new(FAST_RETRIES);
        env.put("a.txt", "alpha\n");
        let server = serve(json!({"turns": [
            {"text": "Let me look", "drop_after_content": true,
             "tool_calls": [{"id": "toolu_1", "name": "read_file", "raw_arguments": "{\"path\":\"a.", "complete": false}]},
            {"text": "Reading", "tool_calls": [read_call("toolu_2", "a.txt")]},
            {"text": "done"},
            {"text": "still here"}
        ]}))
        .await;
        let out = output(env.run_against(&server, provider, "read a.txt", &[])).await;
        assert_eq!(out.status.code(), Some(0), "{provider}: {}", stderr(&out));
        assert_eq!(stdout(&out).trim(), "done", "{provider}");
        assert_eq!(server.requests().len(), 3, "{provider}: the cut response was requested again");
        let second = output(env.run_against(&server, provider, "anything else?", &["--continue"])).await;
        assert_eq!(second.status.code(), Some(0), "{provider}: {}", stderr(&second));
        for (n, body) in request_texts(&server).iter().enumerate() {
            assert!(
                !body.contains("toolu_1") && !body.contains("Let me look"),
                "{provider}: request {n}: {body}"
            );
        }
        assert!(request_texts(&server)[2].contains("alpha"), "{provider}: the retried call ran");
        let session = env.sessions_text();
        assert!(!session.contains("toolu_1") && !session.contains("Let me look"), "{provider}: {session}");
    }
}

#[tokio::test]
async fn an_in_stream_error_after_text_is_retried_as_a_whole() {
    for provider in PROTOCOLS {
        let env = Env::new(FAST_RETRIES);
        let server = serve(json!({"turns": [
            {"text": "Partial thoughts", "stream_error": {"type": "overloaded_error", "message": "Overloaded"}},
            {"text": "The whole answer."}
        ]}))
        .await;
        let out = output(env.run_against(&server, provider, "hi", &["--output-format", "stream-json"])).await;
        assert_eq!(out.status.code(), Some(0), "{provider}: {}", stderr(&out));
        let lines = json_lines(&out);
        let retry = lines.iter().find(|line| line["type"] == "retry").expect("a retry line");
        assert_eq!(retry["discards_partial"], true, "{provider}: {retry}");
        let texts: Vec<&Value> = lines.iter().filter(|line| line["type"] == "text").collect();
        assert_eq!(texts.len(), 1, "{provider}: {lines:?}");
        assert_eq!(texts[0]["text"], "The whole answer.");
        assert_eq!(lines.last().expect("result")["result"], "The whole answer.");
        assert!(!env.sessions_text().contains("Partial thoughts"), "{provider}");
    }
}

#[tokio::test]
async fn a_stream_that_keeps_breaking_fails_and_stores_no_partial_answer() {
    let env = Env::new("[retry]\nmax_retries = 1\ninitial_delay_ms = 10\n");
    let server = serve(json!({"turns": [
        {"text": "Half an answer", "drop_after_content": true},
        {"text": "Half an answer", "drop_after_content": true},
        {"text": "fresh start"}
    ]}))
    .await;
    let out = output(env.run_against(&server, "anthropic", "hi", &["--output-format", "json"])).await;
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let result = json_lines(&out).pop().expect("result");
    assert_eq!(result["subtype"], "error_api");
    assert_eq!(result["result"], "", "a partial response is never the answer");
    assert!(!env.sessions_text().contains("Half an answer"));
    let again = output(env.run_against(&server, "anthropic", "try again", &["--continue"])).await;
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    let last = request_texts(&server).pop().expect("request");
    assert!(!last.contains("Half an answer"), "{last}");
}

#[tokio::test]
async fn parallel_calls_without_index_are_separate_calls_with_their_own_results() {
    for provider in ["openai", "responses"] {
        for stop in ["tool_use", "end_turn"] {
            let env = Env::new(FAST_RETRIES);
            env.put("a.txt", "contents of a\n");
            env.put("b.txt", "contents of b\n");
            let server = serve(json!({"turns": [
                {"omit_call_index": true, "stop": stop,
                 "tool_calls": [read_call("function-call-1", "a.txt"), read_call("function-call-2", "b.txt")]},
                {"text": "done"}
            ]}))
            .await;
            let out =
                output(env.run_against(&server, provider, "read both", &["--output-format", "stream-json"]))
                    .await;
            assert_eq!(out.status.code(), Some(0), "{provider}/{stop}: {}", stderr(&out));
            let results = tool_results(&out);
            let got: Vec<(String, String)> = results
                .iter()
                .map(|r| {
                    (
                        r["id"].as_str().unwrap_or("").to_string(),
                        r["output"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect();
            assert_eq!(got.len(), 2, "{provider}/{stop}: {got:?}");
            assert_eq!(got[0].0, "function-call-1");
            assert!(got[0].1.contains("contents of a"), "{provider}/{stop}: {got:?}");
            assert_eq!(got[1].0, "function-call-2");
            assert!(got[1].1.contains("contents of b"), "{provider}/{stop}: {got:?}");
            assert!(results.iter().all(|r| r["is_error"] == false), "{provider}/{stop}: {results:?}");
            let second = &request_texts(&server)[1];
            assert!(second.contains("contents of a") && second.contains("contents of b"), "{second}");
        }
    }
}

#[tokio::test]
async fn no_call_of_a_response_cut_at_the_output_limit_runs() {
    for provider in PROTOCOLS {
        let env = Env::new(FAST_RETRIES);
        let server = serve(json!({"turns": [
            {"tool_calls": [{"id": "call_1", "name": "write_file", "arguments": {"path": "cut.txt", "content": "part"}}],
             "stop": "max_tokens"},
            {"text": "I will write it in smaller parts."}
        ]}))
        .await;
        let out = output(env.run_against(
            &server,
            provider,
            "write it",
            &["--yolo", "--output-format", "stream-json"],
        ))
        .await;
        assert_eq!(out.status.code(), Some(0), "{provider}: {}", stderr(&out));
        assert!(!env.workspace.join("cut.txt").exists(), "{provider}: a call from a cut response ran");
        let result = &tool_results(&out)[0];
        assert_eq!(result["is_error"], true, "{provider}");
        assert!(
            result["output"].as_str().is_some_and(|o| o.contains("cut off by the output token limit")),
            "{provider}: {result}"
        );
        assert!(request_texts(&server)[1].contains("cut off by the output token limit"), "{provider}");
    }
}

#[tokio::test]
async fn a_call_written_as_text_is_run_as_a_call_and_said() {
    let texts = [
        r#"{"name": "write_file", "arguments": {"path": "hello.txt", "content": "hi\n"}}"#,
        "<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"hello.txt\", \"content\": \"hi\\n\"}}\n</tool_call>",
    ];
    for text in texts {
        let env = Env::new(FAST_RETRIES);
        let server =
            serve(json!({"turns": [{"text": text, "stop": "end_turn"}, {"text": "Wrote hello.txt."}]})).await;
        let out = output(env.run_against(&server, "openai", "say hi in hello.txt", &["--yolo"])).await;
        assert_eq!(out.status.code(), Some(0), "{text}: {}", stderr(&out));
        assert_eq!(
            std::fs::read(env.workspace.join("hello.txt")).ok().as_deref(),
            Some(&b"hi\n"[..]),
            "{text}"
        );
        assert!(
            stderr(&out).contains("warning: the model wrote its write_file call as text"),
            "{}",
            stderr(&out)
        );
        assert_eq!(stdout(&out).trim(), "Wrote hello.txt.");
        assert_eq!(server.requests().len(), 2);
    }
}

#[tokio::test]
async fn a_retry_delay_stated_only_in_the_body_or_reset_headers_is_honoured() {
    let cases = [
        (
            "anthropic",
            json!({"status": 429, "message": "Rate limit reached. Please try again in 1.5s."}),
            1_500,
        ),
        (
            "openai",
            json!({"status": 429, "message": "Rate limit reached for requests. Please try again in 1.5s."}),
            1_500,
        ),
        (
            "responses",
            json!({"status": 429, "message": "Too many tokens",
                   "headers": {"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "1.2s"}}),
            1_200,
        ),
    ];
    for (provider, error, delay_ms) in cases {
        let env = Env::new("");
        let server = serve(json!({"turns": [{"error": error}, {"text": "ok"}]})).await;
        let out = output(env.run_against(&server, provider, "hi", &["--output-format", "stream-json"])).await;
        assert_eq!(out.status.code(), Some(0), "{provider}: {}", stderr(&out));
        let lines = json_lines(&out);
        let retry = lines.iter().find(|line| line["type"] == "retry").expect("retry line");
        assert_eq!(retry["delay_ms"], delay_ms, "{provider}: {retry}");
        let requests = server.requests();
        let gap_ms = requests[1].received_ms - requests[0].received_ms;
        assert!(gap_ms >= delay_ms as f64, "{provider}: retried after {gap_ms} ms");
    }
}
