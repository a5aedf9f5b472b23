//! What a sub-agent takes from its parent session ([`Parent`]), how its events reach the parent
//! ([`Forwarder`]) and the tool result its end makes ([`outcome`]); shared by the foreground
//! `task` call and the background and fork launches.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use lathe_policy::Policy;
use lathe_protocol::{AgentEvent, StopCause, SystemBlock};
use lathe_provider::Provider;
use lathe_tools::{ToolError, ToolOutput, ToolRegistry};
use tokio::sync::mpsc;

use super::background::BackgroundTable;
use super::fork::ForkSlot;
use super::usage::UsageMeter;
use crate::agent::{Agent, AgentSettings};
use crate::exec::Approver;

/// Model requests a sub-agent may make (fewer when the parent's own limit is lower).
pub const SUBAGENT_MAX_TURNS: u32 = 30;

/// Wall time a sub-agent may take before it is cancelled and reported as timed out.
pub const SUBAGENT_TIME_LIMIT: Duration = Duration::from_secs(30 * 60);

/// What a sub-agent takes from its parent session.
pub struct Parent {
    /// The provider requests go to.
    pub provider: Arc<dyn Provider>,
    /// The parent's loop settings (model, limits, pricing).
    pub settings: AgentSettings,
    /// The parent's tools (the `task` tool itself is never passed on).
    pub tools: ToolRegistry,
    /// The session's environment and instructions block, appended to each sub-agent's prompt.
    pub environment: Option<SystemBlock>,
    /// The parent's permission policy (mode, rules, path guard, sandbox), shared: every call a
    /// sub-agent makes is decided by it, as it is at that moment, never by a wider one.
    pub policy: Arc<Policy>,
    /// The parent's approver (interactive sessions).
    pub approver: Option<Arc<dyn Approver>>,
    /// The session's auto-mode reviewer: a sub-agent's calls are reviewed against the session
    /// user's messages, and count toward the same breaker.
    pub reviewer: Arc<crate::auto_mode::Reviewer>,
    /// The parent's event stream.
    pub events: mpsc::UnboundedSender<AgentEvent>,
    /// Where transcripts go (`<session>/subagents`); `None` when nothing is saved.
    pub transcripts: Option<PathBuf>,
    /// Sub-agent usage for the parent.
    pub meter: Arc<UsageMeter>,
    /// The session's hooks, which the sub-agent runs under (its stop fires SubagentStop).
    pub hooks: crate::hooks::Hooks,
    /// The session's background sub-agents.
    pub background: Arc<BackgroundTable>,
    /// The parent's last request, which a fork starts from.
    pub fork: Arc<ForkSlot>,
}

/// The tool result for a sub-agent that ended with `cause`.
pub(super) fn outcome(
    kind: &str,
    id: &str,
    cause: StopCause,
    agent: &Agent,
    max_turns: u32,
    timed_out: bool,
) -> Result<ToolOutput, ToolError> {
    let texts = agent.assistant_texts();
    let last = texts.last().cloned().unwrap_or_default();
    let so_far = if texts.is_empty() { "(no text yet)".to_string() } else { texts.join("\n\n") };
    let calls = agent.stats().tool_calls;
    let stopped = |why: String| {
        let text = format!(
            "[the {kind} sub-agent ({id}) stopped before finishing: {why}; it made {calls} tool calls. \
             What it had written so far:]\n{so_far}"
        );
        Ok(ToolOutput { is_error: true, ..ToolOutput::text(text) })
    };
    match cause {
        StopCause::Completed if last.is_empty() => {
            Ok(ToolOutput::text(format!("[the {kind} sub-agent finished without a text answer]")))
        }
        StopCause::Completed => Ok(ToolOutput::text(last)),
        StopCause::MaxTurns { .. } => Ok(ToolOutput::text(format!(
            "[partial result: the {kind} sub-agent ({id}) reached its limit of {max_turns} turns before \
             finishing; it made {calls} tool calls. What it had written so far:]\n{so_far}"
        ))),
        StopCause::Cancelled if timed_out => Err(ToolError::TimedOut(SUBAGENT_TIME_LIMIT.as_millis() as u64)),
        StopCause::Cancelled => Err(ToolError::Cancelled),
        StopCause::Budget { detail } => stopped(detail),
        StopCause::NoProgress { detail } => stopped(format!("no progress: {detail}")),
        StopCause::Refused => stopped("the model refused".into()),
        StopCause::ContextExhausted { detail } => stopped(format!("context window exhausted: {detail}")),
        StopCause::Hook { reason } => stopped(format!("a hook stopped it: {reason}")),
        StopCause::AutoBlocked { detail } => stopped(detail),
        StopCause::Error { message, .. } => stopped(format!("error: {message}")),
    }
}

/// Tags a sub-agent's events with its parent call.
#[derive(Clone)]
pub(super) struct Forwarder {
    pub parent_call_id: String,
    pub agent_id: String,
    pub kind: String,
}

impl Forwarder {
    pub(super) fn send(&self, events: &mpsc::UnboundedSender<AgentEvent>, event: AgentEvent) {
        let _ = events.send(AgentEvent::Subagent {
            parent_call_id: self.parent_call_id.clone(),
            agent_id: self.agent_id.clone(),
            subagent_type: self.kind.clone(),
            event: Box::new(event),
        });
    }

    /// Passes on what a front end shows under the parent call; streaming deltas stay behind, and
    /// an event that waits for an answer (a permission prompt) goes to the user as it is: the
    /// answer names the call.
    pub(super) fn relay(&self, events: &mpsc::UnboundedSender<AgentEvent>, event: AgentEvent) {
        if event.is_stream_delta() {
            return;
        }
        if event.needs_answer() {
            let _ = events.send(event);
        } else {
            self.send(events, event);
        }
    }
}
