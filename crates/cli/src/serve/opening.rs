//! Opening a session off the hub's task: starting one (its MCP servers, its prompt, its memory)
//! can take seconds, and the hub keeps serving every other client and session meanwhile. The
//! start runs in a task of its own and comes back as [`Inbound::Opened`]; clients that load the
//! same session while it opens wait for that one start (a session has one writer).

use agent_client_protocol::v1::schema as acp;
use lathe_core::host::SessionChoice;
use serde_json::{Value, json};

use super::hub::{Hub, Inbound};
use super::room::{ClientId, Room};
use crate::acp::{mapping, open, replay};

/// What a client asked for that an opening session answers.
#[derive(Debug, Clone)]
pub enum Then {
    /// `session/new`.
    New,
    /// `session/load` of a saved session, replaying what comes after `after`.
    Load {
        /// The session's id.
        session: String,
        /// The last sequence number the client saw.
        after: u64,
    },
}

/// A finished start and the request it answers.
pub struct Opening {
    client: ClientId,
    id: Value,
    then: Then,
    result: Result<open::Opened<()>, String>,
}

impl Hub {
    /// Starts opening a session for `client`'s request `id` in a task of its own.
    pub(super) fn start_open(
        &mut self,
        client: ClientId,
        id: Value,
        servers: Vec<acp::McpServer>,
        choice: SessionChoice,
        then: Then,
    ) {
        if let Then::Load { session, .. } = &then {
            self.opening.insert(session.clone(), Vec::new());
        }
        let (flags, workspace, inbound) = (self.flags.clone(), self.workspace.clone(), self.inbound.clone());
        tokio::spawn(async move {
            let result = open::open::<()>(&flags, &workspace, &servers, choice, None).await;
            let _ = inbound.send(Inbound::Opened(Box::new(Opening { client, id, then, result })));
        });
    }

    /// Whether `session` is being opened; if so, `client`'s load `id` waits for it.
    pub(super) fn wait_for_open(&mut self, session: &str, client: ClientId, id: &Value, after: u64) -> bool {
        let Some(waiting) = self.opening.get_mut(session) else { return false };
        waiting.push((client, id.clone(), after));
        true
    }

    /// A start finished: the room opens, and the request (and any load that waited) is answered.
    pub(super) fn opened(&mut self, opening: Opening) {
        let Opening { client, id, then, result } = opening;
        let waiting = match &then {
            Then::Load { session, .. } => self.opening.remove(session).unwrap_or_default(),
            Then::New => Vec::new(),
        };
        let opened = match result {
            Ok(opened) => opened,
            Err(message) => {
                let error = json!({"code": -32602, "message": message});
                for (client, id) in
                    std::iter::once((client, id)).chain(waiting.into_iter().map(|(c, i, _)| (c, i)))
                {
                    self.send(client, &json!({"jsonrpc": "2.0", "id": id, "error": error}));
                }
                return;
            }
        };
        let open::Opened { live, queued, events, file } = opened;
        let session = live.id.clone();
        let workspace = live.workspace.clone();
        let event = |id, event| Inbound::Event(id, Box::new(event));
        open::forward(session.clone(), events, self.inbound.clone(), event, Inbound::Ended);
        self.rooms.insert(session.clone(), Room::new(live));
        for update in replay::ledger_updates(file.as_deref(), &workspace) {
            self.update(&session, update);
        }
        match then {
            Then::New => {
                self.watch(client, &session, 0);
                let modes = self.rooms.get(&session).map(|room| mapping::session_modes(room.live.mode));
                let response = acp::NewSessionResponse::new(session.clone()).modes(modes);
                self.send(client, &json!({"jsonrpc": "2.0", "id": id, "result": response}));
            }
            Then::Load { after, .. } => {
                self.loaded(client, &id, &session, after);
                for (client, id, after) in waiting {
                    self.loaded(client, &id, &session, after);
                }
            }
        }
        self.events(&session, queued);
    }

    /// Answers a `session/load` of the open `session`: the client watches it from `after` on.
    pub(super) fn loaded(&mut self, client: ClientId, id: &Value, session: &str, after: u64) {
        self.watch(client, session, after);
        let Some(room) = self.rooms.get(session) else {
            let error = json!({"code": -32602, "message": "the session ended"});
            self.send(client, &json!({"jsonrpc": "2.0", "id": id, "error": error}));
            return;
        };
        let meta = mapping::lathe_meta(json!({"seq": room.seq()}));
        let response =
            acp::LoadSessionResponse::new().modes(mapping::session_modes(room.live.mode)).meta(meta);
        self.send(client, &json!({"jsonrpc": "2.0", "id": id, "result": response}));
        self.offer_asks(session, client);
    }
}
