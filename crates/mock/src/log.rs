//! The request log and the stats object.
//!
//! Every model request is recorded when it arrives ([`RequestLog::begin`]), gets its status when the response
//! is decided ([`RequestLog::set_status`]) and its end time when the body stream ends or is dropped
//! ([`RequestLog::finish`]); only then is it appended, as one JSON line, to the optional log file. Control
//! routes (`/_mock/…`) are not logged.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::Protocol;

/// One request the server received, as kept in memory and written to the log file.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct LoggedRequest {
    /// Arrival order, from 0.
    pub seq: usize,
    /// HTTP method, e.g. `POST`.
    pub method: String,
    /// Request path (without the query string).
    pub path: String,
    /// The protocol the path suffix names, if any.
    pub protocol: Option<Protocol>,
    /// Request headers, lower-case names; repeated headers are joined with `", "`.
    pub headers: BTreeMap<String, String>,
    /// The parsed JSON body (`Null` if the body is not JSON).
    pub body: serde_json::Value,
    /// Milliseconds since server start when the request arrived.
    pub received_ms: f64,
    /// Wall-clock arrival time, milliseconds since the Unix epoch (for timing other processes
    /// against the server, e.g. process start → first request).
    #[serde(default)]
    pub received_unix_ms: f64,
    /// Status of the response sent.
    pub status: u16,
    /// Milliseconds since server start when the response body ended (or the connection was dropped);
    /// `None` while the body is still being written.
    pub response_end_ms: Option<f64>,
}

/// Counters of what the server did; `GET /_mock/stats`. The fields follow `shared/replay/FORMAT.md` §2.
///
/// In scripted mode `turns_served` counts consumed turns, `done` says the script is used up and
/// `extra_requests` counts requests after that. In replay mode `turns_served` counts distinct turn indices
/// served (a retried request does not count twice).
#[derive(Serialize, Deserialize, Clone, Debug, Default)]
pub struct Stats {
    /// Model requests received (side requests, errors and retries included).
    pub requests: usize,
    /// Distinct turns served.
    pub turns_served: usize,
    /// Requests rejected because tool calls and tool results did not pair (replay mode).
    pub pairing_errors: usize,
    /// Whether the final turn was served.
    pub done: bool,
    /// Requests that arrived after the end (script exhausted / replay exhausted).
    pub extra_requests: usize,
    /// One diagnostic object per rejected request: `{turn, kind, expected, got}`.
    pub errors: Vec<serde_json::Value>,
    /// Replay, Anthropic only: results whose `is_error` differs from the call's `expect`
    /// (`{turn, call_id, name, expect, is_error}`); not a divergence.
    pub expect_mismatches: Vec<serde_json::Value>,
}

/// In-memory request log with an optional JSON-lines file.
pub(crate) struct RequestLog {
    start: Instant,
    entries: Mutex<Vec<LoggedRequest>>,
    file: Option<Mutex<std::fs::File>>,
    file_path: Option<PathBuf>,
}

impl RequestLog {
    /// Opens (creating, appending) the log file if one is given.
    pub(crate) fn new(path: Option<PathBuf>) -> std::io::Result<RequestLog> {
        let file = match &path {
            Some(p) => Some(Mutex::new(std::fs::OpenOptions::new().create(true).append(true).open(p)?)),
            None => None,
        };
        Ok(RequestLog { start: Instant::now(), entries: Mutex::new(Vec::new()), file, file_path: path })
    }

    /// Milliseconds since the server started.
    pub(crate) fn now_ms(&self) -> f64 {
        self.start.elapsed().as_secs_f64() * 1000.0
    }

    /// Records an arriving request; returns its `seq`.
    pub(crate) fn begin(
        &self,
        method: String,
        path: String,
        protocol: Option<Protocol>,
        headers: BTreeMap<String, String>,
        body: serde_json::Value,
    ) -> usize {
        let received_ms = self.now_ms();
        let received_unix_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |since| since.as_secs_f64() * 1000.0);
        let mut entries = lock(&self.entries);
        let seq = entries.len();
        entries.push(LoggedRequest {
            seq,
            method,
            path,
            protocol,
            headers,
            body,
            received_ms,
            received_unix_ms,
            status: 0,
            response_end_ms: None,
        });
        seq
    }

    /// Sets the status of the response to request `seq`.
    pub(crate) fn set_status(&self, seq: usize, status: u16) {
        if let Some(e) = lock(&self.entries).get_mut(seq) {
            e.status = status;
        }
    }

    /// Marks the body of request `seq` as ended and appends its line to the log file.
    pub(crate) fn finish(&self, seq: usize) {
        let end = self.now_ms();
        let line = {
            let mut entries = lock(&self.entries);
            let Some(e) = entries.get_mut(seq) else {
                return;
            };
            if e.response_end_ms.is_some() {
                return;
            }
            e.response_end_ms = Some(end);
            serde_json::to_string(e)
        };
        let Some(file) = &self.file else { return };
        match line {
            Ok(line) => {
                let mut f = lock(file);
                if let Err(err) = writeln!(f, "{line}") {
                    tracing::warn!(path = ?self.file_path, %err, "cannot append to the request log");
                }
            }
            Err(err) => tracing::warn!(%err, "cannot serialise a logged request"),
        }
    }

    /// A copy of every entry, in arrival order.
    pub(crate) fn snapshot(&self) -> Vec<LoggedRequest> {
        lock(&self.entries).clone()
    }
}

/// Locks a mutex, recovering the data if a panicking thread poisoned it (the log stays usable).
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
