#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The check a prompt names, the one Lathe derives, and the run's verification state read from
//! its ledger items.

use lathe_protocol::{
    AssistantMessage, Content, FileLines, LedgerItem, Receipt, StopReason, ToolCall, ToolResult, ToolStatus,
    Usage,
};
use serde_json::json;

use super::{State, copied_example, derived_check, named_command, state};

#[test]
fn the_prompt_names_its_check_in_backticks_or_as_a_bare_command() {
    assert_eq!(named_command("Fix it; `python3 app.py` must print 3").as_deref(), Some("python3 app.py"));
    assert_eq!(named_command("make python3 greet.py print Hello.").as_deref(), Some("python3 greet.py"));
    assert_eq!(named_command("the tests (run pytest) fail").as_deref(), Some("pytest"));
    assert_eq!(named_command("Run `npm test` after").as_deref(), Some("npm test"));
    assert_eq!(named_command("Fix the typo in greet.py"), None);
    assert_eq!(named_command("the `name` field is wrong"), None);
}

#[test]
fn the_derived_check_runs_a_main_block_and_compiles_a_module() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("app.py"),
        "def f():\n    pass\n\nif __name__ == \"__main__\":\n    f()\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("lib.py"), "def g():\n    return 1\n").unwrap();
    let files = |names: &[&str]| names.iter().map(|name| name.to_string()).collect::<Vec<_>>();
    assert_eq!(derived_check(&files(&["app.py"]), dir.path()).as_deref(), Some("python3 app.py"));
    assert_eq!(
        derived_check(&files(&["lib.py"]), dir.path()).as_deref(),
        Some("python3 -m py_compile lib.py")
    );
    assert_eq!(derived_check(&files(&["notes.md"]), dir.path()), None);
}

fn call(id: &str, name: &str, arguments: serde_json::Value) -> LedgerItem {
    LedgerItem::Assistant(AssistantMessage {
        content: vec![Content::ToolCall(ToolCall {
            id: id.into(),
            name: name.into(),
            arguments,
            incomplete: None,
        })],
        stop: StopReason::ToolUse,
        usage: Usage::default(),
        model: String::new(),
    })
}

fn result(id: &str, tool: &str, exit_code: Option<i32>, change: Option<&str>, output: &str) -> LedgerItem {
    let mut result =
        ToolResult::text(id, output, exit_code.is_some_and(|code| code != 0), ToolStatus::Completed);
    result.receipt = Some(Receipt {
        tool: tool.into(),
        exit_code,
        change: change.map(|path| FileLines { path: path.into(), added: 1, removed: 1 }),
        ..Receipt::default()
    });
    LedgerItem::ToolResult(result)
}

#[test]
fn the_state_follows_the_last_change_and_the_checks_after_it() {
    let edit = [
        call("e", "edit_file", json!({"path": "greet.py"})),
        result("e", "edit_file", None, Some("greet.py"), "ok"),
    ];
    let run = |id: &str, command: &str, code: i32| {
        [
            call(id, "shell", json!({"command": command})),
            result(id, "shell", Some(code), None, "Traceback: boom"),
        ]
    };
    assert_eq!(state(&[], None), State::Unchanged);
    assert_eq!(state(&edit, None), State::NotRun { files: vec!["greet.py".into()] });
    let passed: Vec<LedgerItem> = edit.iter().cloned().chain(run("r", "python3 greet.py", 0)).collect();
    assert_eq!(state(&passed, None), State::Passed);
    let failed: Vec<LedgerItem> = edit.iter().cloned().chain(run("r", "python3 greet.py", 1)).collect();
    assert!(
        matches!(state(&failed, None), State::Failed { exit_code: Some(1), ref output, .. } if output.contains("boom"))
    );
    // A passing check, then another change: not verified again.
    let again: Vec<LedgerItem> = passed.iter().cloned().chain(edit.iter().cloned()).collect();
    assert_eq!(state(&again, None), State::NotRun { files: vec!["greet.py".into()] });
    // An unrelated command is no check; with a named command only that one counts.
    let other: Vec<LedgerItem> = edit.iter().cloned().chain(run("r", "ls", 0)).collect();
    assert_eq!(state(&other, None), State::NotRun { files: vec!["greet.py".into()] });
    assert_eq!(state(&passed, Some("pytest")), State::NotRun { files: vec!["greet.py".into()] });
    let named: Vec<LedgerItem> = edit.iter().cloned().chain(run("r", "cd . && pytest -q", 0)).collect();
    assert_eq!(state(&named, Some("pytest")), State::Passed);
}

#[test]
fn a_change_task_is_told_from_a_question() {
    use super::asks_for_a_change;
    assert!(asks_for_a_change("Add a function multiply(a, b) to mathutil.py."));
    assert!(asks_for_a_change("Make `python3 test_calc.py` pass by fixing calc.py"));
    assert!(!asks_for_a_change("How many rows of data does people.csv have?"));
    assert!(!asks_for_a_change("Explain what main.py does"));
}

#[test]
fn an_answer_with_the_local_examples_words_copies_it_unless_the_prompt_has_them() {
    let example = "zz_sample.py line 1 now says Quirk; running it printed Quirk mode.";
    assert_eq!(copied_example(example, "Fix the typo in greet.py"), Some("zz_sample"));
    assert_eq!(copied_example("Fixed QWIRK in app.py", "Fix the typo in app.py"), Some("qwirk"));
    assert_eq!(copied_example("greet.py line 2 now says Hello.", "Fix the typo in greet.py"), None);
    assert_eq!(copied_example("Renamed qwirk to quark.", "Rename the function qwirk to quark"), None);
    // Every sentence of the example's answer in the prompt trips the check.
    let prompt = crate::prompt::LOCAL_CORE;
    let start = prompt.find("\"answer\": \"").unwrap() + 11;
    let sentence = &prompt[start..start + prompt[start..].find('\\').unwrap_or(prompt.len() - start)];
    assert!(copied_example(sentence, "Fix the typo in greet.py").is_some(), "{sentence}");
}
