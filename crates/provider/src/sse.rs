//! From response body bytes to [`ModelEvent`]s: SSE framing (eventsource-stream), JSON parsing,
//! and the protocol-neutral guarantees of a model stream.
//!
//! Flow: body chunks → `with_final_blank_line` (a pending event at EOF is dispatched, as the
//! cassette corpus requires; eventsource-stream alone would drop it) → eventsource-stream framing
//! (LF, CRLF and CR line endings, comments, multi-line data) → `StreamDecoder`, which skips
//! `[DONE]`, parses each event's JSON, hands it to the protocol's `WireDecoder`, and makes sure the
//! output ends with exactly one `Stop` or `Error`: a malformed event, a transport failure, an empty
//! or non-SSE body, or a stream that ends without its terminal event all become a typed error (a
//! body that stops in the middle of an event is an `IncompleteStream`, like any other cut stream,
//! not a decode error).
//!
//! The same `decode_stream` serves the HTTP client and the synchronous [`crate::decode_bytes`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures::{Stream, StreamExt};
use lathe_protocol::{ModelEvent, ProviderError};
use serde_json::Value;

use crate::config::Protocol;
use crate::error::{excerpt, parse_error_object, stream_error};

/// Bytes of the body head kept for error descriptions (a non-SSE 200 body is quoted from it).
const HEAD_BYTES: usize = 4096;

/// One wire protocol's event decoder. It sees every SSE event whose data is JSON, in order, and
/// pushes normalised events; it emits a terminal event (`Stop` / `Error`) when the protocol says
/// the response is over, or from [`WireDecoder::on_eof`].
pub(crate) trait WireDecoder: Send {
    /// One event: its SSE `event:` name (`message` when absent) and its parsed data.
    fn on_event(&mut self, name: &str, data: Value, out: &mut Vec<ModelEvent>);
    /// The body ended before a terminal event; emit the terminal event the protocol implies.
    fn on_eof(&mut self, out: &mut Vec<ModelEvent>);
    /// A `data: [DONE]` sentinel arrived. It is skipped by default; a protocol whose response is
    /// already complete may end the stream here instead of waiting for the connection to close.
    fn on_done(&mut self, _out: &mut Vec<ModelEvent>) {}
}

/// The decoder for `protocol`.
fn wire_decoder(protocol: Protocol) -> Box<dyn WireDecoder> {
    match protocol {
        Protocol::Anthropic => Box::new(crate::anthropic::stream::AnthropicDecoder::default()),
        Protocol::OpenAiChat => Box::new(crate::openai_chat::stream::ChatDecoder::default()),
        Protocol::OpenAiResponses => Box::new(crate::responses::stream::ResponsesDecoder::default()),
    }
}

/// Protocol-neutral stream state: terminal bookkeeping and the body head for error excerpts.
pub(crate) struct StreamDecoder {
    wire: Box<dyn WireDecoder>,
    done: bool,
    events: usize,
    head: Arc<Mutex<Head>>,
    /// Set once the body has ended: an event dispatched after that is the body's unterminated
    /// tail, and invalid JSON there means the connection closed mid-event.
    body_ended: Arc<AtomicBool>,
}

/// The first bytes of the body and its total length.
#[derive(Default)]
struct Head {
    bytes: Vec<u8>,
    total: usize,
}

impl StreamDecoder {
    fn new(protocol: Protocol, head: Arc<Mutex<Head>>, body_ended: Arc<AtomicBool>) -> Self {
        StreamDecoder { wire: wire_decoder(protocol), done: false, events: 0, head, body_ended }
    }

    /// Whether the terminal event has been emitted.
    fn is_done(&self) -> bool {
        self.done
    }

    /// Handles one framed SSE event.
    fn event(&mut self, event: &Event, out: &mut Vec<ModelEvent>) {
        if self.done {
            return;
        }
        self.events += 1;
        let data = event.data.trim();
        if data == "[DONE]" {
            let start = out.len();
            self.wire.on_done(out);
            self.seal(start, out);
            return;
        }
        if data.is_empty() {
            return;
        }
        match serde_json::from_str::<Value>(data) {
            Ok(json) => {
                let start = out.len();
                self.wire.on_event(&event.event, json, out);
                self.seal(start, out);
            }
            // The body ended inside this event: the connection closed mid-stream.
            Err(err) if self.body_ended.load(Ordering::SeqCst) => self.fail(
                ProviderError::IncompleteStream {
                    detail: format!(
                        "the stream ended in the middle of an event ({err}): {}",
                        excerpt(data.as_bytes())
                    ),
                },
                out,
            ),
            Err(err) => self.fail(
                ProviderError::Decode {
                    detail: format!(
                        "event {:?} carries invalid JSON ({err}): {}",
                        event.event,
                        excerpt(data.as_bytes())
                    ),
                },
                out,
            ),
        }
    }

    /// Ends the stream with `error` (unless it already ended).
    fn fail(&mut self, error: ProviderError, out: &mut Vec<ModelEvent>) {
        if !self.done {
            self.done = true;
            out.push(ModelEvent::Error { error });
        }
    }

    /// The body ended.
    fn eof(&mut self, out: &mut Vec<ModelEvent>) {
        if self.done {
            return;
        }
        if self.events == 0 {
            let error = self.describe_eventless_body();
            self.fail(error, out);
            return;
        }
        let start = out.len();
        self.wire.on_eof(out);
        self.seal(start, out);
        if !self.done {
            self.fail(
                ProviderError::IncompleteStream {
                    detail: "the stream ended without a terminal event".into(),
                },
                out,
            );
        }
    }

