use super::*;
use crate::event::Usage;
use crate::ledger::{AssistantMessage, Content, FileLines, Receipt, UserMessage};
use pretty_assertions::assert_eq;
use serde_json::json;

fn user(text: &str) -> LedgerItem {
    LedgerItem::User(UserMessage::text(text))
}

fn said(text: &str) -> LedgerItem {
    LedgerItem::Assistant(AssistantMessage {
        content: vec![Content::text(text)],
        stop: StopReason::EndTurn,
        usage: Usage::default(),
        model: "m".into(),
    })
}

fn called(id: &str, name: &str, arguments: serde_json::Value) -> LedgerItem {
    LedgerItem::Assistant(AssistantMessage {
        content: vec![Content::ToolCall(ToolCall {
            id: id.into(),
            name: name.into(),
            arguments,
            incomplete: None,
        })],
        stop: StopReason::ToolUse,
        usage: Usage::default(),
        model: "m".into(),
    })
}

fn result(id: &str, status: ToolStatus, is_error: bool, receipt: Receipt) -> LedgerItem {
    LedgerItem::ToolResult(ToolResult {
        call_id: id.into(),
        content: vec![Content::text("output")],
        is_error,
        status,
        receipt: Some(receipt),
    })
}

/// An `edit_file` call of `path` and its successful result adding `added` and removing `removed`.
fn edit(id: &str, path: &str, added: u32, removed: u32) -> Vec<LedgerItem> {
    let change = FileLines { path: path.into(), added, removed };
    let receipt = Receipt {
        tool: "edit_file".into(),
        summary: path.into(),
        change: Some(change),
        ..Receipt::default()
    };
    vec![called(id, "edit_file", json!({"path": path})), result(id, ToolStatus::Completed, false, receipt)]
}

/// A `shell` call of `command` that ran and exited `exit_code`.
fn shell(id: &str, command: &str, exit_code: i32) -> Vec<LedgerItem> {
    let receipt = Receipt {
        tool: "shell".into(),
        summary: command.into(),
        exit_code: Some(exit_code),
        ..Receipt::default()
    };
    vec![
        called(id, "shell", json!({"command": command})),
        result(id, ToolStatus::Completed, exit_code != 0, receipt),
    ]
}

fn check(command: &str, exit_code: Option<i32>) -> LedgerItem {
    LedgerItem::Meta(Meta::GoalCheck {
        iteration: 1,
        command: command.into(),
        exit_code,
        timed_out: false,
        output_tail: String::new(),
        elapsed_ms: 5,
    })
}

fn run(parts: Vec<Vec<LedgerItem>>) -> Vec<LedgerItem> {
    parts.into_iter().flatten().collect()
}

fn claim(sentence: &str, reason: &str) -> Claim {
    Claim { sentence: sentence.into(), reason: reason.into() }
}

#[test]
fn the_report_lists_files_with_summed_counts_commands_and_checks() {
    let items = run(vec![
        vec![user("fix it")],
        edit("e1", "src/app.py", 10, 2),
        edit("e2", "tests/test_app.py", 2, 1),
        edit("e3", "src/app.py", 1, 1),
        shell("s1", "ls", 0),
        shell("s2", "python3 -m pytest -q", 1),
        vec![check("make check", Some(0)), said("Done.")],
    ]);
    let report = RunReport::from_ledger(&items, 0);
    assert_eq!(
        report.files,
        vec![
            FileChanged { path: "src/app.py".into(), added: 11, removed: 3 },
            FileChanged { path: "tests/test_app.py".into(), added: 2, removed: 1 },
        ]
    );
    assert_eq!(
        report.commands,
        vec![
            CommandRun { command: "ls".into(), exit_code: Some(0), test: false },
            CommandRun { command: "python3 -m pytest -q".into(), exit_code: Some(1), test: true },
        ]
    );
    assert_eq!(report.checks, vec![CheckRun { command: "make check".into(), exit_code: Some(0) }]);
    assert_eq!(report.claims, vec![]);
}

