//! One session as `lathe serve` shares it between clients: the ACP front end's state of it
//! ([`Live`]), its event log, who watches it, the prompts waiting for their turn's end and the
//! permission prompts waiting for an answer.
//!
//! Every message about the session that any watcher gets — `session/update`s and Lathe's own
//! `_lathe/*` notifications — is a JSON-RPC notification in the log, numbered from 1 in
//! `params._meta.lathe.seq` (with `t_us`, the server's clock when it was recorded, microseconds
//! since the Unix epoch). A client that reconnects names the last number it saw and gets the rest
//! of the log; a resumed session's log starts with its conversation replayed from the ledger.
//! Permission prompts are requests to the steering clients, not log entries: one still open is
//! sent again to a steering client that attaches.

use std::collections::{BTreeSet, HashSet, VecDeque};

use axum::extract::ws::Utf8Bytes;
use serde_json::{Value, json};

use crate::acp::live::{Asked, Live};

/// A connected client's number (`c<N>` on the wire and in the ledger).
pub type ClientId = u64;

/// A permission prompt (or plan, or question) waiting for an answer.
#[derive(Debug)]
pub struct Ask {
    /// The JSON-RPC id of its `session/request_permission` (the same for every client).
    pub id: String,
    /// The prompt turn it belongs to.
    pub turn: u64,
    /// What it asked.
    pub asked: Asked,
    /// The request, serialized.
    pub frame: Utf8Bytes,
    /// The clients it was sent to: the only ones whose answer counts.
    pub sent_to: HashSet<ClientId>,
}

/// One shared session.
pub struct Room {
    /// The ACP front end's state; `prompt` is `Some` while a prompt turn runs.
    pub live: Live<()>,
    /// The clients that watch it.
    pub watchers: BTreeSet<ClientId>,
    /// The `session/prompt` requests (client, JSON-RPC id) in the order their turns run.
    pub prompts: VecDeque<(ClientId, Value)>,
    /// How many prompts after the first of `prompts` joined the running turn (sent as steering,
    /// [`lathe_protocol::AgentEvent::Steered`]): they are answered when it ends.
    pub joined: usize,
    /// Open permission prompts.
    pub asks: Vec<Ask>,
    /// The model, for the status line.
    pub model: String,
    log: Vec<Utf8Bytes>,
}

impl Room {
    /// A room for a session just opened, with an empty log.
    pub fn new(live: Live<()>) -> Room {
        Room {
            live,
            watchers: BTreeSet::new(),
            prompts: VecDeque::new(),
            joined: 0,
            asks: Vec::new(),
            model: String::new(),
            log: Vec::new(),
        }
    }

    /// Appends the notification `method` with `params` (an object) to the log, numbered; returns
    /// it serialized.
    pub fn record(&mut self, method: &str, mut params: Value) -> Utf8Bytes {
        let seq = self.log.len() as u64 + 1;
        let now_us = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_micros() as u64);
        if let Some(params) = params.as_object_mut() {
            let meta = params.entry("_meta").or_insert_with(|| json!({}));
            if let Some(meta) = meta.as_object_mut() {
                let lathe = meta.entry("lathe").or_insert_with(|| json!({}));
                if let Some(lathe) = lathe.as_object_mut() {
                    lathe.insert("seq".into(), seq.into());
                    lathe.insert("t_us".into(), now_us.into());
                }
            }
        }
        let frame =
            Utf8Bytes::from(json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string());
        self.log.push(frame.clone());
        frame
    }

    /// The number of the last entry (0: none yet).
    pub fn seq(&self) -> u64 {
        self.log.len() as u64
    }

    /// The entries after number `after`.
    pub fn since(&self, after: u64) -> Vec<Utf8Bytes> {
        let from = usize::try_from(after).unwrap_or(usize::MAX).min(self.log.len());
        self.log[from..].to_vec()
    }
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use serde_json::{Value, json};

    use super::Room;
    use crate::acp::live::Live;

    #[test]
    fn entries_are_numbered_from_one_and_replayed_after_a_number() {
        let (ops, _rx) = tokio::sync::mpsc::unbounded_channel();
        let mut room = Room::new(Live::new("s".into(), ops, "/w".into()));
        room.record("session/update", json!({"sessionId": "s", "_meta": {"lathe": {"client": "c1"}}}));
        room.record("_lathe/turn_end", json!({"sessionId": "s"}));
        assert_eq!(room.seq(), 2);
        let rest = room.since(1);
        assert_eq!(rest.len(), 1);
        let entry: Value = serde_json::from_str(rest[0].as_str()).expect("json");
        assert_eq!(entry["method"], "_lathe/turn_end");
        assert_eq!(entry["params"]["_meta"]["lathe"]["seq"], 2);
        let first: Value = serde_json::from_str(room.since(0)[0].as_str()).expect("json");
        assert_eq!(first["params"]["_meta"]["lathe"]["client"], "c1", "other meta is kept");
        assert!(room.since(9).is_empty());
    }
}