    /// A 200 body without a single SSE event: empty, a JSON error object, or something else.
    fn describe_eventless_body(&self) -> ProviderError {
        let (bytes, total) = match self.head.lock() {
            Ok(head) => (head.bytes.clone(), head.total),
            Err(_) => (Vec::new(), 0),
        };
        if bytes.iter().all(u8::is_ascii_whitespace) && total == bytes.len() {
            return ProviderError::IncompleteStream { detail: "HTTP 200 with an empty body".into() };
        }
        if total == bytes.len()
            && let Some((kind, message)) =
                serde_json::from_slice::<Value>(&bytes).ok().as_ref().and_then(parse_error_object)
        {
            return stream_error(kind, message);
        }
        ProviderError::Decode {
            detail: format!(
                "expected a server-sent event stream, got {total} bytes without an event: {}",
                excerpt(&bytes)
            ),
        }
    }

    /// Marks the stream done if `out[start..]` holds a terminal event, dropping anything after it.
    fn seal(&mut self, start: usize, out: &mut Vec<ModelEvent>) {
        if let Some(position) = out[start..]
            .iter()
            .position(|event| matches!(event, ModelEvent::Stop { .. } | ModelEvent::Error { .. }))
        {
            out.truncate(start + position + 1);
            self.done = true;
        }
    }
}

/// Re-cuts body chunks after every line ending, so eventsource-stream's buffer only ever holds the
/// current line (its per-line buffer shift would otherwise be quadratic in the chunk size).
fn line_sized<S>(body: S) -> impl Stream<Item = Result<Bytes, ProviderError>>
where
    S: Stream<Item = Result<Bytes, ProviderError>>,
{
    body.flat_map(|chunk| {
        let pieces: Vec<Result<Bytes, ProviderError>> = match chunk {
            Ok(bytes) => {
                let mut pieces = Vec::new();
                let mut start = 0;
                for (position, byte) in bytes.iter().enumerate() {
                    if *byte == b'\n' || *byte == b'\r' {
                        pieces.push(Ok(bytes.slice(start..=position)));
                        start = position + 1;
                    }
                }
                if start < bytes.len() {
                    pieces.push(Ok(bytes.slice(start..)));
                }
                pieces
            }
            Err(error) => vec![Err(error)],
        };
        futures::stream::iter(pieces)
    })
}

/// Appends a blank line at EOF so that a last event without its terminating blank line is still
/// dispatched (the SSE framing itself is eventsource-stream's); `ended` is set when it is.
fn with_final_blank_line<S>(
    body: S,
    ended: Arc<AtomicBool>,
) -> impl Stream<Item = Result<Bytes, ProviderError>>
where
    S: Stream<Item = Result<Bytes, ProviderError>>,
{
    body.chain(futures::stream::once(async move {
        ended.store(true, Ordering::SeqCst);
        Ok(Bytes::from_static(b"\n\n"))
    }))
}

/// Decodes a response body (the status was 2xx) into model events ending with exactly one `Stop`
/// or `Error`. Transport errors in `body` end the stream with that error.
pub(crate) fn decode_stream<S>(protocol: Protocol, body: S) -> impl Stream<Item = ModelEvent> + Send
where
    S: Stream<Item = Result<Bytes, ProviderError>> + Send + 'static,
{
    let head = Arc::new(Mutex::new(Head::default()));
    let recorder = Arc::clone(&head);
    let recorded = body.map(move |chunk| {
        if let (Ok(bytes), Ok(mut head)) = (&chunk, recorder.lock()) {
            head.total += bytes.len();
            let room = HEAD_BYTES.saturating_sub(head.bytes.len());
            head.bytes.extend_from_slice(&bytes[..bytes.len().min(room)]);
        }
        chunk
    });
    let body_ended = Arc::new(AtomicBool::new(false));
    let mut decoder = StreamDecoder::new(protocol, head, Arc::clone(&body_ended));
    async_stream::stream! {
        let mut events = Box::pin(line_sized(with_final_blank_line(recorded, body_ended)).eventsource());
        let mut out = Vec::new();
        while let Some(item) = events.next().await {
            match item {
                Ok(event) => decoder.event(&event, &mut out),
                Err(EventStreamError::Transport(error)) => decoder.fail(error, &mut out),
                Err(EventStreamError::Utf8(err)) => decoder.fail(
                    ProviderError::Decode { detail: format!("the stream is not valid UTF-8: {err}") },
                    &mut out,
                ),
                Err(EventStreamError::Parser(err)) => decoder.fail(
                    ProviderError::Decode { detail: format!("the stream is not valid SSE: {err}") },
                    &mut out,
                ),
            }
            for event in out.drain(..) {
                yield event;
            }
            if decoder.is_done() {
                break;
            }
        }
        decoder.eof(&mut out);
        for event in out.drain(..) {
            yield event;
        }
    }
}

/// Parses tool-call argument text: empty (or whitespace) is `{}`, valid JSON is itself, anything
/// else is `None` (the call was cut off and must not run).
pub(crate) fn parse_arguments(raw: &str) -> Option<Value> {
    if raw.trim().is_empty() {
        return Some(Value::Object(serde_json::Map::new()));
    }
    serde_json::from_str(raw).ok()
}

/// `value` as a `usize` index (`0` when absent or not a number).
pub(crate) fn index_of(value: Option<&Value>) -> usize {
    value.and_then(Value::as_u64).and_then(|index| usize::try_from(index).ok()).unwrap_or(0)
}

/// A non-empty string field.
pub(crate) fn non_empty<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str).filter(|text| !text.is_empty())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "sse_tests.rs"]
mod tests;
