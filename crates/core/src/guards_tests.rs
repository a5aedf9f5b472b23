#![allow(clippy::unwrap_used, clippy::expect_used)]

use lathe_protocol::{ToolCall, ToolResult, ToolStatus};
use serde_json::json;

use super::*;

fn shell(command: &str) -> ToolCall {
    ToolCall {
        id: "c".into(),
        name: "shell".into(),
        arguments: json!({"command": command}),
        incomplete: None,
    }
}

fn ok() -> ToolResult {
    ToolResult::text("c", "done", false, ToolStatus::Completed)
}

fn failed() -> ToolResult {
    ToolResult::text("c", "exit 1", true, ToolStatus::Completed)
}

/// Checks and (when allowed) "runs" `call` with `result`; returns whether it ran.
fn run(guard: &mut CallGuard, call: &ToolCall, result: &ToolResult) -> bool {
    match guard.check(call, 0, 1) {
        Some(_) => false,
        None => {
            guard.ran(call, true, result);
            true
        }
    }
}

#[test]
fn calls_past_the_cap_are_refused_with_the_count_and_the_cap() {
    let mut guard = CallGuard::new(16);
    let refused: Vec<usize> = (0..40)
        .filter(|&index| guard.check(&shell(&format!("echo {index} >> log.txt")), index, 40).is_some())
        .collect();
    assert_eq!(refused, (16..40).collect::<Vec<_>>());
    let refusal = guard.check(&shell("echo again"), 16, 40).unwrap();
    assert!(refusal.message.contains("made 40 tool calls") && refusal.message.contains("at most 16"));
    assert!(refusal.message.contains("Wait for the results"), "{}", refusal.message);
    // Calls refused by the cap are neither repeats nor a reason to stop.
    assert_eq!(guard.stalled(), None);
}

#[test]
fn no_cap_when_it_is_zero() {
    let mut guard = CallGuard::new(0);
    assert!((0..100).all(|index| guard.check(&shell(&format!("echo {index}")), index, 100).is_none()));
}

#[test]
fn the_same_call_is_refused_from_its_third_occurrence_whatever_its_outcome() {
    for result in [ok(), failed()] {
        let mut guard = CallGuard::new(16);
        let call = shell("echo Hello > greet.py");
        let ran: Vec<bool> = (0..5).map(|_| run(&mut guard, &call, &result)).collect();
        assert_eq!(ran, [true, true, false, false, false]);
        let reason = guard.stalled().expect("three refusals stop the run");
        assert!(reason.contains("echo Hello > greet.py"), "{reason}");
    }
}

#[test]
fn a_different_successful_mutating_call_resets_the_count() {
    let mut guard = CallGuard::new(16);
    let test = shell("cargo test");
    let sequence =
        [&test, &shell("edit 1"), &test, &shell("edit 2"), &test, &shell("edit 3"), &test, &test, &test];
    let ran: Vec<bool> = sequence.iter().map(|call| run(&mut guard, call, &ok())).collect();
    assert_eq!(ran, [true, true, true, true, true, true, true, true, false]);
    assert_eq!(guard.stalled(), None);
}

#[test]
fn a_failed_or_read_only_call_does_not_reset_the_count() {
    let mut guard = CallGuard::new(16);
    let call = shell("make");
    assert!(run(&mut guard, &call, &ok()));
    assert!(run(&mut guard, &shell("false"), &failed()));
    assert!(guard.check(&call, 0, 1).is_none());
    let read = ToolCall { name: "read_file".into(), arguments: json!({"path": "a"}), ..call.clone() };
    assert!(guard.check(&read, 0, 1).is_none());
    guard.ran(&read, false, &ok());
    assert!(guard.check(&call, 0, 1).is_some());
}

#[test]
fn after_the_third_refusal_every_later_call_is_answered_not_run() {
    let mut guard = CallGuard::new(16);
    let call = shell("echo x > y");
    for _ in 0..5 {
        run(&mut guard, &call, &ok());
    }
    let refusal = guard.check(&shell("something new"), 0, 1).expect("stopped");
    assert!(refusal.message.contains("stopped this run"), "{}", refusal.message);
}

#[test]
fn long_arguments_are_cut_in_the_message() {
    let mut guard = CallGuard::new(0);
    let call = shell(&"x".repeat(1000));
    run(&mut guard, &call, &ok());
    run(&mut guard, &call, &ok());
    let refusal = guard.check(&call, 0, 1).unwrap();
    assert!(refusal.message.len() < 500 && refusal.message.contains('…'), "{}", refusal.message);
}

#[test]
fn changes_to_a_kept_file_are_refused_and_other_calls_run() {
    let kept = KeptFiles::from_prompt("`python3 test_calc.py` fails. Fix calc.py; do not change the test.");
    let mut guard = CallGuard::new(0).keeping(kept, PathBuf::from("/ws"));
    let call = |name: &str, path: &str| ToolCall {
        id: "c".into(),
        name: name.into(),
        arguments: json!({"path": path, "content": "x"}),
        incomplete: None,
    };
    for (name, path) in [("edit_file", "test_calc.py"), ("write_file", "/ws/test_calc.py")] {
        let refusal = guard.check(&call(name, path), 0, 1).expect("refused");
        assert_eq!(
            refusal.message,
            "error: not run: the task says not to change test_calc.py. The change belongs in calc.py: read it with \
             read_file, then edit it."
        );
    }
    assert_eq!(guard.check(&call("edit_file", "calc.py"), 0, 1), None);
    assert_eq!(guard.check(&call("read_file", "test_calc.py"), 0, 1), None);
    assert_eq!(guard.check(&shell("python3 test_calc.py"), 0, 1), None);
    // Without a kept file nothing changes.
    let mut plain = CallGuard::new(0).keeping(KeptFiles::default(), PathBuf::from("/ws"));
    assert_eq!(plain.check(&call("edit_file", "test_calc.py"), 0, 1), None);
}
