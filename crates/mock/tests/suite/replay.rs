//! Replay mode: whole cases played over each protocol by a tiny scripted client that echoes tool results,
//! plus the ways a request can go wrong (pairing, divergence, exhaustion) and side requests.

use std::path::PathBuf;

use lathe_mock::{MockServer, Mode, Protocol, ReplayCase, Stats};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::{ALL, Decoded, decode, endpoint, parse_sse};

/// The tools Lathe really offers, so the client's requests never drift from the real tool list.
fn lathe_tools() -> Vec<String> {
    lathe_tools::ToolRegistry::builtin().names()
}

fn case_path(id: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../../shared/replay/{id}.json"))
}

fn load(id: &str) -> ReplayCase {
    ReplayCase::load(&case_path(id)).unwrap()
}

/// A scripted client holding the conversation in one protocol's wire format.
struct Client {
    protocol: Protocol,
    url: String,
    history: Vec<Value>,
    http: reqwest::Client,
}

impl Client {
    fn new(protocol: Protocol, base: &str, prompt: &str) -> Client {
        let mut c = Client {
            protocol,
            url: endpoint(base, protocol),
            history: Vec::new(),
            http: super::http_client(),
        };
        c.push_user(prompt);
        c
    }

    fn body(&self, with_tools: bool) -> Value {
        let tools: Vec<Value> = lathe_tools()
            .into_iter()
            .filter(|_| with_tools)
            .map(|name| match self.protocol {
                Protocol::Anthropic => json!({"name": name, "input_schema": {"type": "object"}}),
                Protocol::OpenaiChat => {
                    json!({"type": "function", "function": {"name": name, "parameters": {"type": "object"}}})
                }
                Protocol::OpenaiResponses => {
                    json!({"type": "function", "name": name, "parameters": {"type": "object"}})
                }
            })
            .collect();
        let chat_messages: Vec<Value> =
            std::iter::once(json!({"role": "system", "content": "You are Lathe."}))
                .chain(self.history.iter().cloned())
                .collect();
        match self.protocol {
            Protocol::Anthropic => json!({"model": "claude-test", "max_tokens": 4096, "stream": true,
                "system": "You are Lathe.", "messages": self.history, "tools": tools}),
            Protocol::OpenaiChat => {
                json!({"model": "gpt-test", "stream": true, "stream_options": {"include_usage": true},
                "messages": chat_messages,
                "tools": tools})
            }
            Protocol::OpenaiResponses => {
                json!({"model": "gpt-test", "stream": true, "instructions": "You are Lathe.",
                "input": self.history, "tools": tools})
            }
        }
    }

    async fn send_body(&self, body: &Value) -> (u16, String) {
        let resp = self.http.post(&self.url).json(body).send().await.unwrap();
        (resp.status().as_u16(), resp.text().await.unwrap())
    }

    async fn send(&self) -> (u16, String) {
        self.send_body(&self.body(true)).await
    }

    fn push_user(&mut self, text: &str) {
        self.history.push(match self.protocol {
            Protocol::Anthropic => json!({"role": "user", "content": [{"type": "text", "text": text}]}),
            Protocol::OpenaiChat => json!({"role": "user", "content": text}),
            Protocol::OpenaiResponses => {
                json!({"role": "user", "content": [{"type": "input_text", "text": text}]})
            }
        });
    }

