//! The connection and the one task that owns the sessions: every request and notification from the
//! client, every core event and every answer to a question the agent asked arrives as an
//! [`Inbound`] on one channel and is handled in order, so no handler holds the connection's
//! dispatch loop (a `session/cancel` is read while a prompt runs).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, on_receive_notification, on_receive_request};
use lathe_core::host::{Flags, SessionChoice};
use lathe_protocol::{AgentEvent, AgentOp, PermissionMode};
use tokio::sync::mpsc;

use super::files::ClientFiles;
use super::live::{Action, Asked, Live, answer};
use super::open::{self, Opened};
use super::{mapping, replay};
use crate::args::{EXIT_FAILED, EXIT_OK};

/// Something for the session task to handle.
enum Inbound {
    Initialize(Box<acp::InitializeRequest>, Responder<acp::InitializeResponse>),
    New(Box<acp::NewSessionRequest>, Responder<acp::NewSessionResponse>),
    Load(Box<acp::LoadSessionRequest>, Responder<acp::LoadSessionResponse>),
    Prompt(acp::PromptRequest, Responder<acp::PromptResponse>),
    SetMode(acp::SetSessionModeRequest, Responder<acp::SetSessionModeResponse>),
    Cancel(acp::CancelNotification),
    /// A core event of a session.
    Event(String, AgentEvent),
    /// A session's event stream closed.
    Ended(String),
    /// The client's answer to a `session/request_permission` asked in the session's turn
    /// (`None`: cancelled or failed).
    Answered(String, u64, Asked, Option<String>),
}

/// Serves ACP on stdin/stdout until the client closes stdin (or a signal ends it); every session
/// is then ended as `Quit` ends it (the ledger synced). `flags` are the command line's (provider,
/// model, mode…); each session's workspace is the client's `cwd`.
pub async fn run(flags: Flags) -> u8 {
    let (inbound, mut receiver) = mpsc::unbounded_channel::<Inbound>();
    let send = |tx: &mpsc::UnboundedSender<Inbound>, message| {
        tx.send(message).map_err(|_| agent_client_protocol::Error::internal_error())
    };
    let tx = inbound.clone();
    let builder = Agent.v1().name("lathe").on_receive_request(
        async move |request: acp::InitializeRequest, responder, _cx| {
            send(&tx, Inbound::Initialize(Box::new(request), responder))
        },
        on_receive_request!(),
    );
    let tx = inbound.clone();
    let builder = builder.on_receive_request(
        async move |request: acp::NewSessionRequest, responder, _cx| {
            send(&tx, Inbound::New(Box::new(request), responder))
        },
        on_receive_request!(),
    );
    let tx = inbound.clone();
    let builder = builder.on_receive_request(
        async move |request: acp::LoadSessionRequest, responder, _cx| {
            send(&tx, Inbound::Load(Box::new(request), responder))
        },
        on_receive_request!(),
    );
    let tx = inbound.clone();
    let builder = builder.on_receive_request(
        async move |request: acp::PromptRequest, responder, _cx| {
            send(&tx, Inbound::Prompt(request, responder))
        },
        on_receive_request!(),
    );
    let tx = inbound.clone();
    let builder = builder.on_receive_request(
        async move |request: acp::SetSessionModeRequest, responder, _cx| {
            send(&tx, Inbound::SetMode(request, responder))
        },
        on_receive_request!(),
    );
    let tx = inbound.clone();
    let builder = builder.on_receive_notification(
        async move |notification: acp::CancelNotification, _cx| send(&tx, Inbound::Cancel(notification)),
        on_receive_notification!(),
    );
    let result = builder
        .connect_with(super::transport::stdio(), async move |cx: ConnectionTo<Client>| {
            let mut host =
                Host { flags, cx: cx.clone(), inbound, sessions: HashMap::new(), client_fs: (false, false) };
            loop {
                let message = tokio::select! {
                    message = receiver.recv() => message,
                    () = cx.incoming_closed() => None,
                    () = signalled() => None,
                };
                let Some(message) = message else { break };
                host.handle(message).await;
            }
            host.close(&mut receiver).await;
            Ok(())
        })
        .await;
    match result {
        Ok(()) => EXIT_OK,
        Err(error) => {
            tracing::warn!("acp connection: {error}");
            EXIT_FAILED
        }
    }
}

/// SIGINT, SIGTERM or SIGHUP.
pub(crate) async fn signalled() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut hup)) = (signal(SignalKind::terminate()), signal(SignalKind::hangup())) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
        _ = hup.recv() => {}
    }
}

