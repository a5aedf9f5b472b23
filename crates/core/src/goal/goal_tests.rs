#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

fn check(code: i32) -> CheckRun {
    CheckRun {
        command: "python3 -m pytest -q".into(),
        exit_code: Some(code),
        timed_out: false,
        output_tail: "1 failed".into(),
        elapsed_ms: 5,
    }
}

fn verdict(met: bool, reason: &str) -> Verdict {
    Verdict { met, reason: reason.into(), impossible: false }
}

#[test]
fn met_needs_the_check_and_the_evaluator() {
    let spec = GoalSpec::new("tests pass", Some("python3 -m pytest -q".into()));
    let progress = Progress { iterations: 1, ..Progress::default() };
    let yes = verdict(true, "all pass");
    assert_eq!(decide(&spec, Some(&check(0)), Some(&yes), false, &progress).0, GoalStatus::Met);
    assert_eq!(decide(&spec, Some(&check(1)), Some(&yes), false, &progress).0, GoalStatus::Active);
    assert_eq!(decide(&spec, Some(&check(0)), None, false, &progress).0, GoalStatus::Active);
    assert_eq!(decide(&spec, Some(&check(0)), Some(&yes), true, &progress).0, GoalStatus::NeedsReview);
    let allowed = GoalSpec { allow_test_edits: true, ..spec.clone() };
    assert_eq!(decide(&allowed, Some(&check(0)), Some(&yes), true, &progress).0, GoalStatus::Met);
    let hung = CheckRun { timed_out: true, exit_code: Some(124), ..check(0) };
    assert_eq!(decide(&spec, Some(&hung), Some(&yes), false, &progress).0, GoalStatus::Active);
}

#[test]
fn stalls_on_the_same_reason_or_no_change_and_stops_at_the_budget() {
    let spec = GoalSpec::new("tests pass", Some("false".into()));
    let no = verdict(false, "still failing");
    let progress = Progress {
        iterations: 3,
        reasons: vec!["still failing".into(), "still failing".into(), "still failing".into()],
        changed: vec![true, true, true],
    };
    assert_eq!(decide(&spec, Some(&check(1)), Some(&no), false, &progress).0, GoalStatus::Stalled);
    let progress = Progress {
        iterations: 3,
        reasons: vec!["a".into(), "b".into(), "c".into()],
        changed: vec![false; 3],
    };
    assert_eq!(decide(&spec, Some(&check(1)), Some(&no), false, &progress).0, GoalStatus::Stalled);
    let spec = GoalSpec { max_iterations: 2, ..spec };
    let progress = Progress { iterations: 2, reasons: vec!["a".into(), "b".into()], changed: vec![true; 2] };
    assert_eq!(decide(&spec, Some(&check(1)), Some(&no), false, &progress).0, GoalStatus::BudgetLimited);
    let impossible = Verdict { impossible: true, ..no };
    let progress = Progress { iterations: 1, ..Progress::default() };
    assert_eq!(decide(&spec, Some(&check(1)), Some(&impossible), false, &progress).0, GoalStatus::Impossible);
}

#[test]
fn the_evaluator_sees_evidence_and_the_claim_marked_as_such() {
    let spec = GoalSpec::new("tests pass", Some("python3 -m pytest -q".into()));
    let run = check(1);
    let text = evaluation_text(
        &spec,
        &Evidence {
            check: Some(&run),
            changed: &["src/app.py".to_string()],
            user_messages: &["fix the add function".to_string()],
            claim: "All tests pass.",
        },
    );
    assert!(text.starts_with(EVALUATION_MARKER));
    assert!(text.contains("`python3 -m pytest -q` → exit code 1"), "{text}");
    assert!(text.contains("Files changed since the goal started (1): src/app.py"));
    assert!(text.contains("1. fix the add function"));
    assert!(text.contains("(its claim, not evidence):\nAll tests pass."));
}