#[test]
fn a_claim_after_a_passing_test_is_not_flagged() {
    let items = run(vec![
        edit("e1", "src/app.py", 1, 1),
        shell("s1", "python3 -m pytest -q", 0),
        vec![said("Fixed, all tests pass.")],
    ]);
    assert_eq!(RunReport::from_ledger(&items, 0).claims, vec![]);
}

#[test]
fn a_claim_after_a_failing_test_is_flagged_with_its_exit_status() {
    let items = run(vec![
        edit("e1", "src/app.py", 1, 1),
        shell("s1", "python3 -m pytest -q", 0),
        shell("s2", "python3 -m pytest -q", 1),
        vec![said("I changed the parser. Fixed, all tests pass.")],
    ]);
    assert_eq!(
        RunReport::from_ledger(&items, 0).claims,
        vec![claim("Fixed, all tests pass.", "the last test run (`python3 -m pytest -q`) exited 1")]
    );
}

#[test]
fn a_claim_with_no_test_after_the_last_edit_is_flagged() {
    let items = run(vec![edit("e1", "src/x.py", 3, 0), vec![said("The bug is fixed.")]]);
    assert_eq!(
        RunReport::from_ledger(&items, 0).claims,
        vec![claim("The bug is fixed.", "no test ran after the last change to src/x.py")]
    );
}

#[test]
fn a_test_run_before_the_last_edit_does_not_back_a_claim() {
    let items = run(vec![
        edit("e1", "src/x.py", 3, 0),
        shell("s1", "cargo test", 0),
        edit("e2", "src/y.py", 1, 0),
        shell("s2", "git diff", 0),
        vec![said("Tests are passing now.")],
    ]);
    assert_eq!(
        RunReport::from_ledger(&items, 0).claims,
        vec![claim("Tests are passing now.", "no test ran after the last change to src/y.py")]
    );
}

#[test]
fn a_claim_in_a_run_that_ran_nothing_is_flagged() {
    let items = vec![user("does it work?"), said("Yes, I verified it.")];
    assert_eq!(
        RunReport::from_ledger(&items, 0).claims,
        vec![claim("Yes, I verified it.", "no test ran in this run")]
    );
}

#[test]
fn naming_a_file_the_run_did_not_change_is_flagged() {
    let items = run(vec![
        edit("e1", "src/app.py", 1, 1),
        shell("s1", "pytest", 0),
        vec![said("I updated `src/app.py` and `config.toml`. All tests pass.")],
    ]);
    assert_eq!(
        RunReport::from_ledger(&items, 0).claims,
        vec![claim("I updated `src/app.py` and `config.toml`.", "config.toml was not changed in this run")]
    );
}

#[test]
fn a_negated_claim_is_not_flagged() {
    let items = run(vec![
        edit("e1", "app.py", 1, 1),
        vec![said("It is not fixed yet: the tests still fail and I could not verify the cause.")],
    ]);
    assert_eq!(RunReport::from_ledger(&items, 0).claims, vec![]);
}

#[test]
fn a_goal_check_counts_as_a_test_run() {
    let passing =
        run(vec![edit("e1", "app.py", 1, 1), vec![check("./check.sh", Some(0)), said("It works now.")]]);
    assert_eq!(RunReport::from_ledger(&passing, 0).claims, vec![]);
    let failing =
        run(vec![edit("e1", "app.py", 1, 1), vec![check("./check.sh", Some(2)), said("It works now.")]]);
    assert_eq!(
        RunReport::from_ledger(&failing, 0).claims,
        vec![claim("It works now.", "the last goal check (`./check.sh`) exited 2")]
    );
}

#[test]
fn a_build_backs_a_build_claim_but_not_a_test_claim() {
    let items = run(vec![
        edit("e1", "src/lib.rs", 1, 1),
        shell("s1", "cargo build", 0),
        vec![said("The build succeeds. All tests pass.")],
    ]);
    assert_eq!(
        RunReport::from_ledger(&items, 0).claims,
        vec![claim("All tests pass.", "no test ran after the last change to src/lib.rs")]
    );
}

