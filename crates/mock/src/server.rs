//! The HTTP server: binding, routing, request logging and response bodies.
//!
//! Flow of a request: read the whole body → control route (`GET /_mock/…`)? answer from the log or stats →
//! else log the request → ask the mode for an [`Answer`] (scripted, replay) or a recorded body (cassette) →
//! wait `first_byte_delay_ms` → send headers → write the body as a stream, one chunk per SSE event with
//! `chunk_delay_ms` between them, aborting the connection after `drop_after_events` events → when the body
//! stream ends or is dropped, stamp `response_end_ms` and append the log line.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use axum::response::Response;
use bytes::Bytes;
use serde_json::{Value, json};

use crate::cassette::{CassetteSet, file_of_path};
use crate::log::{LoggedRequest, RequestLog, Stats, lock};
use crate::replay::ReplayEngine;
use crate::reply::{Answer, Delivery, ErrorReply};
use crate::script::{Script, carries_image};
use crate::window;
use crate::wire::{self, RequestShape, SseEvent};
use crate::{Mode, Protocol};

/// Pause before aborting a dropped stream, so what was sent reaches the client first.
const DROP_FLUSH_MS: u64 = 20;

/// Largest request body accepted (64 MiB).
const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// A running mock server on 127.0.0.1. Dropping it stops accepting connections.
pub struct MockServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for MockServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockServer").field("addr", &self.addr).finish_non_exhaustive()
    }
}

struct Shared {
    log: RequestLog,
    stats: Mutex<Stats>,
    engine: Engine,
}

enum Engine {
    Scripted { script: Box<Script>, next: Mutex<usize>, model_next: Mutex<BTreeMap<String, usize>> },
    Cassette(CassetteSet),
    Replay(Box<ReplayEngine>),
}

impl MockServer {
    /// Binds 127.0.0.1 on an ephemeral port and serves in the background on the current tokio runtime.
    ///
    /// # Errors
    /// The bind error.
    pub async fn start(mode: Mode) -> std::io::Result<MockServer> {
        MockServer::start_with(mode, 0, None).await
    }