    /// Appends the assistant turn; an empty answer (no text, no calls) adds nothing, as FORMAT.md says.
    fn push_assistant(&mut self, d: &Decoded) {
        if d.text.is_empty() && d.calls.is_empty() {
            return;
        }
        match self.protocol {
            Protocol::Anthropic => {
                let mut content = Vec::new();
                if !d.text.is_empty() {
                    content.push(json!({"type": "text", "text": d.text}));
                }
                for (id, name, args) in &d.calls {
                    let input: Value = serde_json::from_str(args).unwrap();
                    content.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
                }
                self.history.push(json!({"role": "assistant", "content": content}));
            }
            Protocol::OpenaiChat => {
                let mut m = json!({"role": "assistant", "content": if d.text.is_empty() { Value::Null } else { json!(d.text) }});
                if !d.calls.is_empty() {
                    m["tool_calls"] = d
                        .calls
                        .iter()
                        .map(|(id, name, args)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}}))
                        .collect();
                }
                self.history.push(m);
            }
            Protocol::OpenaiResponses => {
                if !d.text.is_empty() {
                    self.history.push(json!({"type": "message", "role": "assistant",
                        "content": [{"type": "output_text", "text": d.text}]}));
                }
                for (id, name, args) in &d.calls {
                    self.history.push(
                        json!({"type": "function_call", "call_id": id, "name": name, "arguments": args}),
                    );
                }
            }
        }
    }

    /// Appends one tool result per `(call id, is_error)`.
    fn push_results(&mut self, results: &[(String, bool)]) {
        match self.protocol {
            Protocol::Anthropic => {
                let blocks: Vec<Value> = results
                    .iter()
                    .map(|(id, is_error)| json!({"type": "tool_result", "tool_use_id": id, "content": "output", "is_error": is_error}))
                    .collect();
                self.history.push(json!({"role": "user", "content": blocks}));
            }
            Protocol::OpenaiChat => {
                for (id, _) in results {
                    self.history.push(json!({"role": "tool", "tool_call_id": id, "content": "output"}));
                }
            }
            Protocol::OpenaiResponses => {
                for (id, _) in results {
                    self.history
                        .push(json!({"type": "function_call_output", "call_id": id, "output": "output"}));
                }
            }
        }
    }
}

/// Plays turns `0..until` of `case`, checking each answer against the case; results echo `expect`.
async fn play(client: &mut Client, case: &ReplayCase, until: usize) {
    for (n, turn) in case.turns.iter().enumerate().take(until) {
        if let Some(injection) = &turn.user_injection {
            client.push_user(&format!("Stop hook feedback:\n{injection}"));
        }
        let (status, body) = client.send().await;
        assert_eq!(status, 200, "{} turn {n} over {:?}: {body}", case.id, client.protocol);
        let d = decode(client.protocol, &body);
        assert_eq!(d.text, turn.text, "{} turn {n}", case.id);
        let expected_calls: Vec<(String, String, Value)> =
            turn.calls.iter().map(|c| (c.id.clone(), c.name.clone(), c.args.clone())).collect();
        let got_calls: Vec<(String, String, Value)> = d
            .calls
            .iter()
            .map(|(id, name, args)| (id.clone(), name.clone(), serde_json::from_str(args).unwrap()))
            .collect();
        assert_eq!(got_calls, expected_calls, "{} turn {n}", case.id);
        let stop = match (client.protocol, turn.calls.is_empty()) {
            (Protocol::Anthropic, true) => "end_turn",
            (Protocol::Anthropic, false) => "tool_use",
            (Protocol::OpenaiChat, true) => "stop",
            (Protocol::OpenaiChat, false) => "tool_calls",
            (Protocol::OpenaiResponses, _) => "response.completed",
        };
        assert_eq!(d.stop, stop);
        if client.protocol == Protocol::Anthropic {
            for e in parse_sse(&body) {
                let v = e.json();
                if v["delta"]["type"] == "input_json_delta" {
                    let len = v["delta"]["partial_json"].as_str().unwrap().chars().count();
                    assert!((2..=40).contains(&len), "argument piece of {len} characters");
                }
            }
        }
        client.push_assistant(&d);
        if !turn.calls.is_empty() {
            let results: Vec<(String, bool)> =
                turn.calls.iter().map(|c| (c.id.clone(), c.expect == "error")).collect();
            client.push_results(&results);
        }
    }
}

fn assert_clean_finish(stats: &Stats, case: &ReplayCase, protocol: Protocol) {
    let ctx = format!("{} over {protocol:?}: {stats:?}", case.id);
    assert!(stats.done, "{ctx}");
    assert_eq!(stats.turns_served, case.turns.len(), "{ctx}");
    assert_eq!(stats.pairing_errors, 0, "{ctx}");
    assert_eq!(stats.extra_requests, 0, "{ctx}");
    assert!(stats.errors.is_empty(), "{ctx}");
    assert!(stats.expect_mismatches.is_empty(), "{ctx}");
    assert_eq!(stats.requests, case.turns.len(), "{ctx}");
}

async fn play_whole_case(id: &str) {
    let case = load(id);
    for protocol in ALL {
        let server = MockServer::start(Mode::Replay(case.clone())).await.unwrap();
        let mut client = Client::new(protocol, &server.url(), &case.prompt);
        play(&mut client, &case, case.turns.len()).await;
        assert_clean_finish(&server.stats(), &case, protocol);
    }
}

#[tokio::test]
async fn r2_parallel_calls_and_stop_hooks_replay_over_every_protocol() {
    play_whole_case("R2").await;
}

