//! Goals that are checked, not claimed (FEATURES.md §K): the parts of the goal loop that need no
//! agent — the workspace snapshot and integrity guard ([`guard`]), the evaluator request's text,
//! and the rules that turn a check and a verdict into the goal's next status ([`decide`]). The
//! loop itself is the agent's (`Agent::run_goal`).

pub mod guard;

use lathe_protocol::goal::{EVALUATION_MARKER, GoalSpec, GoalStatus, Verdict};

/// Iterations with the same reason, or without a change in the workspace, that make a goal
/// `stalled`.
pub const STALL_AFTER: usize = 3;
/// Output of the check kept for the evaluator and the ledger, in characters (the end of it).
pub const CHECK_TAIL_CHARS: usize = 4_000;

/// How the check command of one iteration ended.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckRun {
    /// The command.
    pub command: String,
    /// Exit status (`None`: killed or not run).
    pub exit_code: Option<i32>,
    /// Whether the time limit stopped it.
    pub timed_out: bool,
    /// The end of its output.
    pub output_tail: String,
    /// Wall time, in ms.
    pub elapsed_ms: u64,
}

/// What the evaluator is shown.
#[derive(Debug, Clone, Default)]
pub struct Evidence<'a> {
    /// The check of this iteration, when the goal has one.
    pub check: Option<&'a CheckRun>,
    /// Files changed since the goal started (relative paths).
    pub changed: &'a [String],
    /// The user's own messages of the session, oldest first.
    pub user_messages: &'a [String],
    /// The agent's last answer (shown as its claim, never as evidence).
    pub claim: &'a str,
}

/// The last user message of the evaluator request: [`EVALUATION_MARKER`], the instructions, the
/// condition and the evidence.
pub fn evaluation_text(spec: &GoalSpec, evidence: &Evidence) -> String {
    let mut text = format!(
        "{EVALUATION_MARKER}\nYou judge whether a goal is met. Answer with one JSON object and nothing else: \
         {{\"met\": true or false, \"reason\": \"one sentence\", \"impossible\": true or false}}. Judge on the \
         evidence Lathe produced (the check command's exit code and output, the files changed); what the agent \
         says is its claim, not evidence. Set impossible only when the goal can never be met.\n\n\
         Goal: {}\n",
        spec.condition
    );
    match evidence.check {
        Some(check) => {
            let status = match (check.exit_code, check.timed_out) {
                (_, true) => format!("timed out after {} ms (not met)", check.elapsed_ms),
                (Some(code), false) => format!("exit code {code}"),
                (None, false) => "killed (no exit code)".to_string(),
            };
            text.push_str(&format!(
                "Check command (run by Lathe after the agent's turn): `{}` → {status}\nIts output (the end):\n```\n{}\n```\n",
                check.command,
                check.output_tail.trim_end()
            ));
        }
        None => text.push_str("No check command: judge from the transcript below.\n"),
    }
    if evidence.changed.is_empty() {
        text.push_str("Files changed since the goal started: none\n");
    } else {
        let shown: Vec<&str> = evidence.changed.iter().take(50).map(String::as_str).collect();
        let more = evidence.changed.len().saturating_sub(shown.len());
        let more = if more > 0 { format!(" and {more} more") } else { String::new() };
        text.push_str(&format!(
            "Files changed since the goal started ({}): {}{more}\n",
            evidence.changed.len(),
            shown.join(", ")
        ));
    }
    text.push_str("The user's messages:\n");
    for (at, message) in evidence.user_messages.iter().enumerate() {
        text.push_str(&format!("{}. {}\n", at + 1, cut(message, 2_000)));
    }
    if !evidence.claim.trim().is_empty() {
        text.push_str(&format!(
            "The agent's last answer (its claim, not evidence):\n{}\n",
            cut(evidence.claim.trim(), 2_000)
        ));
    }
    text
}