/// The sessions and the connection they report to.
struct Host {
    flags: Flags,
    cx: ConnectionTo<Client>,
    inbound: mpsc::UnboundedSender<Inbound>,
    sessions: HashMap<String, Live>,
    /// The client offered `fs/read_text_file` and `fs/write_text_file`.
    client_fs: (bool, bool),
}

impl Host {
    async fn handle(&mut self, message: Inbound) {
        match message {
            Inbound::Initialize(request, responder) => {
                let fs = &request.client_capabilities.fs;
                self.client_fs = (fs.read_text_file, fs.write_text_file);
                let _ = responder.respond(initialize(&request));
            }
            Inbound::New(request, responder) => {
                let started = self.open(&request.cwd, &request.mcp_servers, SessionChoice::New).await;
                match started {
                    Ok((id, queued, _)) => {
                        let modes = self.sessions.get(&id).map(|live| mapping::session_modes(live.mode));
                        let _ = responder.respond(acp::NewSessionResponse::new(id.clone()).modes(modes));
                        self.events(&id, queued);
                    }
                    Err(error) => {
                        let _ = responder.respond_with_error(error);
                    }
                }
            }
            Inbound::Load(request, responder) => self.load(*request, responder).await,
            Inbound::Prompt(request, responder) => self.prompt(request, responder),
            Inbound::SetMode(request, responder) => {
                let id = request.session_id.to_string();
                let Some(live) = self.sessions.get(&id) else {
                    let _ = responder.respond_with_error(unknown_session(&id));
                    return;
                };
                match request.mode_id.0.parse::<PermissionMode>() {
                    Ok(mode) => {
                        let _ = live.ops.send(AgentOp::SetMode { mode });
                        let _ = responder.respond(acp::SetSessionModeResponse::new());
                    }
                    Err(error) => {
                        let _ = responder.respond_with_error(invalid_params(error.to_string()));
                    }
                }
            }
            Inbound::Cancel(notification) => {
                if let Some(live) = self.sessions.get_mut(&*notification.session_id.0) {
                    if live.prompt.is_some() {
                        live.cancelled = true;
                    }
                    let _ = live.ops.send(AgentOp::Cancel);
                }
            }
            Inbound::Event(id, event) => self.events(&id, vec![event]),
            Inbound::Ended(id) => {
                if let Some(mut live) = self.sessions.remove(&id)
                    && let Some(responder) = live.prompt.take()
                {
                    let _ = responder.respond_with_internal_error("the session ended during the prompt");
                }
            }
            Inbound::Answered(id, turn, asked, chosen) => {
                if let Some(live) = self.sessions.get(&id).filter(|live| live.takes_answer(turn)) {
                    for op in answer(&asked, chosen.as_deref()) {
                        let _ = live.ops.send(op);
                    }
                }
            }
        }
    }

    /// Starts a Lathe session in `cwd` with the client's MCP servers; returns its id and the
    /// events the start queued (handled after the answer, so that the client knows the id), and
    /// the session file.
    async fn open(
        &mut self,
        cwd: &Path,
        servers: &[acp::McpServer],
        session: SessionChoice,
    ) -> Result<(String, Vec<AgentEvent>, Option<String>), agent_client_protocol::Error> {
        // Edits go through the client when it can write; reads too when it can read.
        let files = self.client_fs.1.then(|| ClientFiles::new(self.cx.clone(), self.client_fs.0));
        let editor = files.clone().map(|files| Arc::new(files) as Arc<dyn lathe_tools::EditorFiles>);
        let opened = open::open(&self.flags, cwd, servers, session, editor).await.map_err(invalid_params)?;
        let Opened { live, queued, events, file } = opened;
        let id = live.id.clone();
        if let Some(files) = &files {
            let _ = files.session.set(id.clone());
        }
        open::forward(id.clone(), events, self.inbound.clone(), Inbound::Event, Inbound::Ended);
        self.sessions.insert(id.clone(), live);
        Ok((id, queued, file))
    }

    /// `session/load`: resumes the session, replays its transcript, then answers.
    async fn load(
        &mut self,
        request: acp::LoadSessionRequest,
        responder: Responder<acp::LoadSessionResponse>,
    ) {
        let id = request.session_id.to_string();
        if self.sessions.contains_key(&id) {
            let _ = responder.respond_with_error(invalid_params(format!("session {id} is already open")));
            return;
        }
        let choice = SessionChoice::Resume(id.clone());
        let (id, queued, file) = match self.open(&request.cwd, &request.mcp_servers, choice).await {
            Ok(opened) => opened,
            Err(error) => {
                let _ = responder.respond_with_error(error);
                return;
            }
        };
        let Some(live) = self.sessions.get(&id) else { return };
        for update in replay::ledger_updates(file.as_deref(), &live.workspace) {
            self.notify(&id, update);
        }
        let _ = responder.respond(acp::LoadSessionResponse::new().modes(mapping::session_modes(live.mode)));
        self.events(&id, queued);
    }

