//! Answers from the front end to tool calls that wait for a person (a presented plan, a
//! question), matched to the waiting call by its call id.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// The calls waiting for an answer of type `T`, by call id.
pub(crate) struct Awaited<T> {
    waiting: Mutex<HashMap<String, oneshot::Sender<T>>>,
}

impl<T> Default for Awaited<T> {
    fn default() -> Self {
        Awaited { waiting: Mutex::default() }
    }
}

impl<T> Awaited<T> {
    fn waiting(&self) -> MutexGuard<'_, HashMap<String, oneshot::Sender<T>>> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Delivers `answer` to the call `call_id`; `false` when no such call is waiting.
    pub(crate) fn answer(&self, call_id: &str, answer: T) -> bool {
        match self.waiting().remove(call_id) {
            Some(sender) => sender.send(answer).is_ok(),
            None => false,
        }
    }

    /// Makes `call_id` a waiting call, runs `announce` (which tells the front end; `false` when
    /// it is gone), then waits for the answer. `None` when the front end is gone or `cancel`
    /// fired first; the call is no longer waiting either way.
    pub(crate) async fn wait(
        &self,
        call_id: &str,
        announce: impl FnOnce() -> bool,
        cancel: &CancellationToken,
    ) -> Option<T> {
        let (sender, receiver) = oneshot::channel();
        self.waiting().insert(call_id.to_string(), sender);
        if !announce() {
            self.waiting().remove(call_id);
            return None;
        }
        let answer = tokio::select! {
            biased;
            () = cancel.cancelled() => None,
            answer = receiver => answer.ok(),
        };
        self.waiting().remove(call_id);
        answer
    }
}