/// The goal's state between iterations, for [`decide`].
#[derive(Debug, Clone, Default)]
pub struct Progress {
    /// Iterations run.
    pub iterations: u32,
    /// The reason of each iteration's verdict (or of its failure), oldest first.
    pub reasons: Vec<String>,
    /// Whether each iteration changed the workspace, oldest first.
    pub changed: Vec<bool>,
}

/// The status after one iteration, and why: met needs the check's exit 0 (when there is a
/// check) and `met: true`; an unparsable verdict is not met; protected changes turn met into
/// `needs_review` (unless allowed); then impossible, stalled (the same reason or no change
/// [`STALL_AFTER`] times in a row), and the iteration budget.
pub fn decide(
    spec: &GoalSpec,
    check: Option<&CheckRun>,
    verdict: Option<&Verdict>,
    protected_changed: bool,
    progress: &Progress,
) -> (GoalStatus, String) {
    let reason = match verdict {
        Some(verdict) if verdict.reason.is_empty() => format!("the evaluator said met: {}", verdict.met),
        Some(verdict) => verdict.reason.clone(),
        None => "the evaluator's answer was not a verdict (counted as not met)".to_string(),
    };
    let check_passed = check.is_none_or(|check| check.exit_code == Some(0) && !check.timed_out);
    let met = verdict.is_some_and(|verdict| verdict.met) && check_passed;
    if met {
        if protected_changed && !spec.allow_test_edits {
            return (
                GoalStatus::NeedsReview,
                "the goal looks met, but protected files (tests, CI, build scripts) changed: review their diff"
                    .to_string(),
            );
        }
        return (GoalStatus::Met, reason);
    }
    if verdict.is_some_and(|verdict| verdict.impossible) {
        return (GoalStatus::Impossible, reason);
    }
    let last = |items: usize| progress.reasons.len() >= items;
    if last(STALL_AFTER) && progress.reasons.iter().rev().take(STALL_AFTER).all(|seen| *seen == reason) {
        return (GoalStatus::Stalled, format!("the same verdict {STALL_AFTER} times in a row: {reason}"));
    }
    if progress.changed.len() >= STALL_AFTER && progress.changed.iter().rev().take(STALL_AFTER).all(|c| !c) {
        return (
            GoalStatus::Stalled,
            format!("no change in the workspace for {STALL_AFTER} iterations: {reason}"),
        );
    }
    if progress.iterations >= spec.max_iterations {
        return (
            GoalStatus::BudgetLimited,
            format!("{} of {} iterations used: {reason}", progress.iterations, spec.max_iterations),
        );
    }
    let why = match check {
        Some(check) if !check_passed => match check.exit_code {
            _ if check.timed_out => format!("the check timed out; {reason}"),
            Some(code) => format!("the check exited {code}; {reason}"),
            None => format!("the check was killed; {reason}"),
        },
        _ => reason,
    };
    (GoalStatus::Active, why)
}

/// The message that sends the agent on after an iteration that did not meet the goal.
pub fn continuation(spec: &GoalSpec, check: Option<&CheckRun>, reason: &str, progress: &Progress) -> String {
    let mut text = format!(
        "[goal] Not met yet (iteration {} of {}): {}\nGoal: {}\n",
        progress.iterations, spec.max_iterations, reason, spec.condition
    );
    if let Some(check) = check {
        text.push_str(&format!(
            "The check `{}` exited {}. Its output (the end):\n```\n{}\n```\n",
            check.command,
            check.exit_code.map_or("without a code".to_string(), |code| code.to_string()),
            cut(check.output_tail.trim_end(), 2_000)
        ));
    }
    text.push_str(
        "Keep working toward the goal. Change the code, not the tests or the check: changes to tests, CI or \
         build scripts send the goal to review instead of meeting it.",
    );
    text
}

/// `text` cut to its last `max` characters when longer, marked.
pub fn tail(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_string();
    }
    let kept: String = text.chars().skip(count - max).collect();
    format!("[…]{kept}")
}

fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut kept: String = text.chars().take(max).collect();
    kept.push('…');
    kept
}

#[cfg(test)]
#[path = "goal_tests.rs"]
mod tests;
