//! The one task that owns `lathe serve`'s sessions and clients. Every client message, core event
//! and session end arrives as an [`Inbound`] on one channel and is handled in order (as in
//! `lathe acp`'s host), so what a client sees is the order the session did things in.
//!
//! Delivery never waits: each client has a bounded queue ([`QUEUE`] messages); a client whose
//! queue is full has stopped reading and is dropped (its socket closed; it may reconnect and get
//! what it missed replayed from the room's log), so it cannot stall the session or the others.
//! The JSON-RPC methods are in `rpc.rs`.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use agent_client_protocol::v1::schema as acp;
use axum::extract::ws::Utf8Bytes;
use lathe_core::host::Flags;
use lathe_protocol::{AgentEvent, AgentOp};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use super::room::{Ask, ClientId, Room};
use super::token::Role;
use crate::acp::live::Action;

/// Messages a client's queue holds before the client counts as gone.
pub const QUEUE: usize = 1024;
/// Bytes a client's queue holds (a replay counts with all its messages) before the client counts
/// as gone: 32 MiB.
pub const QUEUE_BYTES: usize = 32 << 20;

/// The bytes queued for one client and not yet written: the hub adds, the client's writer
/// subtracts.
pub type Queued = Arc<AtomicUsize>;

/// What goes to a client's socket.
#[derive(Debug)]
pub enum Outbound {
    /// One message.
    Frame(Utf8Bytes),
    /// Messages written one after another (a replay), counted as one in the queue.
    Batch(Vec<Utf8Bytes>),
}

/// Something for the hub to handle.
pub enum Inbound {
    /// A client connected with `role`; its messages go to `tx`, their bytes counted in the
    /// [`Queued`].
    Joined(ClientId, Role, mpsc::Sender<Outbound>, Queued),
    /// A client's JSON-RPC message (text of one WebSocket message), holding one of the client's
    /// [`socket::IN_FLIGHT`](super::socket) permits until the hub has handled it.
    Message(ClientId, String, tokio::sync::OwnedSemaphorePermit),
    /// A client's socket closed.
    Left(ClientId),
    /// A core event of a session.
    Event(String, Box<AgentEvent>),
    /// A session's event stream closed.
    Ended(String),
    /// The sessions of the workspace, for `GET /api/sessions`.
    Sessions(oneshot::Sender<Value>),
    /// A session's start, begun in a task of its own, finished.
    Opened(Box<super::opening::Opening>),
}

/// How the HTTP side reaches the hub.
#[derive(Clone)]
pub struct HubHandle {
    /// The hub's channel.
    pub inbound: mpsc::UnboundedSender<Inbound>,
    next: Arc<AtomicU64>,
}

impl HubHandle {
    /// A new client's number.
    pub fn next_client(&self) -> ClientId {
        self.next.fetch_add(1, Ordering::Relaxed) + 1
    }
}

/// A connected client.
pub(super) struct Client {
    pub role: Role,
    tx: mpsc::Sender<Outbound>,
    queued: Queued,
}

/// The sessions, the clients, and what the sessions are started with.
pub struct Hub {
    pub(super) flags: Flags,
    pub(super) workspace: PathBuf,
    pub(super) inbound: mpsc::UnboundedSender<Inbound>,
    pub(super) clients: HashMap<ClientId, Client>,
    pub(super) rooms: HashMap<String, Room>,
    /// Saved sessions being opened, and the loads (client, request id, `after`) waiting for them.
    pub(super) opening: HashMap<String, Vec<(ClientId, Value, u64)>>,
    asks: u64,
}

/// Starts the hub for sessions in `workspace` with the command line's `flags`; returns its handle
/// and the task, which ends (every session ended as `Quit` ends it) once `stop` resolves.
pub fn start(
    flags: Flags,
    workspace: PathBuf,
    stop: impl Future<Output = ()> + Send + 'static,
) -> (HubHandle, tokio::task::JoinHandle<()>) {
    let (inbound, mut receiver) = mpsc::unbounded_channel();
    let handle = HubHandle { inbound: inbound.clone(), next: Arc::new(AtomicU64::new(0)) };
    let mut hub = Hub {
        flags,
        workspace,
        inbound,
        clients: HashMap::new(),
        rooms: HashMap::new(),
        opening: HashMap::new(),
        asks: 0,
    };
    let task = tokio::spawn(async move {
        tokio::pin!(stop);
        loop {
            let message = tokio::select! {
                message = receiver.recv() => message,
                () = &mut stop => None,
            };
            let Some(message) = message else { break };
            hub.handle(message).await;
        }
        hub.close(&mut receiver).await;
    });
    (handle, task)
}

