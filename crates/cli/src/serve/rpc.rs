//! The JSON-RPC 2.0 methods a `lathe serve` client calls: ACP's (`initialize`, `session/new`,
//! `session/load`, `session/prompt`, `session/set_mode`, the `session/cancel` notification and
//! the answers to `session/request_permission`, <https://agentclientprotocol.com>) and Lathe's
//! `_lathe/sessions`. Unlike `lathe acp`, a session outlives the client that opened it and many
//! clients may watch it:
//!
//! - `session/load` of an open session attaches to it; `params._meta.lathe.after` (the last
//!   `seq` the client saw) limits the replay to what it missed. Loading a session that is not
//!   open resumes it (steer only) and replays its conversation from the ledger.
//! - `session/prompt` while a turn runs steers it ([`lathe_protocol::AgentOp::Steer`]): the
//!   message joins the turn's next request and the request is answered when that turn ends (or,
//!   sent after the turn's last request, it runs as the next turn and is answered with that).
//! - `session/new` and the resuming `session/load` start the session off the hub's task
//!   ([`super::opening`]): other clients are served meanwhile. Every watcher sees the prompt as a
//!   `user_message_chunk` with `_meta.lathe.client`.
//! - A watch token's client may only `initialize`, list and load open sessions; anything else is
//!   refused with [`FORBIDDEN`]. A client's answer counts only for a prompt it was sent.
//! - A denial may carry feedback for the model in `result._meta.lathe.feedback`.
//! - What a remote client does is saved in the ledger with its id: a note before each message it
//!   types, and one for each permission answer, mode change and cancel (saved once the running
//!   turn ends).

use agent_client_protocol::v1::schema as acp;
use lathe_core::host::SessionChoice;
use lathe_protocol::{AgentOp, PermissionAnswer, PermissionMode};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::hub::{Hub, Outbound};
use super::opening::Then;
use super::room::{ClientId, Room};
use super::token::Role;
use crate::acp::live::answer;
use crate::acp::mapping;

/// The JSON-RPC error code of a method the client's token does not allow.
pub const FORBIDDEN: i64 = -32001;

/// A JSON-RPC error: code and message.
struct Refusal(i64, String);

fn invalid(message: impl Into<String>) -> Refusal {
    Refusal(-32602, message.into())
}

fn to_value<T: serde::Serialize>(value: &T) -> Result<Value, Refusal> {
    serde_json::to_value(value).map_err(|error| Refusal(-32603, error.to_string()))
}

fn params<T: DeserializeOwned>(params: &Value) -> Result<T, Refusal> {
    serde_json::from_value(params.clone()).map_err(|error| invalid(format!("invalid params: {error}")))
}

impl Hub {
    /// Handles one message of `client`.
    pub(super) async fn message(&mut self, client: ClientId, text: &str) {
        let Some(role) = self.clients.get(&client).map(|entry| entry.role) else { return };
        let Ok(message) = serde_json::from_str::<Value>(text) else {
            let error = json!({"code": -32700, "message": "parse error"});
            self.send(client, &json!({"jsonrpc": "2.0", "id": null, "error": error}));
            return;
        };
        let method = message.get("method").and_then(Value::as_str).map(str::to_string);
        let id = message.get("id").cloned();
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        match (method, id) {
            (Some(method), Some(id)) => {
                tracing::debug!(client, method, "serve: request");
                let answer = match self.request(client, role, &method, &id, &params).await {
                    Ok(Some(result)) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                    Ok(None) => return,
                    Err(Refusal(code, message)) => {
                        json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
                    }
                };
                self.send(client, &answer);
            }
            (Some(method), None) if role == Role::Steer && method == "session/cancel" => {
                let session = params.get("sessionId").and_then(Value::as_str).unwrap_or_default();
                if let Some(room) = self.rooms.get_mut(session) {
                    if room.live.prompt.is_some() {
                        room.live.cancelled = true;
                    }
                    let _ = room.live.ops.send(AgentOp::Cancel);
                    let _ = room
                        .live
                        .ops
                        .send(AgentOp::Note { text: format!("serve client c{client} cancelled the turn") });
                }
            }
            (Some(method), None) => tracing::info!(client, method, "serve: notification ignored"),
            (None, Some(id)) => self.answered(client, role, &id, &message),
            (None, None) => {
                let error = json!({"code": -32600, "message": "invalid request"});
                self.send(client, &json!({"jsonrpc": "2.0", "id": null, "error": error}));
            }
        }
    }

