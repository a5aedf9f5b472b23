//! The lead's side of a team in its loop: its unread mail goes with each request as one marked
//! user-side message (the cursor moves once it is in the session file), and a turn the model ends
//! while teammates work waits for them ([`crate::team::lead::TeamHub::wait_for_mail`]).

use std::sync::Arc;

use lathe_protocol::{LedgerItem, PermissionAnswer, StopCause, ToolSpec, UserMessage};
use tokio_util::sync::CancellationToken;

use super::Agent;
use crate::team::approval::{ApprovalRequest, lead_prompt};
use crate::team::lead::{MateInfo, TeamHub, Wait};
use crate::team::mailbox::Message;

impl Agent {
    /// Makes this agent the lead of the teams `hub` creates.
    pub fn with_team(mut self, hub: Arc<TeamHub>) -> Agent {
        self.team = Some(hub);
        self
    }

    /// The teammates of the team this agent leads.
    pub fn team_members(&self) -> Vec<MateInfo> {
        self.team.as_ref().map(|hub| hub.members()).unwrap_or_default()
    }

    /// Appends the lead's unread mail; the cursor moves past it once it is in the session file.
    /// Teammates' approval requests among it are put to this session's approver first.
    pub(super) async fn deliver_team_mail(&mut self) {
        let Some(hub) = self.team.clone() else { return };
        self.answer_approvals(&hub).await;
        let Some(delivery) = hub.take_mail() else { return };
        for note in delivery.skipped {
            self.transcript.warn(format!("team mail: {note}"));
        }
        if delivery.text.is_empty() {
            return;
        }
        self.append(LedgerItem::User(UserMessage::injected(delivery.text)));
        self.sync();
        if let Err(error) = hub.commit(delivery.end) {
            self.transcript
                .warn(format!("team mail: the read cursor was not saved ({error}); the mail may come again"));
        }
    }

    /// At the end of a response without calls: `Some(None)` when mail came and the turn goes on,
    /// `Some(Some(cause))` when it was cancelled while waiting, `None` when the team is settled.
    /// A teammate's approval request is put to this session's approver (the user's permission
    /// dialog; headless, a denial) and answered while the wait goes on.
    pub(super) async fn wait_for_team(&mut self, cancel: &CancellationToken) -> Option<Option<StopCause>> {
        let hub = self.team.clone()?;
        loop {
            match hub.wait_for_mail(cancel).await {
                Wait::Mail => {
                    if !self.answer_approvals(&hub).await {
                        return Some(None);
                    }
                }
                Wait::Cancelled => return Some(Some(StopCause::Cancelled)),
                Wait::Settled => return None,
            }
        }
    }

    /// Puts the teammates' open approval requests to this session's approver and posts the
    /// answers; whether there were any.
    async fn answer_approvals(&self, hub: &TeamHub) -> bool {
        let open = hub.open_approvals();
        for (message, request) in &open {
            let answer = self.ask_for_teammate(message, request).await;
            hub.answer_approval(message, answer);
        }
        !open.is_empty()
    }

    /// The user's answer to a teammate's approval request (a denial when nobody can be asked).
    async fn ask_for_teammate(&self, message: &Message, request: &ApprovalRequest) -> PermissionAnswer {
        let Some(approver) = self.controls.approver() else {
            return PermissionAnswer::Deny {
                feedback: Some("nobody can approve it: the lead runs headless".into()),
            };
        };
        let (call, reason) = lead_prompt(message, request);
        approver.ask(&call, &reason, request.suggestion.as_deref(), request.preview.as_ref()).await
    }

    /// `specs` as a lead in coordinator mode may use them: its read-only tools only (the team's
    /// and the board's among them).
    pub(super) fn coordinated(&self, mut specs: Vec<ToolSpec>) -> Vec<ToolSpec> {
        if self.team.as_ref().is_some_and(|hub| hub.coordinator()) {
            specs.retain(|spec| crate::team::coordinator::dispatches(self.tools.get(&spec.name).as_deref()));
        }
        specs
    }

    /// Ends the teammates with the session; a warning for each that had to be stopped.
    pub async fn end_team(&mut self) -> Vec<String> {
        match self.team.clone() {
            Some(hub) => hub.end_all().await,
            None => Vec::new(),
        }
    }
}