#[test]
fn a_continued_run_reports_only_on_its_own_items() {
    let earlier = run(vec![
        vec![user("first")],
        edit("e1", "old.py", 5, 0),
        shell("s1", "pytest", 0),
        vec![said("Done.")],
    ]);
    let from = earlier.len();
    let items = run(vec![earlier, vec![user("again")], vec![said("All tests pass.")]]);
    let report = RunReport::from_ledger(&items, from);
    assert_eq!(report.files, vec![]);
    assert_eq!(report.commands, vec![]);
    assert_eq!(report.claims, vec![claim("All tests pass.", "no test ran in this run")]);
    assert!(RunReport::from_ledger(&items, items.len() + 3).is_empty());
}

#[test]
fn denied_and_failed_calls_are_not_listed_and_an_interrupted_one_has_no_exit_status() {
    let receipt = |exit_code| Receipt { tool: "shell".into(), exit_code, ..Receipt::default() };
    let change = Receipt {
        tool: "edit_file".into(),
        change: Some(FileLines { path: "a.py".into(), added: 1, removed: 0 }),
        ..Receipt::default()
    };
    let items = vec![
        called("d", "shell", json!({"command": "rm -rf /"})),
        result("d", ToolStatus::Denied, true, receipt(None)),
        called("f", "edit_file", json!({"path": "a.py"})),
        result("f", ToolStatus::Failed, true, change),
        called("i", "shell", json!({"command": "pytest"})),
        result("i", ToolStatus::Interrupted, true, receipt(Some(0))),
        said("All tests pass."),
    ];
    let report = RunReport::from_ledger(&items, 0);
    assert_eq!(report.files, vec![]);
    assert_eq!(report.commands, vec![CommandRun { command: "pytest".into(), exit_code: None, test: true }]);
    assert_eq!(report.claims, vec![claim("All tests pass.", "the last test run (`pytest`) did not finish")]);
}

#[test]
fn the_final_answer_is_the_last_message_with_its_continued_parts() {
    let cut = LedgerItem::Assistant(AssistantMessage {
        content: vec![Content::text("Fixed the bug")],
        stop: StopReason::MaxTokens,
        usage: Usage::default(),
        model: "m".into(),
    });
    let items = vec![
        said("Tests pass, I think."),
        user("next"),
        cut,
        LedgerItem::User(UserMessage::injected("continue")),
        said(" in app.py."),
    ];
    assert_eq!(final_answer(&items), "Fixed the bug in app.py.");
    assert_eq!(
        RunReport::from_ledger(&items, 0).claims,
        vec![
            claim("Fixed the bug in app.py.", "no test ran in this run"),
            claim("Fixed the bug in app.py.", "app.py was not changed in this run"),
        ]
    );
}

#[test]
fn the_report_serialises_with_snake_case_fields() {
    let report = RunReport {
        files: vec![FileChanged { path: "a.py".into(), added: 1, removed: 2 }],
        commands: vec![CommandRun { command: "pytest".into(), exit_code: Some(1), test: true }],
        checks: vec![CheckRun { command: "make check".into(), exit_code: None }],
        claims: vec![claim("Fixed.", "why")],
    };
    let value = serde_json::to_value(&report).unwrap_or_default();
    assert_eq!(
        value,
        json!({
            "files": [{"path": "a.py", "added": 1, "removed": 2}],
            "commands": [{"command": "pytest", "exit_code": 1, "test": true}],
            "checks": [{"command": "make check", "exit_code": null}],
            "claims": [{"sentence": "Fixed.", "reason": "why"}],
        })
    );
    assert_eq!(serde_json::from_value::<RunReport>(value).ok(), Some(report));
    assert_eq!(serde_json::from_value::<RunReport>(json!({})).ok(), Some(RunReport::default()));
}
