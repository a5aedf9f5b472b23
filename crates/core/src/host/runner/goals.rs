//! The goal ops of the session task: `/goal clear` ([`AgentOp::ClearGoal`]) and `/goal budget +N`
//! ([`AgentOp::RaiseGoalBudget`]) between turns. A goal set but not started yet changes in the
//! runner alone; one in the ledger (active, paused by a cancel, or `budget_limited` for a raise)
//! gets a `goal_end` or `goal_budget` item, so a resumed session sees the same goal.
//!
//! [`AgentOp::ClearGoal`]: lathe_protocol::AgentOp::ClearGoal
//! [`AgentOp::RaiseGoalBudget`]: lathe_protocol::AgentOp::RaiseGoalBudget

use lathe_protocol::goal::{GoalOutcome, GoalStatus};
use lathe_protocol::{AgentEvent, LedgerItem, Meta};

use super::Runner;
use crate::agent::ResumedGoal;

/// The reason a cleared goal records.
const CLEARED: &str = "cleared by the user (/goal clear)";

/// What front ends are told about `goal` standing at `status` for `reason`.
fn outcome(goal: &ResumedGoal, status: GoalStatus, reason: String) -> GoalOutcome {
    GoalOutcome {
        condition: goal.spec.condition.clone(),
        status,
        iterations: goal.iterations,
        max_iterations: goal.spec.max_iterations,
        last_reason: reason,
        check_exit: None,
        judged_from_transcript: goal.spec.check.is_none(),
        protected_changes: Vec::new(),
    }
}

impl Runner {
    /// Tells the terminal UI (`/goal`) about the goal a resumed session goes on with; print mode
    /// has the warning.
    pub(super) fn announce_resumed_goal(&self, goal: &ResumedGoal) {
        if self.approver.is_some() {
            let outcome = outcome(goal, GoalStatus::Active, "resumed with the session".into());
            let _ = self.events.send(AgentEvent::Goal { outcome });
        }
    }

    /// Ends the goal: drops one not started yet, or records the ledger's active or paused goal as
    /// `cleared`.
    pub(super) fn clear_goal(&mut self) {
        if let Some(spec) = self.goal.take() {
            let goal = ResumedGoal { spec, iterations: 0, protected: Vec::new() };
            let outcome = outcome(&goal, GoalStatus::Cleared, CLEARED.into());
            let _ = self.events.send(AgentEvent::Goal { outcome });
            return;
        }
        match self.agent.last_goal() {
            Some((goal, None | Some(GoalStatus::Paused))) => {
                self.resumed_goal = None;
                self.agent.append(LedgerItem::Meta(Meta::GoalEnd {
                    status: GoalStatus::Cleared.as_str().to_string(),
                    reason: CLEARED.to_string(),
                }));
                self.agent.sync();
                let outcome = outcome(&goal, GoalStatus::Cleared, CLEARED.into());
                let _ = self.events.send(AgentEvent::Goal { outcome });
            }
            Some((_, Some(_))) | None => self.warn("goal: no goal to clear".into()),
        }
    }

    /// Raises the goal's iteration budget by `by`: the one not started yet, or the ledger's active
    /// goal, or one that ended `budget_limited` (active again: the next input goes on with it).
    pub(super) fn raise_goal_budget(&mut self, by: u32) {
        if by == 0 {
            self.warn("goal budget: give the iterations to add, as in /goal budget +5".into());
            return;
        }
        if let Some(spec) = &mut self.goal {
            spec.max_iterations = spec.max_iterations.saturating_add(by);
            return;
        }
        match self.agent.last_goal() {
            Some((mut goal, None | Some(GoalStatus::BudgetLimited))) => {
                goal.spec.max_iterations = goal.spec.max_iterations.saturating_add(by);
                self.agent
                    .append(LedgerItem::Meta(Meta::GoalBudget { max_iterations: goal.spec.max_iterations }));
                self.agent.sync();
                let reason = format!("the budget is now {} iterations", goal.spec.max_iterations);
                let outcome = outcome(&goal, GoalStatus::Active, reason);
                let _ = self.events.send(AgentEvent::Goal { outcome });
                self.resumed_goal = Some(goal);
            }
            Some((_, Some(status))) => self.warn(format!(
                "goal budget: the goal ended {}; only an active or budget-limited goal gets more iterations",
                status.as_str().replace('_', " ")
            )),
            None => self.warn("goal budget: no goal; /goal CONDITION sets one".into()),
        }
    }
}
