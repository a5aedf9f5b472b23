//! A JSON-RPC client of `lathe serve`'s WebSocket for the tests (tokio-tungstenite), and raw
//! HTTP requests and WebSocket handshakes over loopback, whose every header the test chooses.

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// One WebSocket client speaking JSON-RPC.
pub struct Rpc {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    next: u64,
    /// Every notification and request received so far, in order.
    pub seen: Vec<Value>,
}

impl Rpc {
    /// Connects to `/acp` with `token` as the `bearer.` subprotocol.
    pub async fn connect(port: u16, token: &str) -> Rpc {
        let mut request = format!("ws://127.0.0.1:{port}/acp").into_client_request().expect("request");
        let protocols = format!("lathe.acp, bearer.{token}").parse().expect("header");
        request.headers_mut().insert("sec-websocket-protocol", protocols);
        let (ws, response) = tokio_tungstenite::connect_async(request).await.expect("handshake");
        assert_eq!(response.headers()["sec-websocket-protocol"], "lathe.acp");
        Rpc { ws, next: 0, seen: Vec::new() }
    }

    /// The socket itself, to read it raw.
    pub fn socket(&mut self) -> &mut WebSocketStream<MaybeTlsStream<TcpStream>> {
        &mut self.ws
    }

    /// Sends one message.
    pub async fn send(&mut self, message: Value) {
        self.ws.send(Message::text(message.to_string())).await.expect("send");
    }

    /// The next message (within 60 s: a loaded machine may starve the server for a while).
    pub async fn next(&mut self) -> Value {
        loop {
            let message = tokio::time::timeout(Duration::from_secs(60), self.ws.next())
                .await
                .expect("a message within 60 s")
                .expect("open")
                .expect("message");
            if let Message::Text(text) = message {
                return serde_json::from_str(text.as_str()).expect("json");
            }
        }
    }

    /// Calls `method`; returns the whole response (`result` or `error`). What comes before it is
    /// kept in `seen`.
    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        loop {
            let message = self.next().await;
            if message.get("method").is_none() && message["id"] == id {
                return message;
            }
            self.seen.push(message);
        }
    }

    /// Reads until a message matches `done`; returns it (kept in `seen` too).
    pub async fn until(&mut self, done: impl Fn(&Value) -> bool) -> Value {
        loop {
            let message = self.next().await;
            self.seen.push(message.clone());
            if done(&message) {
                return message;
            }
        }
    }
}

/// The `_meta.lathe.seq` of a logged notification.
pub fn seq(message: &Value) -> Option<u64> {
    message.pointer("/params/_meta/lathe/seq").and_then(Value::as_u64)
}

/// A raw HTTP/1.1 request to the server; the status and the response's head (lower-cased).
pub async fn http(port: u16, method: &str, path: &str, headers: &[(&str, &str)]) -> (u16, String, String) {
    let mut request = format!("{method} {path} HTTP/1.1\r\n");
    if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("connection")) {
        request.push_str("Connection: close\r\n");
    }
    if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("host")) {
        request.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.expect("connect");
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut response = Vec::new();
    // A WebSocket upgrade stays open: read the head only.
    let _ = tokio::time::timeout(Duration::from_secs(5), async {
        let mut buffer = [0u8; 4096];
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(read) => response.extend_from_slice(&buffer[..read]),
            }
            if response.windows(4).any(|w| w == b"\r\n\r\n") && response.starts_with(b"HTTP/1.1 101") {
                break;
            }
        }
    })
    .await;
    let text = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split_whitespace().nth(1).and_then(|code| code.parse().ok()).unwrap_or(0);
    (status, head.to_ascii_lowercase(), body.to_string())
}

/// The headers of a WebSocket handshake (RFC 6455 §4.1) to `/acp`, plus `extra`.
pub fn upgrade<'a>(extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut headers = vec![
        ("Upgrade", "websocket"),
        ("Connection", "Upgrade"),
        ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
        ("Sec-WebSocket-Version", "13"),
    ];
    headers.extend_from_slice(extra);
    headers
}
