//! A teammate's permission prompts, put to its lead's user through the mailbox.
//!
//! A teammate started by a lead that has a person at hand (the terminal UI, an ACP client) runs
//! with a [`MailApprover`]: a call that needs approval becomes an `approval` message to the lead
//! (its text one JSON [`ApprovalRequest`]), and the call waits for the `answer` message
//! ([`ApprovalAnswer`]) that names it, on its own mailbox's file watch. The lead's side
//! ([`pending`], [`answer_message`]) asks its own approver — the same permission dialog its own
//! calls get, naming the teammate — and posts the answer back. A headless lead starts its
//! teammates without one, so their asks are denied at once naming the rule that would allow them.
//!
//! Answers are read ahead of the teammate's cursor without moving it; the teammate's loop drops
//! them from the mail it takes as its next turn ([`is_reply`]).

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use futures::future::BoxFuture;
use lathe_protocol::{PermissionAnswer, ToolCall, ToolPreview};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::mailbox::{Kind, LEAD, Mailbox, Message, post};
use super::watch::MailWatch;
use crate::exec::Approver;

/// How long a teammate's call waits for its lead's answer before it is denied.
pub const ANSWER_WAIT: Duration = Duration::from_secs(30 * 60);

/// What a teammate asks its lead to approve (the text of an `approval` message).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    /// The tool's model-facing name.
    pub tool: String,
    /// The call's arguments.
    pub arguments: Value,
    /// Why it needs approval (the teammate's policy decision).
    pub reason: String,
    /// The prefix rules an "always" answer stores in the teammate's settings.
    #[serde(default)]
    pub suggestion: Option<String>,
    /// What the call would do (an edit's diff, a command), as the teammate's tool shows it.
    #[serde(default)]
    pub preview: Option<ToolPreview>,
}

/// The lead's answer to one [`ApprovalRequest`] (the text of an `answer` message).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalAnswer {
    /// The id of the `approval` message answered.
    pub request: String,
    /// The answer.
    pub answer: PermissionAnswer,
}

/// Whether `message` is a reply to one of the teammate's own prompts (not mail for its model).
pub fn is_reply(message: &Message) -> bool {
    message.kind == Kind::Answer
}

/// The ids of the approval requests the lead has answered (so they wake nobody again).
#[derive(Debug, Default)]
pub struct Answered(Mutex<HashSet<String>>);

impl Answered {
    fn ids(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Records that the request `id` has been answered.
    pub fn insert(&self, id: &str) {
        self.ids().insert(id.to_string());
    }

    /// Whether `messages` hold an approval request not answered yet.
    pub fn any_open(&self, messages: &[Message]) -> bool {
        let ids = self.ids();
        messages.iter().any(|message| message.kind == Kind::Approval && !ids.contains(&message.id))
    }

    /// The approval requests of `messages` not answered yet, with the message each came in.
    /// A request whose text is not an [`ApprovalRequest`] comes as a denial-only request.
    pub fn open(&self, messages: &[Message]) -> Vec<(Message, ApprovalRequest)> {
        let ids = self.ids();
        messages
            .iter()
            .filter(|message| message.kind == Kind::Approval && !ids.contains(&message.id))
            .map(|message| {
                let request = serde_json::from_str(&message.text).unwrap_or_else(|_| ApprovalRequest {
                    tool: "unknown".into(),
                    arguments: Value::Null,
                    reason: message.text.clone(),
                    suggestion: None,
                    preview: None,
                });
                (message.clone(), request)
            })
            .collect()
    }
}

/// The call the lead's approver is asked about for `request` from `message`: the teammate's
/// tool and arguments under an id of its own, and the reason naming the teammate.
pub fn lead_prompt(message: &Message, request: &ApprovalRequest) -> (ToolCall, String) {
    let call = ToolCall {
        id: format!("teammate-{}-{}", message.from, message.id),
        name: request.tool.clone(),
        arguments: request.arguments.clone(),
        incomplete: None,
    };
    (call, format!("the teammate `{}` asks: {}", message.from, request.reason))
}

/// The `answer` message from the lead for the request `message`.
pub fn answer_message(message: &Message, answer: PermissionAnswer) -> Message {
    let text =
        serde_json::to_string(&ApprovalAnswer { request: message.id.clone(), answer }).unwrap_or_default();
    Message::new(LEAD, Kind::Answer, text)
}

/// A teammate's approver: asks the lead's user through the mailbox (see the module docs).
pub struct MailApprover {
    inbox: PathBuf,
    name: String,
    wait: Duration,
}

impl MailApprover {
    /// The approver of the teammate `name` whose team's inbox folder is `inbox`.
    pub fn new(inbox: PathBuf, name: String) -> MailApprover {
        MailApprover { inbox, name, wait: ANSWER_WAIT }
    }

    /// The same, waiting at most `wait` for an answer.
    pub fn waiting(mut self, wait: Duration) -> MailApprover {
        self.wait = wait;
        self
    }

    async fn ask_lead(&self, request: ApprovalRequest) -> Result<PermissionAnswer, String> {
        let text = serde_json::to_string(&request).map_err(|error| error.to_string())?;
        let message = Message::new(&self.name, Kind::Approval, text);
        let id = message.id.clone();
        let mailbox = Mailbox::open(&self.inbox, &self.name).map_err(|error| error.to_string())?;
        let watch = MailWatch::new(&mailbox.file()).map_err(|error| error.to_string())?;
        let inbox = self.inbox.clone();
        tokio::task::spawn_blocking(move || post(&inbox, LEAD, &message))
            .await
            .map_err(|error| error.to_string())?
            .map_err(|error| error.to_string())?;
        let deadline = tokio::time::Instant::now() + self.wait;
        loop {
            let unread = mailbox.unread().map_err(|error| error.to_string())?;
            if unread.messages.iter().any(|message| message.kind == Kind::Shutdown) {
                return Err("the lead asked this teammate to shut down".into());
            }
            let answer = unread
                .messages
                .iter()
                .filter(|message| message.kind == Kind::Answer)
                .filter_map(|message| serde_json::from_str::<ApprovalAnswer>(&message.text).ok())
                .find(|answer| answer.request == id);
            if let Some(answer) = answer {
                return Ok(answer.answer);
            }
            tokio::select! {
                () = watch.changed() => {}
                () = tokio::time::sleep_until(deadline) => {
                    return Err(format!("the lead did not answer within {} s", self.wait.as_secs()));
                }
            }
        }
    }
}

impl Approver for MailApprover {
    fn ask<'a>(
        &'a self,
        call: &'a ToolCall,
        reason: &'a str,
        suggestion: Option<&'a str>,
        preview: Option<&'a ToolPreview>,
    ) -> BoxFuture<'a, PermissionAnswer> {
        Box::pin(async move {
            let request = ApprovalRequest {
                tool: call.name.clone(),
                arguments: call.arguments.clone(),
                reason: reason.to_string(),
                suggestion: suggestion.map(str::to_string),
                preview: preview.cloned(),
            };
            match self.ask_lead(request).await {
                Ok(answer) => answer,
                Err(why) => PermissionAnswer::Deny {
                    feedback: Some(format!("nobody approved this call: {why}; do without it")),
                },
            }
        })
    }
}
