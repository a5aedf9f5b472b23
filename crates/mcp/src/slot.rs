//! One configured server's place in the session: starting, ready or failed, shared by the
//! start-up task (which settles it once) and the server's tools (whose calls wait for it).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::connect::Connection;
use crate::tool::McpCallError;

/// Extra time a waiting call allows beyond the start-up limit (the start-up task enforces the
/// limit itself; this only guards against a task that never settles its slot).
const SETTLE_MARGIN: Duration = Duration::from_secs(2);

/// Where a server's start-up stands.
#[derive(Clone)]
pub(crate) enum State {
    /// Spawned or connecting; `initialize` and `tools/list` not done yet.
    Starting,
    /// Up: the connection and the tools it listed.
    Ready { connection: Arc<Connection>, tools: Arc<Vec<rmcp::model::Tool>> },
    /// Did not start; the message says why (one line, with the stderr tail for stdio).
    Failed(String),
}

/// A server's start-up state, settled once by its start-up task.
pub(crate) struct Slot {
    /// Server name from the configuration.
    pub name: String,
    /// The start-up limit of the server.
    pub startup_timeout: Duration,
    state: watch::Sender<State>,
    /// Whether the start-up task may start the server: at once, or (a server whose tools are
    /// remembered) when the session launches it or something waits for it.
    launch: watch::Sender<bool>,
}

impl Slot {
    /// A slot whose server starts at once (`launched`) or waits for [`Slot::launch`].
    pub(crate) fn new(name: String, startup_timeout: Duration, launched: bool) -> Slot {
        Slot {
            name,
            startup_timeout,
            state: watch::Sender::new(State::Starting),
            launch: watch::Sender::new(launched),
        }
    }

    /// Lets the start-up task start the server (no effect once it has).
    pub(crate) fn launch(&self) {
        self.launch.send_if_modified(|launched| !std::mem::replace(launched, true));
    }

    /// Whether the server may be started (or has been).
    pub(crate) fn is_launched(&self) -> bool {
        *self.launch.borrow()
    }

    /// Waits until the server may be started.
    pub(crate) async fn launched(&self) {
        let mut receiver = self.launch.subscribe();
        // The sender lives in `self`: the wait ends only by a launch.
        let _ = receiver.wait_for(|launched| *launched).await;
    }

    /// The state now.
    pub(crate) fn current(&self) -> State {
        self.state.borrow().clone()
    }

    /// Settles the slot; a slot already settled keeps its first state.
    pub(crate) fn settle(&self, state: State) {
        self.state.send_if_modified(|now| {
            if matches!(now, State::Starting) {
                *now = state;
                true
            } else {
                false
            }
        });
    }

    /// Waits until the server is ready or has failed (bounded by its start-up limit), launching
    /// it if it was not yet.
    pub(crate) async fn settled(&self) -> State {
        self.launch();
        let mut receiver = self.state.subscribe();
        let wait = receiver.wait_for(|state| !matches!(state, State::Starting));
        match tokio::time::timeout(self.startup_timeout + SETTLE_MARGIN, wait).await {
            Ok(Ok(state)) => state.clone(),
            Ok(Err(_)) | Err(_) => State::Failed(format!(
                "did not finish starting within {} ms",
                self.startup_timeout.as_millis()
            )),
        }
    }

    /// The connection, once the server is up: waits while it is starting (until `cancel` fires);
    /// a server that failed to start is [`McpCallError::NotStarted`].
    pub(crate) async fn ready(
        &self,
        cancel: &CancellationToken,
    ) -> Result<(Arc<Connection>, Arc<Vec<rmcp::model::Tool>>), McpCallError> {
        let state = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(McpCallError::Cancelled),
            state = self.settled() => state,
        };
        match state {
            State::Ready { connection, tools } => Ok((connection, tools)),
            State::Failed(detail) => Err(McpCallError::NotStarted { server: self.name.clone(), detail }),
            State::Starting => Err(McpCallError::NotStarted {
                server: self.name.clone(),
                detail: "it is still starting".into(),
            }),
        }
    }
}

/// Settles its slot as failed when dropped unsettled (a start-up task that panicked or was
/// aborted), so no call waits for it.
pub(crate) struct SettleOnDrop(pub Arc<Slot>);

impl Drop for SettleOnDrop {
    fn drop(&mut self) {
        self.0.settle(State::Failed("its start-up was stopped".into()));
    }
}