    fn prompt(&mut self, request: acp::PromptRequest, responder: Responder<acp::PromptResponse>) {
        let id = request.session_id.to_string();
        let Some(live) = self.sessions.get_mut(&id) else {
            let _ = responder.respond_with_error(unknown_session(&id));
            return;
        };
        if live.prompt.is_some() {
            let _ = responder.respond_with_error(
                agent_client_protocol::Error::invalid_request()
                    .data(serde_json::json!("a prompt is already running")),
            );
            return;
        }
        let content = mapping::prompt_content(&request.prompt);
        if content.is_empty() {
            let _ = responder.respond_with_error(invalid_params("the prompt is empty".into()));
            return;
        }
        live.begin_turn();
        live.prompt = Some(responder);
        let _ = live.ops.send(AgentOp::UserInput { content });
    }

    /// Sends what the session's events call for.
    fn events(&mut self, id: &str, events: Vec<AgentEvent>) {
        for event in events {
            let Some(live) = self.sessions.get_mut(id) else { return };
            for action in live.event(event) {
                match action {
                    Action::Update(update) => self.notify(id, update),
                    Action::Ask(request, asked) => self.ask(id, request, asked),
                    Action::Finish(result) => {
                        let Some(responder) = self.sessions.get_mut(id).and_then(|live| live.prompt.take())
                        else {
                            continue;
                        };
                        let _ = match result {
                            Ok(response) => responder.respond(response),
                            Err(message) => responder.respond_with_internal_error(message),
                        };
                    }
                }
            }
        }
    }

    fn notify(&self, id: &str, update: acp::SessionUpdate) {
        if let Err(error) = self.cx.send_notification(acp::SessionNotification::new(id.to_string(), update)) {
            tracing::warn!("session/update not sent: {error}");
        }
    }

    /// Sends `session/request_permission`; the answer comes back as [`Inbound::Answered`].
    fn ask(&self, id: &str, request: acp::RequestPermissionRequest, asked: Asked) {
        let inbound = self.inbound.clone();
        let turn = self.sessions.get(id).map_or(0, |live| live.turn);
        let id = id.to_string();
        let sent = self.cx.send_request(request).on_receiving_result(move |result| async move {
            let chosen = match result {
                Ok(response) => match response.outcome {
                    acp::RequestPermissionOutcome::Selected(selected) => {
                        Some(selected.option_id.0.to_string())
                    }
                    _ => None,
                },
                Err(error) => {
                    tracing::warn!("session/request_permission failed: {error}");
                    None
                }
            };
            let _ = inbound.send(Inbound::Answered(id, turn, asked, chosen));
            Ok(())
        });
        if let Err(error) = sent {
            tracing::warn!("session/request_permission not sent: {error}");
        }
    }

    /// Ends every session (a running turn is cancelled, the ledger synced) and waits for them.
    async fn close(&mut self, receiver: &mut mpsc::UnboundedReceiver<Inbound>) {
        for live in self.sessions.values() {
            let _ = live.ops.send(AgentOp::Quit);
        }
        let tasks: Vec<_> = self.sessions.values_mut().filter_map(|live| live.task.take()).collect();
        receiver.close();
        for task in tasks {
            let _ = task.await;
        }
    }
}

/// The answer to `initialize` (also `lathe serve`'s): protocol v1, sessions can be loaded, prompts may hold images and
/// embedded resources, MCP servers over stdio and HTTP.
pub(crate) fn initialize(request: &acp::InitializeRequest) -> acp::InitializeResponse {
    tracing::info!(client = ?request.client_info, "acp initialize");
    let capabilities = acp::AgentCapabilities::new()
        .load_session(true)
        .prompt_capabilities(acp::PromptCapabilities::new().image(true).embedded_context(true))
        .mcp_capabilities(acp::McpCapabilities::new().http(true));
    acp::InitializeResponse::new(agent_client_protocol::schema::ProtocolVersion::V1)
        .agent_capabilities(capabilities)
        .agent_info(acp::Implementation::new("lathe", env!("CARGO_PKG_VERSION")).title("Lathe".to_string()))
}

pub(crate) fn invalid_params(message: String) -> agent_client_protocol::Error {
    agent_client_protocol::Error::new(acp::ErrorCode::InvalidParams, message)
}

fn unknown_session(id: &str) -> agent_client_protocol::Error {
    invalid_params(format!("no open session {id}"))
}
