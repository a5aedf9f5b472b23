//! Plan mode as a flow: the model, in plan mode, presents its plan with `exit_plan_mode {plan}`;
//! the loop tells the front end with [`AgentEvent::PlanReady`](crate::AgentEvent::PlanReady) and
//! waits for [`AgentOp::PlanAnswer`](crate::AgentOp::PlanAnswer). The answer never changes the
//! permission mode by itself: a front end that runs the plan leaves plan mode first, explicitly,
//! with [`AgentOp::SetMode`](crate::AgentOp::SetMode), then approves.

use serde::{Deserialize, Serialize};

/// A plan the model presented, waiting for the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanReady {
    /// The `exit_plan_mode` call that presented it (the answer names it).
    pub call_id: String,
    /// The plan, in markdown.
    pub plan: String,
    /// The plan file it was saved to (`~/.lathe/plans/<session>.md`); `None` when it could not
    /// be written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_file: Option<String>,
}

/// The user's answer to a presented plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum PlanAnswer {
    /// Carry the plan out, in the permission mode the front end set just before with
    /// `AgentOp::SetMode` (`accept-edits`: edits run unasked; `default`: each edit asks).
    Approve,
    /// Stay in plan mode and change nothing; the feedback goes to the model with the call's
    /// result.
    KeepPlanning {
        /// What the user wants changed in the plan (may be empty).
        feedback: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AgentOp;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_plan_answer_reads_like_a_permission_answer() {
        let op = AgentOp::PlanAnswer {
            call_id: "call_1".into(),
            answer: PlanAnswer::KeepPlanning { feedback: "split step 2".into() },
        };
        let json = serde_json::to_value(&op).unwrap_or_default();
        assert_eq!(
            json,
            serde_json::json!({"op": "plan_answer", "call_id": "call_1",
                               "answer": {"answer": "keep_planning", "feedback": "split step 2"}})
        );
        let back: Result<AgentOp, _> = serde_json::from_value(json);
        assert_eq!(back.ok(), Some(op));
    }
}