#[tokio::test]
async fn r21_chat_with_empty_final_answer_replays_over_every_protocol() {
    play_whole_case("R21").await;
}

#[tokio::test]
async fn every_case_replays_cleanly_over_every_protocol() {
    let dir = case_path("R1").parent().unwrap().to_path_buf();
    let mut ids: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('R') && n.ends_with(".json"))
        .map(|n| n.trim_end_matches(".json").to_string())
        .collect();
    ids.sort();
    assert!(ids.len() >= 16, "{ids:?}");
    for id in ids {
        play_whole_case(&id).await;
    }
}

#[tokio::test]
async fn a_request_after_the_empty_final_answer_is_replay_exhausted() {
    let case = load("R21");
    for protocol in ALL {
        let server = MockServer::start(Mode::Replay(case.clone())).await.unwrap();
        let mut client = Client::new(protocol, &server.url(), &case.prompt);
        play(&mut client, &case, case.turns.len()).await;
        // A retry of the final request is served again…
        let (status, _) = client.send().await;
        assert_eq!(status, 200);
        // …but a longer conversation with the same number of assistant turns is past the end.
        client.push_user("one more thing");
        let (status, body) = client.send().await;
        assert_eq!(status, 400, "{protocol:?}: {body}");
        let err: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(err["error"]["type"], "replay_exhausted");
        let stats = server.stats();
        assert_eq!((stats.turns_served, stats.extra_requests, stats.done), (3, 1, true));
    }
}

#[tokio::test]
async fn a_missing_tool_result_gets_the_providers_pairing_error() {
    let case = load("R2");
    // Turn 1 reads two files in parallel; answer only the first.
    let (first, second) = (&case.turns[1].calls[0].id, &case.turns[1].calls[1].id);
    for protocol in ALL {
        let server = MockServer::start(Mode::Replay(case.clone())).await.unwrap();
        let mut client = Client::new(protocol, &server.url(), &case.prompt);
        play(&mut client, &case, 1).await;
        let (status, body) = client.send().await;
        assert_eq!(status, 200);
        client.push_assistant(&decode(protocol, &body));
        client.push_results(&[(first.clone(), false)]);
        let (status, body) = client.send().await;
        assert_eq!(status, 400, "{protocol:?}");
        let err: Value = serde_json::from_str(&body).unwrap();
        match protocol {
            Protocol::Anthropic => {
                assert_eq!(err["type"], "error");
                assert_eq!(err["error"]["type"], "invalid_request_error");
                assert_eq!(
                    err["error"]["message"],
                    format!(
                        "messages.3: `tool_use` ids were found without `tool_result` blocks immediately after: {second}. Each `tool_use` block must have a corresponding `tool_result` block in the next message."
                    )
                );
            }
            Protocol::OpenaiChat => {
                assert_eq!(err["error"]["type"], "invalid_request_error");
                assert_eq!(
                    err["error"]["message"],
                    format!(
                        "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {second}"
                    )
                );
                assert_eq!(err["error"]["code"], Value::Null);
            }
            Protocol::OpenaiResponses => {
                assert_eq!(
                    err["error"]["message"],
                    format!("No tool output found for function call {second}.")
                );
                assert_eq!(err["error"]["param"], "input");
            }
        }
        let stats = server.stats();
        assert_eq!(stats.pairing_errors, 1, "{protocol:?}");
        assert_eq!(stats.turns_served, 2);
    }
}

#[tokio::test]
async fn a_result_for_an_unknown_call_is_a_pairing_error_too() {
    let case = load("R17");
    for protocol in ALL {
        let server = MockServer::start(Mode::Replay(case.clone())).await.unwrap();
        let mut client = Client::new(protocol, &server.url(), &case.prompt);
        play(&mut client, &case, 1).await;
        client.push_results(&[("toolu_invented".to_string(), false)]);
        let (status, body) = client.send().await;
        assert_eq!(status, 400, "{protocol:?}");
        assert!(body.contains("toolu_invented") || protocol == Protocol::OpenaiChat, "{body}");
        assert_eq!(server.stats().pairing_errors, 1);
    }
}

