//! Starting one ACP session, shared by `lathe acp` (stdio) and `lathe serve` (WebSocket): the
//! command line's flags with the client's `cwd`, MCP servers and session choice, an interactive
//! Lathe session, and the [`Live`] state the front end keeps for it.

use std::path::Path;
use std::sync::Arc;

use agent_client_protocol::v1::schema as acp;
use lathe_core::host::{Flags, Interaction, SessionBuilder, SessionChoice, SessionHandle};
use lathe_protocol::AgentEvent;
use tokio::sync::mpsc;

use super::live::Live;
use super::mapping;

/// A session just started.
pub struct Opened<P> {
    /// Its state, the core task's handle in it.
    pub live: Live<P>,
    /// The events its start queued (handled after the answer, so that the client knows the id).
    pub queued: Vec<AgentEvent>,
    /// Its later events; closed when the session ends.
    pub events: mpsc::UnboundedReceiver<AgentEvent>,
    /// The session file (`None`: nothing is saved).
    pub file: Option<String>,
}

/// Starts a Lathe session in `cwd` (which must be absolute) with `servers` added as MCP servers;
/// `editor`, when given, takes the session's file edits (a client's buffers). An error's message
/// says what was wrong (a relative `cwd`, a session that cannot be resumed…).
pub async fn open<P>(
    flags: &Flags,
    cwd: &Path,
    servers: &[acp::McpServer],
    session: SessionChoice,
    editor: Option<Arc<dyn lathe_tools::EditorFiles>>,
) -> Result<Opened<P>, String> {
    if !cwd.is_absolute() {
        return Err(format!("cwd must be an absolute path, not {}", cwd.display()));
    }
    let mut flags = flags.clone();
    flags.dir = Some(cwd.to_path_buf());
    flags.session = session;
    flags.mcp_config.extend(mapping::mcp_config(servers));
    let mut builder = SessionBuilder::new(flags).interaction(Interaction::Interactive);
    if let Some(editor) = editor {
        builder = builder.editor(editor);
    }
    let handle = builder.start().await.map_err(|error| error.to_string())?;
    let SessionHandle { ops, mut events, info, task, .. } = handle;
    let mut queued = Vec::new();
    while let Ok(event) = events.try_recv() {
        queued.push(event);
    }
    let mut live = Live::new(info.id.clone(), ops, info.workspace.clone());
    live.task = Some(task);
    let mut file = None;
    if let Some(AgentEvent::SessionStarted { permission_mode, session_file, .. }) = queued.first() {
        live.mode = *permission_mode;
        file.clone_from(session_file);
    }
    Ok(Opened { live, queued, events, file })
}

/// Forwards a session's events to a front end's channel as `event(id, event)`, then `ended(id)`
/// once the session's stream closes (or stops when the front end's channel has closed).
pub fn forward<T: Send + 'static>(
    id: String,
    mut events: mpsc::UnboundedReceiver<AgentEvent>,
    inbound: mpsc::UnboundedSender<T>,
    event: fn(String, AgentEvent) -> T,
    ended: fn(String) -> T,
) {
    tokio::spawn(async move {
        while let Some(next) = events.recv().await {
            if inbound.send(event(id.clone(), next)).is_err() {
                return;
            }
        }
        let _ = inbound.send(ended(id));
    });
}
