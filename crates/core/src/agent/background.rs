//! The parent's side of background sub-agents and forks: the ends of background sub-agents
//! delivered before a request (a marked user-side message and a [`Meta::SubagentEnded`], so the
//! ledger stays valid and a resumed session knows them), the fork base recorded before a response's
//! fork calls run, the sub-agents stopped when the session ends, and those a resumed session finds
//! unfinished.

use std::collections::BTreeMap;
use std::sync::Arc;

use lathe_protocol::{AgentEvent, LedgerItem, Meta, ToolCall, UserMessage, pairing};
use tokio::sync::mpsc;

use super::Agent;
use crate::subagent::TASK_TOOL;
use crate::subagent::background::{BackgroundTable, ParentLinks, Running, lost_text};
use crate::subagent::fork::{ForkBase, ForkSlot, is_fork};

impl Agent {
    /// Delivers the ends of the background sub-agents in `table` before each request, and records
    /// in `fork` the request a response's fork calls start from.
    pub fn with_background(mut self, table: Arc<BackgroundTable>, fork: Arc<ForkSlot>) -> Agent {
        self.background = Some(ParentLinks { table, fork });
        self
    }

    /// The background sub-agents still running.
    pub fn background_running(&self) -> Vec<Running> {
        self.background.as_ref().map(|background| background.table.running()).unwrap_or_default()
    }

    /// Appends a marked notification for each background sub-agent that ended since the last
    /// request, and folds their usage into the totals.
    pub(super) fn deliver_background(&mut self, events: &mpsc::UnboundedSender<AgentEvent>) {
        let Some(background) = &self.background else { return };
        let notifications = background.table.take_notifications();
        if notifications.is_empty() {
            return;
        }
        for notification in notifications {
            self.append(LedgerItem::User(UserMessage::injected(notification.text)));
            let status = notification.status.to_string();
            self.append(LedgerItem::Meta(Meta::SubagentEnded { agent_id: notification.agent_id, status }));
        }
        self.fold_subagent_usage(events);
    }

    /// Records the request just answered and its response (the ledger's last item) as the base of
    /// the fork calls among `calls`; nothing when there are none.
    pub(super) fn record_fork_base(&self, calls: &[ToolCall]) {
        let Some(background) = &self.background else { return };
        if !calls.iter().any(|call| call.name == TASK_TOOL && is_fork(&call.arguments)) {
            return;
        }
        let items = self.transcript.items();
        let Some((LedgerItem::Assistant(response), before)) = items.split_last() else { return };
        let mut messages = pairing::paired(self.context.messages(before));
        messages.retain(|item| !matches!(item, LedgerItem::Meta(_)));
        messages.push(LedgerItem::Assistant(response.clone()));
        background.fork.set(ForkBase {
            system: self.system.clone(),
            messages,
            tools: self.offered_tools(),
            model: self.requester.model().to_string(),
        });
    }

    /// Stops the background sub-agents when the session ends; a warning for each whose end the
    /// conversation never got.
    pub async fn end_background(&mut self) -> Vec<String> {
        let Some(background) = &self.background else { return Vec::new() };
        let lost = background.table.end_all().await;
        lost.into_iter()
            .map(|(info, status)| {
                let label = format!("{} ({}: {})", info.agent_id, info.subagent_type, info.description);
                match status {
                    None => format!(
                        "background sub-agent {label} was still running when the session ended; it was \
                         stopped and its report is lost"
                    ),
                    Some(status) => format!(
                        "background sub-agent {label} ended ({status}) after the model's last request; its \
                         report was not delivered"
                    ),
                }
            })
            .collect()
    }

    /// For a resumed session: each background sub-agent the ledger started and never ended gets a
    /// marked note that it did not finish (and its end, `lost`); a warning for each.
    pub fn close_lost_background(&mut self) -> Vec<String> {
        let mut open: BTreeMap<String, Running> = BTreeMap::new();
        let mut order = Vec::new();
        for item in self.transcript.items() {
            match item {
                LedgerItem::Meta(Meta::SubagentStarted { agent_id, subagent_type, description }) => {
                    order.push(agent_id.clone());
                    open.insert(
                        agent_id.clone(),
                        Running {
                            agent_id: agent_id.clone(),
                            subagent_type: subagent_type.clone(),
                            description: description.clone(),
                        },
                    );
                }
                LedgerItem::Meta(Meta::SubagentEnded { agent_id, .. }) => {
                    open.remove(agent_id);
                }
                _ => {}
            }
        }
        let mut warnings = Vec::new();
        for id in order {
            let Some(info) = open.remove(&id) else { continue };
            self.append(LedgerItem::User(UserMessage::injected(lost_text(&info))));
            self.append(LedgerItem::Meta(Meta::SubagentEnded {
                agent_id: id.clone(),
                status: "lost".into(),
            }));
            warnings.push(format!(
                "background sub-agent {id} ({}: {}) did not finish: the session ended while it was running",
                info.subagent_type, info.description
            ));
        }
        warnings
    }
}