#[tokio::test]
async fn divergences_are_400_replay_divergence_with_a_json_diagnostic() {
    let case = load("R2");
    for protocol in ALL {
        let server = MockServer::start(Mode::Replay(case.clone())).await.unwrap();
        // Wrong prompt.
        let client = Client::new(protocol, &server.url(), "Do something else entirely.");
        let (status, body) = client.send().await;
        assert_eq!(status, 400);
        let err: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(err["error"]["type"], "replay_divergence");
        let diag: Value = serde_json::from_str(err["error"]["message"].as_str().unwrap()).unwrap();
        assert_eq!(diag["turn"], 0);
        assert_eq!(diag["kind"], "prompt_missing");
        assert_eq!(diag["expected"], case.prompt.split_whitespace().collect::<Vec<_>>().join(" "));
        // The prompt with different whitespace is fine.
        let spaced = case.prompt.replace(' ', "  \n ");
        let client = Client::new(protocol, &server.url(), &format!("Task:\n{spaced}\n"));
        assert_eq!(client.send().await.0, 200);
        // A missing stop-hook injection (turn 4 needs one).
        let mut client = Client::new(protocol, &server.url(), &case.prompt);
        play(&mut client, &case, 4).await;
        let (status, body) = client.send().await;
        assert_eq!(status, 400);
        let err: Value = serde_json::from_str(&body).unwrap();
        let diag: Value = serde_json::from_str(err["error"]["message"].as_str().unwrap()).unwrap();
        assert_eq!((diag["turn"].clone(), diag["kind"].clone()), (json!(4), json!("user_injection_missing")));
        let stats = server.stats();
        assert_eq!(stats.errors.len(), 2);
        assert_eq!(stats.pairing_errors, 0);
    }
}

#[tokio::test]
async fn a_tool_the_turn_needs_must_be_advertised() {
    let case = load("R2");
    let server = MockServer::start(Mode::Replay(case.clone())).await.unwrap();
    let client = Client::new(Protocol::Anthropic, &server.url(), &case.prompt);
    let mut body = client.body(true);
    body["tools"] = json!([{"name": "read_file", "input_schema": {"type": "object"}}]);
    let (status, text) = client.send_body(&body).await;
    assert_eq!(status, 400);
    assert!(text.contains("tool_not_advertised") && text.contains("glob"), "{text}");
}

#[tokio::test]
async fn side_requests_without_tools_get_canned_text_and_do_not_count() {
    let case = load("R2");
    for protocol in ALL {
        let server = MockServer::start(Mode::Replay(case.clone())).await.unwrap();
        let client = Client::new(protocol, &server.url(), "Write a title for this session.");
        let (status, body) = client.send_body(&client.body(false)).await;
        assert_eq!(status, 200);
        assert!(!decode(protocol, &body).text.is_empty());
        let stats = server.stats();
        assert_eq!((stats.requests, stats.turns_served, stats.done), (1, 0, false));
        assert!(stats.errors.is_empty());
    }
}

#[tokio::test]
async fn anthropic_is_error_that_contradicts_expect_is_reported_not_rejected() {
    let case = load("R2");
    let server = MockServer::start(Mode::Replay(case.clone())).await.unwrap();
    let mut client = Client::new(Protocol::Anthropic, &server.url(), &case.prompt);
    play(&mut client, &case, 1).await;
    let (_, body) = client.send().await;
    client.push_assistant(&decode(Protocol::Anthropic, &body));
    // Both reads of turn 1 expect ok; report the first as an error.
    let calls = &case.turns[1].calls;
    client.push_results(&[(calls[0].id.clone(), true), (calls[1].id.clone(), false)]);
    let (status, _) = client.send().await;
    assert_eq!(status, 200);
    let stats = server.stats();
    assert_eq!(stats.expect_mismatches.len(), 1);
    assert_eq!(stats.expect_mismatches[0]["call_id"], calls[0].id.as_str());
    assert_eq!(stats.expect_mismatches[0]["is_error"], true);
    assert_eq!(stats.expect_mismatches[0]["turn"], 1);
}

#[tokio::test]
async fn non_streaming_replay_requests_get_json() {
    let case = load("R17");
    let server = MockServer::start(Mode::Replay(case.clone())).await.unwrap();
    let client = Client::new(Protocol::OpenaiChat, &server.url(), &case.prompt);
    let mut body = client.body(true);
    body["stream"] = json!(false);
    let (status, text) = client.send_body(&body).await;
    assert_eq!(status, 200);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["choices"][0]["message"]["tool_calls"][0]["id"], case.turns[0].calls[0].id.as_str());
    assert_eq!(v["choices"][0]["finish_reason"], "tool_calls");
}
