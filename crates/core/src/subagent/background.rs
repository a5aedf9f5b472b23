//! Background sub-agents (`task` with `run_in_background`): the session's table of them.
//!
//! A `task` call that runs in the background returns at once with the sub-agent's id; the
//! sub-agent runs as its own tokio task, under the parent's policy (with no approver: a call that
//! would ask is denied), hooks and remaining budget. Its end is kept here until the parent's next
//! request, which carries it as a marked notification ([`Notification`], `<task-notification>`);
//! `task_output` reads its state or report, `task_kill` cancels it (its calls are cancelled and its
//! own ledger repaired before the kill returns). When the session ends, every sub-agent still
//! running is cancelled and awaited ([`BackgroundTable::end_all`]): its report is lost.

use std::sync::{Arc, Mutex};

use lathe_protocol::RunStats;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// What a parent agent holds of its background sub-agents: their table and the slot its fork
/// calls start from.
pub struct ParentLinks {
    pub table: Arc<BackgroundTable>,
    pub fork: Arc<super::fork::ForkSlot>,
}

/// Background sub-agents running at once; a further one is refused until one ends.
pub const MAX_BACKGROUND_SUBAGENTS: usize = 4;

/// The tag that marks a background sub-agent's notification in the parent's conversation.
pub const NOTIFICATION_TAG: &str = "task-notification";

/// Characters of a running sub-agent's latest text that `task_output` shows.
const PROGRESS_CHARS: usize = 2000;

/// How a background sub-agent ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Ended {
    /// `completed`, `failed` or `killed`.
    pub status: &'static str,
    /// Its final answer (or what it had written, with why it stopped).
    pub report: String,
    /// Its requests, tool calls, tokens and estimated cost.
    pub stats: RunStats,
}

/// A background sub-agent's end, for the parent's next request.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// The sub-agent's id.
    pub agent_id: String,
    /// As in [`Ended::status`].
    pub status: &'static str,
    /// The marked user-side text the parent's conversation gets.
    pub text: String,
}

/// One background sub-agent, as `/status` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Running {
    /// Its id.
    pub agent_id: String,
    /// Its agent type, or `fork`.
    pub subagent_type: String,
    /// The call's short description.
    pub description: String,
}

struct Entry {
    info: Running,
    cancel: CancellationToken,
    handle: Option<JoinHandle<()>>,
    tool_calls: u32,
    last_text: String,
    end: Option<Ended>,
    delivered: bool,
    report_read: bool,
}

#[derive(Default)]
struct State {
    agents: Vec<Entry>,
    closed: bool,
}

/// The background sub-agents of a session (shared by `task`, `task_output`, `task_kill` and the
/// parent's loop).
#[derive(Default)]
pub struct BackgroundTable {
    state: Mutex<State>,
}

impl BackgroundTable {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Records a sub-agent about to start; its task is attached with [`BackgroundTable::attach`].
    /// Refused (with the reason) when the session has ended or [`MAX_BACKGROUND_SUBAGENTS`] run.
    pub fn insert(&self, info: Running, cancel: CancellationToken) -> Result<(), String> {
        let mut state = self.lock();
        if state.closed {
            return Err("the session is ending; no background sub-agent can start".into());
        }
        let running = state.agents.iter().filter(|entry| entry.end.is_none()).count();
        if running >= MAX_BACKGROUND_SUBAGENTS {
            return Err(format!(
                "{running} background sub-agents are running (at most {MAX_BACKGROUND_SUBAGENTS}); wait for \
                 one to finish or stop one with task_kill"
            ));
        }
        state.agents.push(Entry {
            info,
            cancel,
            handle: None,
            tool_calls: 0,
            last_text: String::new(),
            end: None,
            delivered: false,
            report_read: false,
        });
        Ok(())
    }

    /// Attaches the task that runs sub-agent `id` (awaited when it is killed or the session ends).
    pub fn attach(&self, id: &str, handle: JoinHandle<()>) {
        if let Some(entry) = self.lock().agents.iter_mut().find(|entry| entry.info.agent_id == id) {
            entry.handle = Some(handle);
        }
    }

    /// Notes the progress of sub-agent `id`: a tool call it made, or its latest text.
    pub fn progress(&self, id: &str, tool_call: bool, text: Option<String>) {
        if let Some(entry) = self.lock().agents.iter_mut().find(|entry| entry.info.agent_id == id) {
            entry.tool_calls += u32::from(tool_call);
            if let Some(text) = text.filter(|text| !text.trim().is_empty()) {
                entry.last_text = text;
            }
        }
    }

    /// Records how sub-agent `id` ended (a kill recorded first stays).
    pub fn finish(&self, id: &str, ended: Ended) {
        if let Some(entry) = self.lock().agents.iter_mut().find(|entry| entry.info.agent_id == id) {
            entry.end.get_or_insert(ended);
        }
    }

    /// The ends not yet delivered, each marked delivered now (oldest first).
    pub fn take_notifications(&self) -> Vec<Notification> {
        let mut state = self.lock();
        let mut out = Vec::new();
        for entry in state.agents.iter_mut().filter(|entry| !entry.delivered) {
            let Some(end) = &entry.end else { continue };
            entry.delivered = true;
            out.push(Notification {
                agent_id: entry.info.agent_id.clone(),
                status: end.status,
                text: notification_text(&entry.info, end, entry.report_read),
            });
        }
        out
    }