    /// Binds 127.0.0.1:`port` (0 = pick one) and serves in the background, appending every request as a JSON
    /// line to `log` when given.
    ///
    /// # Errors
    /// The bind error, or the error opening `log` for appending.
    pub async fn start_with(mode: Mode, port: u16, log: Option<PathBuf>) -> std::io::Result<MockServer> {
        let log = RequestLog::new(log)?;
        let engine = match mode {
            Mode::Scripted(script) => Engine::Scripted {
                script: Box::new(script),
                next: Mutex::new(0),
                model_next: Mutex::new(BTreeMap::new()),
            },
            Mode::Cassette(set) => Engine::Cassette(set),
            Mode::Replay(case) => Engine::Replay(Box::new(ReplayEngine::new(case))),
        };
        let shared = Arc::new(Shared { log, stats: Mutex::new(Stats::default()), engine });
        let listener = tokio::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, port)).await?;
        let addr = listener.local_addr()?;
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let task = tokio::spawn(async move {
            if let Err(err) = axum::serve(listener, app).await {
                tracing::error!(%err, "lathe-mock server stopped");
            }
        });
        tracing::debug!(%addr, "lathe-mock listening");
        Ok(MockServer { addr, shared, task })
    }

    /// The base URL, `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The bound port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Every model request so far, in arrival order.
    pub fn requests(&self) -> Vec<LoggedRequest> {
        self.shared.log.snapshot()
    }

    /// The stats so far (see [`Stats`]).
    pub fn stats(&self) -> Stats {
        lock(&self.shared.stats).clone()
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What to send.
enum Outcome {
    /// SSE events.
    Stream(Vec<SseEvent>, Delivery),
    /// A complete body.
    Body { status: u16, headers: Vec<(String, String)>, body: Bytes, first_byte_delay_ms: u64 },
    /// SSE bytes recorded verbatim, split at event boundaries.
    Recorded { status: u16, headers: Vec<(String, String)>, body: Bytes },
}

async fn handle(State(shared): State<Arc<Shared>>, req: Request) -> Response {
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let headers = header_map(req.headers());
    let body_bytes = match axum::body::to_bytes(req.into_body(), MAX_BODY_BYTES).await {
        Ok(b) => b,
        Err(err) => {
            return json_response(
                413,
                &json!({"error": {"type": "request_too_large", "message": err.to_string()}}),
            );
        }
    };
    if method == Method::GET && path == "/_mock/stats" {
        let stats = lock(&shared.stats).clone();
        return json_response(200, &serde_json::to_value(stats).unwrap_or(Value::Null));
    }
    if method == Method::GET && path == "/_mock/requests" {
        return json_response(200, &serde_json::to_value(shared.log.snapshot()).unwrap_or(Value::Null));
    }
    let body: Value = serde_json::from_slice(&body_bytes).unwrap_or(Value::Null);
    let protocol = Protocol::from_path(&path);
    let seq = shared.log.begin(method.to_string(), path.clone(), protocol, headers, body.clone());
    let outcome = decide(&shared, &method, &path, protocol, &body, seq);
    respond(shared, seq, outcome).await
}

fn decide(
    shared: &Shared,
    method: &Method,
    path: &str,
    protocol: Option<Protocol>,
    body: &Value,
    seq: usize,
) -> Outcome {
    let Some(protocol) = protocol.filter(|_| method == Method::POST) else {
        return plain_error(404, &format!("lathe-mock: no route for {method} {path}"));
    };
    match &shared.engine {
        Engine::Cassette(set) => {
            lock(&shared.stats).requests += 1;
            let Some(file) = file_of_path(path) else {
                return plain_error(
                    404,
                    &format!("lathe-mock cassette mode: post to /cassette/<file>{}", protocol.path_suffix()),
                );
            };
            let Some(entry) = set.get(&file) else {
                return plain_error(404, &format!("lathe-mock: no cassette named `{file}` in the manifest"));
            };
            let headers: Vec<(String, String)> =
                entry.headers.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            let is_sse =
                entry.headers.get("content-type").is_some_and(|v| v.starts_with("text/event-stream"));
            if is_sse && !entry.headers.contains_key("content-length") {
                Outcome::Recorded { status: entry.status, headers, body: entry.body.clone() }
            } else {
                Outcome::Body {
                    status: entry.status,
                    headers,
                    body: entry.body.clone(),
                    first_byte_delay_ms: 0,
                }
            }
        }
        Engine::Scripted { script, next, model_next } => {
            if let Some(rejection) = script.reject_images.as_ref().filter(|_| carries_image(body)) {
                lock(&shared.stats).requests += 1;
                return encode(protocol, body, seq, Answer::Error(rejection.lower()));
            }
            if let Some(answer) = scripted_checks(script, protocol, body) {
                lock(&shared.stats).requests += 1;
                return encode(protocol, body, seq, answer);
            }
            let model = body.get("model").and_then(Value::as_str).unwrap_or_default();
            if let Some(turns) = script.model_turns.get(model) {
                lock(&shared.stats).requests += 1;
                let index = {
                    let mut next = lock(model_next);
                    let index = next.entry(model.to_string()).or_insert(0);
                    *index += 1;
                    *index - 1
                };
                let answer = match turns.get(index) {
                    Some(turn) => turn.lower(Some(model)),
                    None => {
                        lock(&shared.stats).extra_requests += 1;
                        Answer::Error(ErrorReply::bad_request(
                            "invalid_request_error",
                            "script exhausted".into(),
                        ))
                    }
                };
                return encode(protocol, body, seq, answer);
            }
            let answer = {
                let mut stats = lock(&shared.stats);
                stats.requests += 1;
                let mut next = lock(next);
                let index = *next;
                *next += 1;
                match script.turns.get(index) {
                    Some(turn) => {
                        stats.turns_served = index + 1;
                        stats.done = index + 1 == script.turns.len();
                        let mut answer = turn.lower(body.get("model").and_then(Value::as_str));
                        if let (Some(_), Answer::Reply(reply, _)) = (script.context_window, &mut answer) {
                            reply.usage.input_tokens = window::input_tokens(body);
                        }
                        if let (Some(reported), Answer::Reply(reply, _)) =
                            (script.report_input_tokens, &mut answer)
                        {
                            reply.usage.input_tokens = reported;
                        }
                        answer
                    }
                    None => {
                        stats.extra_requests += 1;
                        Answer::Error(ErrorReply::bad_request(
                            "invalid_request_error",
                            "script exhausted".into(),
                        ))
                    }
                }
            };
            encode(protocol, body, seq, answer)
        }
        Engine::Replay(engine) => {
            let answer = {
                let mut stats = lock(&shared.stats);
                stats.requests += 1;
                engine.answer(protocol, body, &mut stats)
            };
            encode(protocol, body, seq, answer)
        }
    }
}

/// The provider-side checks of scripted mode (see [`crate::window`]): an answer that consumes no turn.
fn scripted_checks(script: &Script, protocol: Protocol, body: &Value) -> Option<Answer> {
    if script.check_pairing
        && let Some(error) = window::pairing_error(protocol, body)
    {
        return Some(Answer::Error(error));
    }
    if let Some(limit) = script.context_window
        && let Some(error) = window::overflow(protocol, body, limit)
    {
        return Some(Answer::Error(error));
    }
    let side = window::side_reply(protocol, body, &script.side_replies)?;
    let turn = crate::script::ScriptTurn { text: Some(side.text.clone()), ..Default::default() };
    let mut answer = turn.lower(body.get("model").and_then(Value::as_str));
    if let Answer::Reply(reply, _) = &mut answer {
        reply.usage.input_tokens = script.report_input_tokens.unwrap_or_else(|| window::input_tokens(body));
        reply.usage.output_tokens = (side.text.len() as u64).div_ceil(window::BYTES_PER_TOKEN);
    }
    Some(answer)
}

/// Encodes an answer in the request's protocol and stream mode.
fn encode(protocol: Protocol, body: &Value, seq: usize, answer: Answer) -> Outcome {
    match answer {
        Answer::Reply(reply, delivery) => {
            let shape = RequestShape::of(body);
            if shape.stream {
                Outcome::Stream(wire::stream_events(protocol, &reply, shape, seq), delivery)
            } else {
                Outcome::Body {
                    status: 200,
                    headers: vec![("content-type".into(), "application/json".into())],
                    body: Bytes::from(wire::json_body(protocol, &reply, seq).to_string()),
                    first_byte_delay_ms: delivery.first_byte_delay_ms,
                }
            }
        }
        Answer::Error(err) => {
            let (content_type, bytes) = match &err.body {
                Some(Value::String(raw)) => ("text/html; charset=utf-8", Bytes::from(raw.clone())),
                Some(v) => ("application/json", Bytes::from(v.to_string())),
                None => ("application/json", Bytes::from(wire::error_body(protocol, &err).to_string())),
            };
            let mut headers = vec![("content-type".to_string(), content_type.to_string())];
            for (k, v) in &err.headers {
                let k = k.to_ascii_lowercase();
                headers.retain(|(name, _)| *name != k);
                headers.push((k, v.clone()));
            }
            Outcome::Body {
                status: err.status,
                headers,
                body: bytes,
                first_byte_delay_ms: err.first_byte_delay_ms,
            }
        }
    }
}

fn plain_error(status: u16, message: &str) -> Outcome {
    Outcome::Body {
        status,
        headers: vec![("content-type".into(), "application/json".into())],
        body: Bytes::from(json!({"error": {"type": "not_found_error", "message": message}}).to_string()),
        first_byte_delay_ms: 0,
    }
}

/// Stamps the end of a response body when dropped (normal end, abort, or client disconnect).
struct FinishGuard {
    shared: Arc<Shared>,
    seq: usize,
}

impl Drop for FinishGuard {
    fn drop(&mut self) {
        self.shared.log.finish(self.seq);
    }
}

async fn respond(shared: Arc<Shared>, seq: usize, outcome: Outcome) -> Response {
    let guard = FinishGuard { shared: shared.clone(), seq };
    let (status, headers, body) = match outcome {
        Outcome::Stream(events, delivery) => {
            sleep_ms(delivery.first_byte_delay_ms).await;
            let headers = vec![
                ("content-type".to_string(), "text/event-stream; charset=utf-8".to_string()),
                ("cache-control".to_string(), "no-cache".to_string()),
            ];
            let count = events.len();
            let stream = async_stream::stream! {
                let _guard = guard;
                for (i, event) in events.into_iter().enumerate() {
                    if delivery.drop_after_events == Some(i) {
                        // Let hyper flush the headers and the events so far (it flushes when the body is
                        // pending), so the client sees a stream that starts and then breaks.
                        sleep_ms(DROP_FLUSH_MS).await;
                        yield Err(std::io::Error::new(
                            std::io::ErrorKind::ConnectionAborted,
                            "lathe-mock: drop_after_events",
                        ));
                        return;
                    }
                    if i > 0 {
                        sleep_ms(delivery.chunk_delay_ms).await;
                    }
                    yield Ok::<Bytes, std::io::Error>(event.to_bytes());
                }
                // A drop count at or past the end still breaks the connection: every event arrives but the
                // body never terminates properly (a truncated stream).
                if delivery.drop_after_events.is_some_and(|n| n >= count) {
                    sleep_ms(DROP_FLUSH_MS).await;
                    yield Err(std::io::Error::new(
                        std::io::ErrorKind::ConnectionAborted,
                        "lathe-mock: drop_after_events",
                    ));
                }
            };
            (200, headers, Body::from_stream(stream))
        }
        Outcome::Recorded { status, headers, body } => {
            let chunks = split_events(&body);
            let stream = async_stream::stream! {
                let _guard = guard;
                for chunk in chunks {
                    yield Ok::<Bytes, std::io::Error>(chunk);
                }
            };
            (status, headers, Body::from_stream(stream))
        }
        Outcome::Body { status, mut headers, body, first_byte_delay_ms } => {
            sleep_ms(first_byte_delay_ms).await;
            // hyper writes content-length itself for a complete body; a recorded one that does not match the
            // bytes would corrupt the framing, so it is dropped (with a warning) rather than sent.
            headers.retain(|(k, v)| {
                if k != "content-length" {
                    return true;
                }
                if v.trim() != body.len().to_string() {
                    tracing::warn!(recorded = %v, actual = body.len(), "dropping a content-length that does not match the body");
                }
                false
            });
            // A complete body: hyper sends it with its content-length; the guard stamps the end when this
            // function returns.
            (status, headers, Body::from(body))
        }
    };
    shared.log.set_status(seq, status);
    let mut response = Response::new(body);
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let map = response.headers_mut();
    for (k, v) in headers {
        match (HeaderName::from_bytes(k.as_bytes()), HeaderValue::from_str(&v)) {
            (Ok(name), Ok(value)) => {
                map.insert(name, value);
            }
            _ => tracing::warn!(header = %k, "skipping a header that is not valid HTTP"),
        }
    }
    response
}

/// Splits recorded SSE bytes after every blank line (`\n\n`), keeping every byte.
fn split_events(body: &Bytes) -> Vec<Bytes> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i + 1 < body.len() {
        if body[i] == b'\n' && body[i + 1] == b'\n' {
            out.push(body.slice(start..i + 2));
            start = i + 2;
            i += 2;
        } else {
            i += 1;
        }
    }
    if start < body.len() {
        out.push(body.slice(start..));
    }
    out
}

async fn sleep_ms(ms: u64) {
    if ms > 0 {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
}

fn json_response(status: u16, value: &Value) -> Response {
    let mut response = Response::new(Body::from(value.to_string()));
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    response.headers_mut().insert("content-type", HeaderValue::from_static("application/json"));
    response
}

fn header_map(headers: &HeaderMap) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for (name, value) in headers {
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        out.entry(name.as_str().to_ascii_lowercase())
            .and_modify(|v| {
                v.push_str(", ");
                v.push_str(&value);
            })
            .or_insert(value);
    }
    out
}