    /// A request's result (`None`: answered later, when the prompt's turn ends).
    async fn request(
        &mut self,
        client: ClientId,
        role: Role,
        method: &str,
        id: &Value,
        params: &Value,
    ) -> Result<Option<Value>, Refusal> {
        let steers = |what: &str| match role {
            Role::Steer => Ok(()),
            Role::Watch => Err(Refusal(FORBIDDEN, format!("{what}: this token is read-only (watch)"))),
        };
        match method {
            "initialize" => {
                let request: acp::InitializeRequest = self::params(params)?;
                let mut result = to_value(&crate::acp::server::initialize(&request))?;
                result["_meta"] = json!({"lathe": {
                    "client": format!("c{client}"), "role": role.as_str(),
                    "workspace": self.workspace.display().to_string(),
                }});
                Ok(Some(result))
            }
            "_lathe/sessions" => Ok(Some(self.sessions())),
            "session/new" => {
                steers(method)?;
                let request: acp::NewSessionRequest = self::params(params)?;
                self.check_cwd(&request.cwd)?;
                self.start_open(client, id.clone(), request.mcp_servers, SessionChoice::New, Then::New);
                Ok(None)
            }
            "session/load" => {
                let request: acp::LoadSessionRequest = self::params(params)?;
                let after = params.pointer("/_meta/lathe/after").and_then(Value::as_u64).unwrap_or(0);
                let session = request.session_id.to_string();
                if self.rooms.contains_key(&session) {
                    self.loaded(client, id, &session, after);
                    return Ok(None);
                }
                steers("resuming a session that is not open")?;
                self.check_cwd(&request.cwd)?;
                if !self.wait_for_open(&session, client, id, after) {
                    let choice = SessionChoice::Resume(session.clone());
                    self.start_open(
                        client,
                        id.clone(),
                        request.mcp_servers,
                        choice,
                        Then::Load { session, after },
                    );
                }
                Ok(None)
            }
            "session/prompt" => {
                steers(method)?;
                let request: acp::PromptRequest = self::params(params)?;
                self.prompt(client, id, request)?;
                Ok(None)
            }
            "session/set_mode" => {
                steers(method)?;
                let request: acp::SetSessionModeRequest = self::params(params)?;
                let room = self.room(&request.session_id.0)?;
                let mode = request.mode_id.0.parse::<PermissionMode>().map_err(|e| invalid(e.to_string()))?;
                let _ = room.live.ops.send(AgentOp::SetMode { mode });
                let text = format!("serve client c{client} set the permission mode to {}", mode.as_str());
                let _ = room.live.ops.send(AgentOp::Note { text });
                Ok(Some(to_value(&acp::SetSessionModeResponse::new())?))
            }
            other => Err(Refusal(-32601, format!("method not found: {other}"))),
        }
    }

    fn room(&mut self, session: &str) -> Result<&mut Room, Refusal> {
        self.rooms.get_mut(session).ok_or_else(|| invalid(format!("no open session {session}")))
    }

    /// Sessions run in the served workspace only.
    fn check_cwd(&self, cwd: &std::path::Path) -> Result<(), Refusal> {
        if cwd == self.workspace {
            Ok(())
        } else {
            Err(invalid(format!("cwd must be the served workspace {}", self.workspace.display())))
        }
    }

    /// Opens a session in the workspace; a resumed one's log starts with its conversation.
    /// Makes `client` a watcher of `session` and sends it the log after `after`.
    pub(super) fn watch(&mut self, client: ClientId, session: &str, after: u64) {
        let Some(room) = self.rooms.get_mut(session) else { return };
        room.watchers.insert(client);
        let missed = room.since(after);
        self.deliver(client, Outbound::Batch(missed));
    }