    /// What `task_output` answers for `id`: its state and progress while it runs, its report once
    /// it ended; an error naming the known ids for an unknown one.
    pub fn output(&self, id: &str) -> Result<String, String> {
        let mut state = self.lock();
        let known = known_ids(&state);
        let Some(entry) = state.agents.iter_mut().find(|entry| entry.info.agent_id == id) else {
            return Err(unknown(id, &known));
        };
        let label =
            format!("{} ({}: {})", entry.info.agent_id, entry.info.subagent_type, entry.info.description);
        match &entry.end {
            None => {
                let latest = if entry.last_text.is_empty() {
                    "(no text yet)".to_string()
                } else {
                    let text: String = entry.last_text.chars().take(PROGRESS_CHARS).collect();
                    if text.len() < entry.last_text.len() { format!("{text}…") } else { text }
                };
                Ok(format!(
                    "{label} is still running; {} tool calls so far. Its latest text:\n{latest}",
                    entry.tool_calls
                ))
            }
            Some(end) => {
                entry.report_read = true;
                Ok(format!("{label} {}; its report:\n{}", end.status, end.report))
            }
        }
    }

    /// Stops sub-agent `id` and waits until its calls are cancelled and its ledger is closed;
    /// the answer for `task_kill` (an error for an unknown id). Its end is not notified again.
    pub async fn kill(&self, id: &str) -> Result<String, String> {
        let handle = {
            let mut state = self.lock();
            let known = known_ids(&state);
            let Some(entry) = state.agents.iter_mut().find(|entry| entry.info.agent_id == id) else {
                return Err(unknown(id, &known));
            };
            if let Some(end) = &entry.end {
                return Ok(format!("{id} had already ended ({}); nothing to stop", end.status));
            }
            entry.cancel.cancel();
            entry.delivered = true;
            entry.handle.take()
        };
        if let Some(handle) = handle {
            let _ = handle.await;
        }
        let state = self.lock();
        let calls = state.agents.iter().find(|entry| entry.info.agent_id == id).map_or(0, |e| e.tool_calls);
        Ok(format!("{id} was stopped after {calls} tool calls; its report is discarded"))
    }

    /// The sub-agents still running.
    pub fn running(&self) -> Vec<Running> {
        self.lock()
            .agents
            .iter()
            .filter(|entry| entry.end.is_none())
            .map(|entry| entry.info.clone())
            .collect()
    }

    /// The session ends: no further sub-agent starts, every running one is cancelled and awaited.
    /// Returns each sub-agent whose end the conversation never got: with `None` for one that was
    /// still running (stopped now), with its status for one that ended after the last request.
    pub async fn end_all(&self) -> Vec<(Running, Option<&'static str>)> {
        let (lost, handles) = {
            let mut state = self.lock();
            state.closed = true;
            let mut lost = Vec::new();
            let mut handles = Vec::new();
            for entry in state.agents.iter_mut().filter(|entry| !entry.delivered) {
                entry.delivered = true;
                if entry.end.is_none() {
                    entry.cancel.cancel();
                    handles.extend(entry.handle.take());
                }
                lost.push((entry.info.clone(), entry.end.as_ref().map(|end| end.status)));
            }
            (lost, handles)
        };
        for handle in handles {
            let _ = handle.await;
        }
        lost
    }
}

fn known_ids(state: &State) -> Vec<String> {
    state.agents.iter().map(|entry| entry.info.agent_id.clone()).collect()
}

fn unknown(id: &str, known: &[String]) -> String {
    if known.is_empty() {
        format!("no background sub-agent has the id `{id}` (none was started in this session)")
    } else {
        format!("no background sub-agent has the id `{id}`; the ids are: {}", known.join(", "))
    }
}

/// The marked text of a notification.
fn notification_text(info: &Running, end: &Ended, report_read: bool) -> String {
    let stats = &end.stats;
    let result = if report_read { "(already read with task_output)".to_string() } else { end.report.clone() };
    format!(
        "<{NOTIFICATION_TAG}>\nA background sub-agent you started has ended.\nid: {}\ntype: {}\n\
         description: {}\nstatus: {}\nusage: {} model requests, {} tool calls, {} input tokens, {} output \
         tokens, estimated ${:.4}\nreport:\n{result}\n</{NOTIFICATION_TAG}>",
        info.agent_id,
        info.subagent_type,
        info.description,
        end.status,
        stats.turns,
        stats.tool_calls,
        stats.input_tokens,
        stats.output_tokens,
        stats.cost_usd
    )
}

/// The marked text a resumed session gets for a background sub-agent that never ended.
pub fn lost_text(info: &Running) -> String {
    format!(
        "<{NOTIFICATION_TAG}>\nid: {}\ntype: {}\ndescription: {}\nstatus: lost\nThis background sub-agent \
         did not finish: the session ended while it was running, and its report is lost.\n</{NOTIFICATION_TAG}>",
        info.agent_id, info.subagent_type, info.description
    )
}

#[cfg(test)]
#[path = "background_tests.rs"]
mod tests;
