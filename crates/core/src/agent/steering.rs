//! Steering: user messages sent while a turn runs ([`lathe_protocol::AgentOp::Steer`]) join the
//! turn's next model request instead of waiting for the turn to end.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use lathe_protocol::Content;

/// One steering message: its content and who typed it (the ledger's note).
pub type SteerMessage = (Vec<Content>, Option<String>);

/// The messages waiting for the running turn's next request, shared between the session's
/// runner (which adds them) and the agent (which takes them before each request).
#[derive(Debug, Clone, Default)]
pub struct Steering(Arc<Mutex<VecDeque<SteerMessage>>>);

impl Steering {
    /// Adds a message for the next request.
    pub fn push(&self, content: Vec<Content>, from: Option<String>) {
        self.lock().push_back((content, from));
    }

    /// Takes every waiting message, oldest first.
    pub fn take(&self) -> Vec<SteerMessage> {
        self.lock().drain(..).collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<SteerMessage>> {
        // A panic while holding the lock cannot leave the queue half-changed: recover it.
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
