//! Shared helpers: a plain HTTP client and a minimal SSE splitter for asserting on what the server sent.

mod binary;
mod cassette;
mod replay;
mod scripted;

use lathe_mock::Protocol;
use pretty_assertions::assert_eq;
use serde_json::Value;

/// One parsed SSE event: the `event:` name (if any) and the `data:` text.
#[derive(Debug, Clone)]
pub struct Event {
    pub name: Option<String>,
    pub data: String,
}

impl Event {
    /// The data as JSON (panics in tests if it is not).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.data).unwrap_or_else(|e| panic!("bad JSON {:?}: {e}", self.data))
    }
}

/// Splits an SSE body (LF line endings, as the mock writes) into events.
pub fn parse_sse(body: &str) -> Vec<Event> {
    body.split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .map(|block| {
            let mut name = None;
            let mut data = Vec::new();
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("event: ") {
                    name = Some(v.to_string());
                } else if let Some(v) = line.strip_prefix("data: ") {
                    data.push(v);
                }
            }
            Event { name, data: data.join("\n") }
        })
        .collect()
}

/// A plain HTTP client. reqwest is built without a TLS crypto provider of its own (the workspace
/// installs rustls's ring provider before building clients) and panics without one, even for
/// plain-HTTP use.
pub fn http_client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

/// POSTs JSON and returns status, headers and body text.
pub async fn post(url: &str, body: &Value) -> (u16, reqwest::header::HeaderMap, String) {
    let resp = http_client().post(url).json(body).send().await.unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let text = resp.text().await.unwrap();
    (status, headers, text)
}

/// The endpoint URL for a protocol on a server base URL, as the real clients build it.
/// Polls `probe` every 5 ms until it returns a value (panics after 5 s): waits for a condition
/// instead of sleeping for a guessed time.
pub async fn eventually<T>(probe: impl Fn() -> Option<T>) -> T {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        if let Some(value) = probe() {
            return value;
        }
        assert!(std::time::Instant::now() < deadline, "condition not reached within 5 s");
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
}

pub fn endpoint(base: &str, protocol: lathe_mock::Protocol) -> String {
    match protocol {
        lathe_mock::Protocol::Anthropic => format!("{base}/v1/messages"),
        lathe_mock::Protocol::OpenaiChat => format!("{base}/v1/chat/completions"),
        lathe_mock::Protocol::OpenaiResponses => format!("{base}/v1/responses"),
    }
}

pub const ALL: [lathe_mock::Protocol; 3] = [
    lathe_mock::Protocol::Anthropic,
    lathe_mock::Protocol::OpenaiChat,
    lathe_mock::Protocol::OpenaiResponses,
];

/// A minimal request body for a protocol: one user message, one advertised tool, streaming or not.
pub fn simple_request(protocol: lathe_mock::Protocol, stream: bool) -> Value {
    use serde_json::json;
    match protocol {
        lathe_mock::Protocol::Anthropic => json!({
            "model": "claude-test", "max_tokens": 1024, "stream": stream,
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"name": "read_file", "input_schema": {"type": "object"}}]}),
        lathe_mock::Protocol::OpenaiChat => json!({
            "model": "gpt-test", "stream": stream, "stream_options": {"include_usage": true},
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}]}),
        lathe_mock::Protocol::OpenaiResponses => json!({
            "model": "gpt-test", "stream": stream,
            "input": [{"role": "user", "content": "hi"}],
            "tools": [{"type": "function", "name": "read_file", "parameters": {"type": "object"}}]}),
    }
}

/// What a stream says, decoded the simple way (enough to check the encoders).
#[derive(Debug, PartialEq, Default)]
pub struct Decoded {
    pub text: String,
    pub thinking: String,
    pub signature: String,
    /// (id, name, argument text)
    pub calls: Vec<(String, String, String)>,
    pub stop: String,
}

pub fn decode(protocol: Protocol, body: &str) -> Decoded {
    let mut d = Decoded::default();
    let events = parse_sse(body);
    match protocol {
        Protocol::Anthropic => {
            for e in &events {
                let v = e.json();
                assert_eq!(e.name.as_deref(), v["type"].as_str(), "event name matches type");
                match v["type"].as_str().unwrap() {
                    "content_block_start" if v["content_block"]["type"] == "tool_use" => d.calls.push((
                        v["content_block"]["id"].as_str().unwrap().into(),
                        v["content_block"]["name"].as_str().unwrap().into(),
                        String::new(),
                    )),
                    "content_block_delta" => match v["delta"]["type"].as_str().unwrap() {
                        "text_delta" => d.text += v["delta"]["text"].as_str().unwrap(),
                        "thinking_delta" => d.thinking += v["delta"]["thinking"].as_str().unwrap(),
                        "signature_delta" => d.signature += v["delta"]["signature"].as_str().unwrap(),
                        "input_json_delta" => {
                            d.calls.last_mut().unwrap().2 += v["delta"]["partial_json"].as_str().unwrap()
                        }
                        other => panic!("unexpected delta {other}"),
                    },
                    "message_delta" => d.stop = v["delta"]["stop_reason"].as_str().unwrap().into(),
                    _ => {}
                }
            }
        }
        Protocol::OpenaiChat => {
            assert_eq!(events.last().unwrap().data, "[DONE]");
            for e in &events[..events.len() - 1] {
                let v = e.json();
                let Some(choice) = v["choices"].get(0) else { continue };
                let delta = &choice["delta"];
                d.text += delta["content"].as_str().unwrap_or("");
                d.thinking += delta["reasoning_content"].as_str().unwrap_or("");
                for tc in delta["tool_calls"].as_array().into_iter().flatten() {
                    let i = tc["index"].as_u64().unwrap() as usize;
                    if i == d.calls.len() {
                        d.calls.push((
                            tc["id"].as_str().expect("first delta has the id").into(),
                            tc["function"]["name"].as_str().expect("first delta has the name").into(),
                            String::new(),
                        ));
                    }
                    d.calls[i].2 += tc["function"]["arguments"].as_str().unwrap();
                }
                if let Some(f) = choice["finish_reason"].as_str() {
                    d.stop = f.into();
                }
            }
        }
        Protocol::OpenaiResponses => {
            for e in &events {
                let v = e.json();
                assert_eq!(e.name.as_deref(), v["type"].as_str(), "event name matches type");
                match v["type"].as_str().unwrap() {
                    "response.output_text.delta" => d.text += v["delta"].as_str().unwrap(),
                    "response.reasoning_summary_text.delta" => d.thinking += v["delta"].as_str().unwrap(),
                    "response.output_item.done" if v["item"]["type"] == "reasoning" => {
                        d.signature = v["item"]["encrypted_content"].as_str().unwrap().into()
                    }
                    "response.output_item.added" if v["item"]["type"] == "function_call" => d.calls.push((
                        v["item"]["call_id"].as_str().unwrap().into(),
                        v["item"]["name"].as_str().unwrap().into(),
                        String::new(),
                    )),
                    "response.function_call_arguments.delta" => {
                        d.calls.last_mut().unwrap().2 += v["delta"].as_str().unwrap()
                    }
                    "response.completed" | "response.incomplete" => {
                        d.stop = v["type"].as_str().unwrap().into()
                    }
                    _ => {}
                }
            }
        }
    }
    d
}
