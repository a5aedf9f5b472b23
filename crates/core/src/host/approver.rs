//! The interactive [`Approver`]: a permission prompt is an [`AgentEvent::PermissionRequest`] out
//! and an [`lathe_protocol::AgentOp::Permission`] back (ARCHITECTURE.md §1), matched by call id.
//! A prompt nobody answers before the turn is cancelled (or the front end goes away) is a "no".

use std::collections::HashMap;
use std::sync::Mutex;

use futures::future::BoxFuture;
use lathe_protocol::{AgentEvent, PermissionAnswer, ToolCall, ToolPreview};
use tokio::sync::{mpsc, oneshot};

use crate::exec::Approver;

/// Asks the front end through the event stream and waits for its answer.
pub(crate) struct ChannelApprover {
    events: mpsc::UnboundedSender<AgentEvent>,
    waiting: Mutex<HashMap<String, oneshot::Sender<PermissionAnswer>>>,
}

impl ChannelApprover {
    pub(crate) fn new(events: mpsc::UnboundedSender<AgentEvent>) -> ChannelApprover {
        ChannelApprover { events, waiting: Mutex::new(HashMap::new()) }
    }

    fn waiting(&self) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<PermissionAnswer>>> {
        self.waiting.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Delivers the answer for `call_id`; `false` when no prompt for that call is waiting.
    pub(crate) fn answer(&self, call_id: &str, answer: PermissionAnswer) -> bool {
        match self.waiting().remove(call_id) {
            Some(sender) => sender.send(answer).is_ok(),
            None => false,
        }
    }

    /// Answers every waiting prompt "no" (the turn is being cancelled).
    pub(crate) fn deny_all(&self) {
        for (_, sender) in self.waiting().drain() {
            let _ = sender.send(PermissionAnswer::Deny { feedback: None });
        }
    }
}

impl Approver for ChannelApprover {
    fn ask<'a>(
        &'a self,
        call: &'a ToolCall,
        reason: &'a str,
        suggestion: Option<&'a str>,
        preview: Option<&'a ToolPreview>,
    ) -> BoxFuture<'a, PermissionAnswer> {
        Box::pin(async move {
            let (sender, receiver) = oneshot::channel();
            self.waiting().insert(call.id.clone(), sender);
            let request = AgentEvent::PermissionRequest {
                call: call.clone(),
                reason: reason.to_string(),
                suggestion: suggestion.map(str::to_string),
                preview: preview.cloned(),
            };
            if self.events.send(request).is_err() {
                self.waiting().remove(&call.id);
                return PermissionAnswer::Deny { feedback: None };
            }
            receiver.await.unwrap_or(PermissionAnswer::Deny { feedback: None })
        })
    }
}
