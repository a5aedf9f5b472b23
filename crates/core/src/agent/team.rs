//! The lead's side of a team in its loop: its unread mail goes with each request as one marked
//! user-side message (the cursor moves once it is in the session file), and a turn the model ends
//! while teammates work waits for them ([`crate::team::lead::TeamHub::wait_for_mail`]).

use std::sync::Arc;

use lathe_protocol::{LedgerItem, StopCause, ToolSpec, UserMessage};
use tokio_util::sync::CancellationToken;

use super::Agent;
use crate::team::lead::{MateInfo, TeamHub, Wait};

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
    pub(super) fn deliver_team_mail(&mut self) {
        let Some(hub) = self.team.clone() else { return };
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
    pub(super) async fn wait_for_team(&mut self, cancel: &CancellationToken) -> Option<Option<StopCause>> {
        let hub = self.team.clone()?;
        match hub.wait_for_mail(cancel).await {
            Wait::Mail => Some(None),
            Wait::Cancelled => Some(Some(StopCause::Cancelled)),
            Wait::Settled => None,
        }
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
