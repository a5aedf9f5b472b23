use serde_json::json;

use super::*;

#[test]
fn the_request_holds_the_users_words_the_call_and_the_rules_in_that_order() {
    let messages = vec!["fix the test".to_string(), "don't push".to_string()];
    let arguments = json!({"command": "git push --force\nrm -rf ~"});
    let call = PendingCall { tool: "shell", arguments: &arguments, cwd: "/work/x" };
    let text = request_text(Stage::Quick, &messages, call, "- block pushes");
    assert!(text.starts_with("[permission review] stage 1\n"));
    let at = |needle: &str| text.find(needle).unwrap_or_else(|| panic!("{needle} in {text}"));
    assert!(at("fix the test") < at("don't push"));
    assert!(at("don't push") < at("git push --force"));
    assert!(at("git push --force") < at("- block pushes"));
    // The call is one JSON line: its newline cannot start a line of the request.
    assert!(!text.lines().any(|line| line.starts_with("rm -rf")));
    assert!(text.ends_with("Answer with exactly one word: allow or block."));
    let reasoned = request_text(Stage::Reasoned, &messages, call, "");
    assert!(reasoned.starts_with("[permission review] stage 2\n"));
    assert!(reasoned.contains("\"decision\""));
}

#[test]
fn long_arguments_are_cut_at_the_limit() {
    let arguments = json!({"content": "é".repeat(5_000)});
    let call = PendingCall { tool: "write_file", arguments: &arguments, cwd: "/w" };
    let text = request_text(Stage::Quick, &[], call, "");
    assert!(text.contains("(cut at 1500 characters)"));
    assert!(text.chars().filter(|c| *c == 'é').count() <= MAX_ARGUMENT_CHARS);
    assert!(text.contains("(none)"), "no user messages is said");
}

#[test]
fn stage_one_takes_one_word_only() {
    assert_eq!(quick_answer("allow"), Some(true));
    assert_eq!(quick_answer(" Allow.\n"), Some(true));
    assert_eq!(quick_answer("`block`"), Some(false));
    assert_eq!(quick_answer("allow, but only if the user agrees"), None);
    assert_eq!(quick_answer("I would allow this"), None);
    assert_eq!(quick_answer(""), None);
    assert_eq!(quick_answer("allowed"), None);
}

#[test]
fn stage_two_takes_the_json_object_asked_for() {
    assert_eq!(
        reasoned_answer(
            "```json\n{\"decision\": \"block\", \"reason\": \"the user said  not to push\"}\n```"
        ),
        Some((false, "the user said not to push".into()))
    );
    assert_eq!(reasoned_answer(r#"{"decision": "allow", "reason": "tests"}"#), Some((true, "tests".into())));
    assert_eq!(reasoned_answer(r#"{"decision": "maybe", "reason": "x"}"#), None);
    assert_eq!(reasoned_answer("allow"), None);
    assert_eq!(reasoned_answer(r#"{"decision": "allow""#), None, "cut JSON");
    assert_eq!(reasoned_answer(r#"{"reason": "no decision"}"#), None);
}
