//! `/goal` in the terminal UI: `/goal CONDITION [--check "cmd"]` sets a goal and starts working
//! toward it, `/goal` alone shows its last status, `/goal clear` ends it and `/goal budget +N`
//! raises its iteration budget (also while its turns run). The session does the work; this turns
//! the typed argument into ops and shows what the session reports.

use std::time::Instant;

use lathe_protocol::AgentOp;
use lathe_protocol::goal::{GoalOutcome, GoalStatus};

use super::cells::NoticeKind;
use super::state::{Action, UiState};

/// What `/goal ARGUMENT` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GoalCommand {
    /// `/goal`: show the status.
    Status,
    /// `/goal clear`.
    Clear,
    /// `/goal budget +N`.
    Budget(u32),
    /// `/goal CONDITION [--check "cmd"]`.
    Set(String),
}

impl GoalCommand {
    /// Parses the argument of `/goal`: `clear`, `budget +N` (or `budget N`), else a condition. A
    /// `budget` followed by something that is not a count is an error naming the form.
    pub fn parse(argument: Option<&str>) -> Result<GoalCommand, String> {
        let Some(argument) = argument.map(str::trim).filter(|argument| !argument.is_empty()) else {
            return Ok(GoalCommand::Status);
        };
        if argument == "clear" {
            return Ok(GoalCommand::Clear);
        }
        let words: Vec<&str> = argument.split_whitespace().collect();
        match words.as_slice() {
            ["budget"] => Err("goal budget: give the iterations to add, as in /goal budget +5".into()),
            ["budget", count] if count.starts_with('+') || count.chars().all(|c| c.is_ascii_digit()) => {
                match count.trim_start_matches('+').parse::<u32>() {
                    Ok(by) if by > 0 => Ok(GoalCommand::Budget(by)),
                    Ok(_) | Err(_) => Err(format!(
                        "goal budget: `{count}` is not a number of iterations; write it as /goal budget +5"
                    )),
                }
            }
            _ => Ok(GoalCommand::Set(argument.to_string())),
        }
    }
}

impl UiState {
    /// Carries out `/goal ARGUMENT`.
    pub(super) fn goal_command(&mut self, argument: Option<&str>, now: Instant) -> Vec<Action> {
        let command = match GoalCommand::parse(argument) {
            Ok(command) => command,
            Err(message) => {
                self.push_notice(NoticeKind::Warning, &message);
                return Vec::new();
            }
        };
        match command {
            GoalCommand::Status => {
                let text = match &self.goal {
                    Some(goal) => format!(
                        "goal: {} — {} after {} of {} iterations: {}",
                        goal.condition,
                        goal.status.as_str().replace('_', " "),
                        goal.iterations,
                        goal.max_iterations,
                        goal.last_reason
                    ),
                    None => "no goal; /goal CONDITION [--check \"command\"] sets one".to_string(),
                };
                self.push_notice(NoticeKind::Info, &text);
                Vec::new()
            }
            // The session cancels a goal whose turns are running, then clears it.
            GoalCommand::Clear => vec![Action::Op(AgentOp::ClearGoal)],
            GoalCommand::Budget(by) => {
                self.flash(format!("goal budget +{by}"), now);
                vec![Action::Op(AgentOp::RaiseGoalBudget { by })]
            }
            GoalCommand::Set(_) if self.is_busy() => {
                self.flash("wait for the running turn to finish (ctrl+c cancels it)", now);
                Vec::new()
            }
            GoalCommand::Set(argument) => {
                let goal = super::slash::goal_spec(&argument);
                if let Some(problem) = goal.problem() {
                    self.push_notice(NoticeKind::Warning, &format!("goal not set: {problem}"));
                    return Vec::new();
                }
                let prompt = format!("Work toward this goal: {}", goal.condition);
                let mut actions = vec![Action::Op(AgentOp::SetGoal { goal })];
                actions.extend(self.send_prompt(prompt, now));
                actions
            }
        }
    }

    /// Shows the goal's state as the session reported it; a cleared goal is gone (`/goal` then
    /// says there is none).
    pub(super) fn goal_event(&mut self, outcome: GoalOutcome) {
        let text = format!(
            "goal {}: iteration {} of {} — {}",
            outcome.status.as_str().replace('_', " "),
            outcome.iterations,
            outcome.max_iterations,
            outcome.last_reason
        );
        self.push_notice(NoticeKind::Info, &text);
        self.goal = (outcome.status != GoalStatus::Cleared).then_some(outcome);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn goal_arguments_parse_into_status_clear_budget_or_a_condition() {
        assert_eq!(GoalCommand::parse(None), Ok(GoalCommand::Status));
        assert_eq!(GoalCommand::parse(Some(" clear ")), Ok(GoalCommand::Clear));
        assert_eq!(GoalCommand::parse(Some("budget +5")), Ok(GoalCommand::Budget(5)));
        assert_eq!(GoalCommand::parse(Some("budget 12")), Ok(GoalCommand::Budget(12)));
        assert_eq!(
            GoalCommand::parse(Some("clear the cache")),
            Ok(GoalCommand::Set("clear the cache".into()))
        );
        assert_eq!(
            GoalCommand::parse(Some("budget stays under 100")),
            Ok(GoalCommand::Set("budget stays under 100".into()))
        );
        assert!(GoalCommand::parse(Some("budget +x")).unwrap_err().contains("`+x` is not a number"));
        assert!(GoalCommand::parse(Some("budget +0")).is_err());
        assert!(GoalCommand::parse(Some("budget")).unwrap_err().contains("/goal budget +5"));
    }
}
