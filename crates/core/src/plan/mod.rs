//! Plan mode as a flow (see [`lathe_protocol::plan`]): in plan mode the model may only read, and
//! presents its plan with [`ExitPlanMode`] (`exit_plan_mode {plan}`), a tool offered only while
//! the session is in plan mode ([`offered`]).
//!
//! Flow of one call: refused outside plan mode (before anyone is asked) → the plan text (the
//! argument, or the plan file the model wrote when the argument is empty) is saved to the plan
//! file `<lathe_home>/plans/<session>.md` → the [`PlanDesk`] announces it
//! ([`AgentEvent::PlanReady`]) → interactive: waits for the user's
//! [`lathe_protocol::AgentOp::PlanAnswer`], delivered by the session task, and tells the model
//! the answer (approved, in the mode the front end switched to with `SetMode`; or keep planning,
//! with the user's feedback); headless: nobody answers, and the run ends with the plan as its
//! result. This module never changes the permission mode: leaving plan mode is the front end's
//! explicit `SetMode`.

mod tool;

use lathe_policy::PermissionMode;
use lathe_protocol::plan::{PlanAnswer, PlanReady};
use lathe_protocol::{AgentEvent, ToolSpec};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

pub use self::tool::ExitPlanMode;

/// The model-facing name of the tool that presents a plan.
pub const EXIT_PLAN_MODE: &str = "exit_plan_mode";

/// Whether a request in `mode` offers the tool `name`: `exit_plan_mode` only in plan mode.
pub(crate) fn is_offered(name: &str, mode: PermissionMode) -> bool {
    name != EXIT_PLAN_MODE || mode == PermissionMode::Plan
}

/// The specs of `specs` a request offers in `mode` ([`is_offered`]).
pub(crate) fn offered(specs: Vec<ToolSpec>, mode: PermissionMode) -> Vec<ToolSpec> {
    specs.into_iter().filter(|spec| is_offered(&spec.name, mode)).collect()
}

/// Who answers a presented plan.
enum Reviewer {
    /// Nobody (print mode): the run ends with the plan.
    Headless,
    /// A person, through the event stream; `modes` is the front end's permission mode, read when
    /// the answer arrives (a front end that runs the plan has just set it).
    Interactive { modes: watch::Receiver<PermissionMode> },
}

/// What became of a presented plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reviewed {
    /// Nobody answers: the plan is the run's result.
    Headless,
    /// The user answered; `mode` is the permission mode in force from the next call on.
    Answered { answer: PlanAnswer, mode: PermissionMode },
    /// The turn was cancelled (or the front end went away) before an answer.
    Cancelled,
}

/// Presents plans to the front end and matches its answers to the waiting calls by call id (as
/// the approver does with permission prompts).
pub struct PlanDesk {
    events: mpsc::UnboundedSender<AgentEvent>,
    reviewer: Reviewer,
    waiting: crate::awaited::Awaited<PlanAnswer>,
}

impl PlanDesk {
    /// A desk for a headless session: plans are announced, nobody is waited for.
    pub(crate) fn headless(events: mpsc::UnboundedSender<AgentEvent>) -> PlanDesk {
        PlanDesk { events, reviewer: Reviewer::Headless, waiting: Default::default() }
    }

    /// A desk for an interactive session whose front end's mode changes arrive on `modes`.
    pub(crate) fn interactive(
        events: mpsc::UnboundedSender<AgentEvent>,
        modes: watch::Receiver<PermissionMode>,
    ) -> PlanDesk {
        PlanDesk { events, reviewer: Reviewer::Interactive { modes }, waiting: Default::default() }
    }

    /// Delivers the user's answer for `call_id`; `false` when no plan of that call is waiting.
    pub(crate) fn answer(&self, call_id: &str, answer: PlanAnswer) -> bool {
        self.waiting.answer(call_id, answer)
    }

    /// Announces `ready` and, in an interactive session, waits for the answer or `cancel`.
    pub(crate) async fn present(&self, ready: PlanReady, cancel: &CancellationToken) -> Reviewed {
        let modes = match &self.reviewer {
            Reviewer::Headless => {
                let _ = self.events.send(AgentEvent::PlanReady(ready));
                return Reviewed::Headless;
            }
            Reviewer::Interactive { modes } => modes,
        };
        let call_id = ready.call_id.clone();
        let announce = || self.events.send(AgentEvent::PlanReady(ready)).is_ok();
        let answer = self.waiting.wait(&call_id, announce, cancel).await;
        match answer {
            Some(answer) => Reviewed::Answered { answer, mode: *modes.borrow() },
            None => Reviewed::Cancelled,
        }
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
