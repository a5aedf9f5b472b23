//! Goals (FEATURES.md §K): a condition Lathe keeps working toward, judged after every turn on a
//! check command Lathe runs itself and on an evaluator request that never sees the agent's prose
//! as evidence. The goal, each check and each verdict are ledger items ([`crate::Meta`]); front
//! ends get [`GoalOutcome`] in [`crate::AgentEvent::Goal`].

use serde::{Deserialize, Serialize};

/// The marker the evaluator request's last user message starts with (a scripted model server
/// answers it by this marker).
pub const EVALUATION_MARKER: &str = "[goal evaluation]";
/// Longest goal condition, in characters.
pub const MAX_CONDITION_CHARS: usize = 4_000;
/// Iterations a goal gets unless told otherwise.
pub const DEFAULT_MAX_ITERATIONS: u32 = 20;
/// Time limit of one check command unless told otherwise, in ms.
pub const DEFAULT_CHECK_TIMEOUT_MS: u64 = 300_000;

/// What the user asked for: `/goal <condition> [--check "<command>"]`, `lathe -p … --goal …`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GoalSpec {
    /// The condition, in the user's words (at most [`MAX_CONDITION_CHARS`] characters).
    pub condition: String,
    /// The check command (`bash -c`, in the workspace and the sandbox); `None`: the evaluator
    /// alone decides, "judged from the transcript".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
    /// Iterations (turns of the agent) before the goal is `budget_limited`.
    pub max_iterations: u32,
    /// Wall-clock limit of the whole goal, in ms (`None`: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_wall_ms: Option<u64>,
    /// Time limit of one check run, in ms.
    pub check_timeout_ms: u64,
    /// Whether changes to protected files (tests, CI, build scripts) may still end as met.
    #[serde(default)]
    pub allow_test_edits: bool,
}

impl GoalSpec {
    /// A goal on `condition` with the defaults.
    pub fn new(condition: impl Into<String>, check: Option<String>) -> GoalSpec {
        GoalSpec {
            condition: condition.into(),
            check,
            max_iterations: DEFAULT_MAX_ITERATIONS,
            max_wall_ms: None,
            check_timeout_ms: DEFAULT_CHECK_TIMEOUT_MS,
            allow_test_edits: false,
        }
    }

    /// Why the goal cannot be set, if it cannot: an empty or overlong condition, an empty check.
    pub fn problem(&self) -> Option<String> {
        let chars = self.condition.chars().count();
        if self.condition.trim().is_empty() {
            return Some("the goal condition is empty".into());
        }
        if chars > MAX_CONDITION_CHARS {
            return Some(format!(
                "the goal condition is {chars} characters, over the limit of {MAX_CONDITION_CHARS}; state it shorter"
            ));
        }
        if self.check.as_deref().is_some_and(|check| check.trim().is_empty()) {
            return Some("the goal check command is empty".into());
        }
        if self.max_iterations == 0 {
            return Some("the goal needs at least 1 iteration".into());
        }
        None
    }
}

/// Where a goal stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GoalStatus {
    /// Being worked on.
    Active,
    /// Set aside by the user (cancelled mid-goal); resumable.
    Paused,
    /// The check exited 0 and the evaluator said met (or, without a check, the evaluator said met).
    Met,
    /// The evaluator judged it impossible.
    Impossible,
    /// The same reason 3 times, or no change in the workspace for 3 iterations.
    Stalled,
    /// The iteration, cost or time budget ran out.
    BudgetLimited,
    /// It would be met, but protected files (tests, CI, build scripts) changed: a person decides.
    NeedsReview,
    /// Ended by the user (`/goal clear`).
    Cleared,
}

