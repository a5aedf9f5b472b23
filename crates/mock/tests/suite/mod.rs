//! Shared helpers: a plain HTTP client and a minimal SSE splitter for asserting on what the server sent.

mod cassette;
mod scripted;

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

/// POSTs JSON and returns status, headers and body text.
pub async fn post(url: &str, body: &Value) -> (u16, reqwest::header::HeaderMap, String) {
    let resp = reqwest::Client::new().post(url).json(body).send().await.unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let text = resp.text().await.unwrap();
    (status, headers, text)
}

/// The endpoint URL for a protocol on a server base URL, as the real clients build it.
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