impl Hub {
    async fn handle(&mut self, message: Inbound) {
        match message {
            Inbound::Joined(id, role, tx, queued) => {
                tracing::info!(client = id, role = role.as_str(), "serve: client connected");
                self.clients.insert(id, Client { role, tx, queued });
            }
            Inbound::Message(id, text, permit) => {
                self.message(id, &text).await;
                drop(permit);
            }
            Inbound::Left(id) => self.forget(id),
            Inbound::Event(session, event) => self.events(&session, vec![*event]),
            Inbound::Ended(session) => self.ended(&session),
            Inbound::Sessions(reply) => {
                let _ = reply.send(self.sessions());
            }
            Inbound::Opened(opening) => self.opened(*opening),
        }
    }

    /// Queues `message` for `client`; a client whose queue is full is dropped.
    pub(super) fn deliver(&mut self, client: ClientId, message: Outbound) {
        let Some(entry) = self.clients.get(&client) else { return };
        let bytes = match &message {
            Outbound::Frame(frame) => frame.len(),
            Outbound::Batch(frames) => frames.iter().map(|frame| frame.len()).sum(),
        };
        if entry.queued.load(Ordering::Relaxed) + bytes > QUEUE_BYTES {
            tracing::info!(
                client,
                "serve: client dropped, it stopped reading (its queue's bytes are past the cap)"
            );
            self.forget(client);
            return;
        }
        entry.queued.fetch_add(bytes, Ordering::Relaxed);
        match entry.tx.try_send(message) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(_)) => {
                tracing::info!(client, "serve: client dropped, it stopped reading (its queue is full)");
                self.forget(client);
            }
            Err(mpsc::error::TrySendError::Closed(_)) => self.forget(client),
        }
    }

    /// Sends a JSON-RPC message to `client`.
    pub(super) fn send(&mut self, client: ClientId, message: &Value) {
        self.deliver(client, Outbound::Frame(Utf8Bytes::from(message.to_string())));
    }

    /// Forgets a client that left or was dropped (its queue's end closes its socket).
    fn forget(&mut self, client: ClientId) {
        if self.clients.remove(&client).is_some() {
            tracing::info!(client, "serve: client gone");
        }
        for room in self.rooms.values_mut() {
            room.watchers.remove(&client);
            for ask in &mut room.asks {
                ask.sent_to.remove(&client);
            }
        }
    }

    /// Records a notification about `session` and sends it to its watchers.
    pub(super) fn publish(&mut self, session: &str, method: &str, params: Value) {
        let Some(room) = self.rooms.get_mut(session) else { return };
        let frame = room.record(method, params);
        let watchers: Vec<ClientId> = room.watchers.iter().copied().collect();
        for client in watchers {
            self.deliver(client, Outbound::Frame(frame.clone()));
        }
    }

    /// Publishes a `session/update`.
    pub(super) fn update(&mut self, session: &str, update: acp::SessionUpdate) {
        match serde_json::to_value(acp::SessionNotification::new(session.to_string(), update)) {
            Ok(params) => self.publish(session, "session/update", params),
            Err(error) => tracing::warn!("serve: session/update not serialized: {error}"),
        }
    }

    /// What the session's events call for.
    pub(super) fn events(&mut self, session: &str, events: Vec<AgentEvent>) {
        for event in events {
            let status = match &event {
                AgentEvent::SessionStarted { model, .. } | AgentEvent::ModelChanged { model, .. } => {
                    Some(model.clone())
                }
                _ => None,
            };
            let Some(room) = self.rooms.get_mut(session) else { return };
            if let Some(model) = status {
                room.model = model;
                let params =
                    json!({"sessionId": session, "model": room.model, "mode": room.live.mode.as_str()});
                self.publish(session, "_lathe/status", params);
            }
            let Some(room) = self.rooms.get_mut(session) else { return };
            if let AgentEvent::Steered { count } = &event {
                room.joined += count;
            }
            for action in room.live.event(event) {
                match action {
                    Action::Update(update) => self.update(session, update),
                    Action::Ask(request, asked) => self.ask(session, request, asked),
                    Action::Finish(result) => self.finish(session, result),
                }
            }
        }
    }

    /// Sends a permission prompt to the session's steering watchers.
    fn ask(&mut self, session: &str, request: acp::RequestPermissionRequest, asked: crate::acp::live::Asked) {
        self.asks += 1;
        let id = format!("ask-{}", self.asks);
        let message =
            json!({"jsonrpc": "2.0", "id": id, "method": "session/request_permission", "params": request});
        let Some(room) = self.rooms.get_mut(session) else { return };
        let turn = room.live.turn;
        let frame = Utf8Bytes::from(message.to_string());
        room.asks.push(Ask { id, turn, asked, frame, sent_to: HashSet::new() });
        let watchers: Vec<ClientId> = room.watchers.iter().copied().collect();
        for client in watchers {
            self.offer_asks(session, client);
        }
    }

    /// Sends `client` (when it steers) the session's open prompts it has not been sent yet.
    pub(super) fn offer_asks(&mut self, session: &str, client: ClientId) {
        if self.clients.get(&client).is_none_or(|entry| entry.role != Role::Steer) {
            return;
        }
        let Some(room) = self.rooms.get_mut(session) else { return };
        let mut frames = Vec::new();
        for ask in room.asks.iter_mut().filter(|ask| !ask.sent_to.contains(&client)) {
            ask.sent_to.insert(client);
            frames.push(ask.frame.clone());
        }
        for frame in frames {
            self.deliver(client, Outbound::Frame(frame));
        }
    }

    /// A prompt turn ended: answers its `session/prompt`, tells the watchers, and starts counting
    /// the next queued prompt's turn.
    fn finish(&mut self, session: &str, result: Result<acp::PromptResponse, String>) {
        let Some(room) = self.rooms.get_mut(session) else { return };
        let joined = std::mem::take(&mut room.joined);
        let answered: Vec<(ClientId, Value)> =
            room.prompts.drain(..(1 + joined).min(room.prompts.len())).collect();
        room.asks.clear();
        if room.prompts.is_empty() {
            room.live.prompt = None;
        } else {
            room.live.begin_turn();
        }
        let (answer, ended) = match &result {
            Ok(response) => {
                (json!({"result": response}), json!({"sessionId": session, "response": response}))
            }
            Err(message) => (
                json!({"error": {"code": -32603, "message": message}}),
                json!({"sessionId": session, "error": message}),
            ),
        };
        for (client, id) in answered {
            let mut answer = answer.clone();
            answer["jsonrpc"] = "2.0".into();
            answer["id"] = id;
            self.send(client, &answer);
        }
        self.publish(session, "_lathe/turn_end", ended);
    }

    /// A session's stream closed: its waiting prompts get an error, its watchers a notification.
    fn ended(&mut self, session: &str) {
        self.publish(session, "_lathe/session_ended", json!({"sessionId": session}));
        let Some(room) = self.rooms.remove(session) else { return };
        for (client, id) in room.prompts {
            let error = json!({"code": -32603, "message": "the session ended during the prompt"});
            self.send(client, &json!({"jsonrpc": "2.0", "id": id, "error": error}));
        }
    }

    /// Ends every session (a running turn is cancelled, the ledger synced) and waits for them.
    async fn close(&mut self, receiver: &mut mpsc::UnboundedReceiver<Inbound>) {
        for room in self.rooms.values() {
            let _ = room.live.ops.send(AgentOp::Quit);
        }
        let tasks: Vec<_> = self.rooms.values_mut().filter_map(|room| room.live.task.take()).collect();
        receiver.close();
        for task in tasks {
            let _ = task.await;
        }
    }
}