impl GoalStatus {
    /// The name used in output (`budget_limited`).
    pub fn as_str(self) -> &'static str {
        match self {
            GoalStatus::Active => "active",
            GoalStatus::Paused => "paused",
            GoalStatus::Met => "met",
            GoalStatus::Impossible => "impossible",
            GoalStatus::Stalled => "stalled",
            GoalStatus::BudgetLimited => "budget_limited",
            GoalStatus::NeedsReview => "needs_review",
            GoalStatus::Cleared => "cleared",
        }
    }

    /// Whether the goal is over.
    pub fn is_final(self) -> bool {
        !matches!(self, GoalStatus::Active | GoalStatus::Paused)
    }
}

/// A goal's state as front ends show it (and print mode's `result.goal`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GoalOutcome {
    /// The condition.
    pub condition: String,
    /// Where it stands.
    pub status: GoalStatus,
    /// Iterations run so far.
    pub iterations: u32,
    /// The iteration budget.
    pub max_iterations: u32,
    /// The evaluator's last reason (or why the goal ended).
    pub last_reason: String,
    /// The last check's exit code (`None`: no check, or it was killed).
    pub check_exit: Option<i32>,
    /// No check command: the evaluator judged from the transcript alone.
    pub judged_from_transcript: bool,
    /// The protected files that changed, with their diff (`needs_review`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub protected_changes: Vec<ProtectedChange>,
}

/// A protected file that changed while the goal ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProtectedChange {
    /// The path, relative to the workspace.
    pub path: String,
    /// Unified diff from the recorded content to the file now (`deleted` when it is gone).
    pub diff: String,
}

/// The evaluator's answer: `{"met": bool, "reason": str, "impossible": bool}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// Whether the condition holds.
    pub met: bool,
    /// Why, in a sentence.
    pub reason: String,
    /// Whether it can never hold.
    pub impossible: bool,
}

impl Verdict {
    /// The verdict in `text`: the JSON object alone, or one JSON object inside a fenced block or
    /// prose; `met` must be a JSON boolean. `None` for anything else (counted as not met).
    pub fn parse(text: &str) -> Option<Verdict> {
        let start = text.find('{')?;
        let end = text.rfind('}')?;
        let value: serde_json::Value = serde_json::from_str(text.get(start..=end)?).ok()?;
        let met = value.get("met")?.as_bool()?;
        let reason = value.get("reason").and_then(|reason| reason.as_str()).unwrap_or("").trim().to_string();
        let impossible = value.get("impossible").and_then(|flag| flag.as_bool()).unwrap_or(false);
        Some(Verdict { met, reason, impossible })
    }
}

impl Verdict {
    /// The verdict's JSON Schema, sent as structured output where the provider takes one.
    pub fn schema() -> crate::request::ResponseFormat {
        crate::request::ResponseFormat {
            name: "goal_verdict".to_string(),
            schema: serde_json::json!({
                "type": "object",
                "properties": {
                    "met": {"type": "boolean"},
                    "reason": {"type": "string"},
                    "impossible": {"type": "boolean"}
                },
                "required": ["met", "reason", "impossible"],
                "additionalProperties": false
            }),
        }
    }
}

/// The ledger record of a goal's start ([`crate::Meta::GoalStart`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GoalStart {
    /// What the user asked for; the check command is stored here and the model cannot change it.
    pub spec: GoalSpec,
    /// Protected files as they were: path relative to the workspace and SHA-256 hex of the bytes.
    pub protected: Vec<(String, String)>,
    /// Milliseconds since the Unix epoch.
    pub started_ms: u64,
}

/// The ledger record of one iteration's verdict ([`crate::Meta::GoalVerdict`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GoalVerdict {
    /// 1-based iteration.
    pub iteration: u32,
    /// The evaluator's parsed answer; `None` when it was unparsable or the request failed.
    pub verdict: Option<Verdict>,
    /// The evaluator's raw text (cut to 2 000 characters), or the request's error.
    pub raw: String,
    /// The goal's status after this iteration.
    pub status: GoalStatus,
    /// Why (the evaluator's reason, or the rule that decided).
    pub reason: String,
}

#[cfg(test)]
#[path = "goal_tests.rs"]
mod tests;
