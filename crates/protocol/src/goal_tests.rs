#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

#[test]
fn only_a_json_verdict_with_a_boolean_met_counts() {
    let verdict = Verdict::parse(r#"{"met": true, "reason": "pytest passed", "impossible": false}"#).unwrap();
    assert!(verdict.met && !verdict.impossible);
    assert_eq!(verdict.reason, "pytest passed");
    let fenced = "Here:\n```json\n{\"met\": false, \"reason\": \"1 failing\"}\n```";
    assert!(!Verdict::parse(fenced).unwrap().met);
    assert_eq!(Verdict::parse("the goal has not been met yet"), None);
    assert_eq!(Verdict::parse("met: true"), None);
    assert_eq!(Verdict::parse(r#"{"met": "yes"}"#), None);
    assert_eq!(Verdict::parse(r#"{"met": tru"#), None);
}

#[test]
fn a_goal_states_its_problem() {
    assert_eq!(GoalSpec::new("tests pass", None).problem(), None);
    assert!(GoalSpec::new(" ", None).problem().unwrap().contains("empty"));
    let long = GoalSpec::new("x".repeat(MAX_CONDITION_CHARS + 1), None);
    assert!(long.problem().unwrap().contains("4001 characters"));
    assert!(GoalSpec::new("ok", Some(String::new())).problem().unwrap().contains("check"));
}

#[test]
fn statuses_have_stable_names() {
    let names: Vec<&str> = [
        GoalStatus::Active,
        GoalStatus::Paused,
        GoalStatus::Met,
        GoalStatus::Impossible,
        GoalStatus::Stalled,
        GoalStatus::BudgetLimited,
        GoalStatus::NeedsReview,
    ]
    .iter()
    .map(|status| {
        assert_eq!(serde_json::to_value(status).unwrap(), status.as_str());
        status.as_str()
    })
    .collect();
    assert_eq!(names, ["active", "paused", "met", "impossible", "stalled", "budget_limited", "needs_review"]);
}