    fn prompt(&mut self, client: ClientId, id: &Value, request: acp::PromptRequest) -> Result<(), Refusal> {
        let session = request.session_id.to_string();
        let content = mapping::prompt_content(&request.prompt);
        if content.is_empty() {
            return Err(invalid("the prompt is empty"));
        }
        let room = self.room(&session)?;
        let from = format!("the next user message is from serve client c{client}");
        room.prompts.push_back((client, id.clone()));
        if room.live.prompt.is_none() {
            room.live.begin_turn();
            room.live.prompt = Some(());
            let _ = room.live.ops.send(AgentOp::Note { text: from });
            let _ = room.live.ops.send(AgentOp::UserInput { content });
        } else {
            // Typed while a turn runs: it joins that turn's next request (answered when it ends),
            // or starts the next turn when the turn has made its last request.
            let _ = room.live.ops.send(AgentOp::Steer { content, from: Some(from) });
        }
        for block in request.prompt {
            let chunk = acp::ContentChunk::new(block)
                .meta(mapping::lathe_meta(json!({"client": format!("c{client}")})));
            self.update(&session, acp::SessionUpdate::UserMessageChunk(chunk));
        }
        Ok(())
    }

    /// A client's answer to a `session/request_permission`: it counts only when the client
    /// steers and was sent that prompt, and the prompt is still open.
    fn answered(&mut self, client: ClientId, role: Role, id: &Value, message: &Value) {
        let found = self.rooms.values_mut().find_map(|room| {
            let index = room.asks.iter().position(|ask| id == &Value::from(ask.id.clone()))?;
            Some((room, index))
        });
        let Some((room, index)) = found else {
            tracing::info!(client, "serve: an answer to no open prompt, ignored");
            return;
        };
        if role != Role::Steer || !room.asks[index].sent_to.contains(&client) {
            tracing::info!(client, "serve: an answer from a client that was not asked, refused");
            return;
        }
        let ask = room.asks.remove(index);
        if !room.live.takes_answer(ask.turn) {
            return;
        }
        let chosen = message.pointer("/result/outcome/optionId").and_then(Value::as_str);
        let chosen =
            chosen.filter(|_| message.pointer("/result/outcome/outcome") == Some(&json!("selected")));
        let feedback = message.pointer("/result/_meta/lathe/feedback").and_then(Value::as_str);
        for mut op in answer(&ask.asked, chosen) {
            if let (
                AgentOp::Permission { answer: PermissionAnswer::Deny { feedback: slot }, .. },
                Some(text),
            ) = (&mut op, feedback.filter(|text| !text.trim().is_empty()))
            {
                *slot = Some(text.to_string());
            }
            let _ = room.live.ops.send(op);
        }
        // Saved when the turn ends (a note waits for it), with the client that answered.
        let text = format!(
            "serve client c{client} answered the permission prompt {}: {}",
            ask.id,
            chosen.unwrap_or("no choice")
        );
        let _ = room.live.ops.send(AgentOp::Note { text });
        let session = room.live.id.clone();
        let others: Vec<ClientId> = ask.sent_to.iter().copied().filter(|other| *other != client).collect();
        let closed = json!({"jsonrpc": "2.0", "method": "_lathe/ask_closed", "params": {"sessionId": session, "id": ask.id}});
        for other in others {
            self.send(other, &closed);
        }
    }

    /// `_lathe/sessions`: the workspace's saved sessions, newest first, each with `open` (it runs
    /// in this server now).
    pub(super) fn sessions(&self) -> Value {
        let mut flags = self.flags.clone();
        flags.dir = Some(self.workspace.clone());
        let saved = lathe_core::host::list_sessions(&flags, None).unwrap_or_default();
        let mut listed: Vec<Value> = saved
            .iter()
            .filter_map(|summary| serde_json::to_value(summary).ok())
            .map(|mut summary| {
                let open =
                    summary.get("id").and_then(Value::as_str).is_some_and(|id| self.rooms.contains_key(id));
                summary["open"] = open.into();
                summary
            })
            .collect();
        for id in self.rooms.keys() {
            if !listed.iter().any(|summary| summary["id"] == id.as_str()) {
                listed.push(json!({"id": id, "open": true}));
            }
        }
        json!({"workspace": self.workspace.display().to_string(), "sessions": listed})
    }
}
