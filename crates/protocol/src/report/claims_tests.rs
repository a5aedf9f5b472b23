use super::*;
use pretty_assertions::assert_eq;

fn kind(sentence: &str) -> Option<Kind> {
    claimed(&normalize(sentence))
}

#[test]
fn success_phrases_are_claims() {
    for sentence in [
        "Fixed, all tests pass.",
        "All tests passed.",
        "The tests are passing now.",
        "tests pass",
        "The test suite passes.",
        "12 passed in 0.3s.",
        "I fixed the off-by-one in the loop.",
        "The bug is fixed.",
        "It now works.",
        "It works now.",
        "Everything is working as expected.",
        "I verified the output by hand.",
        "Confirmed: the handler returns 404.",
        "The bug is gone.",
        "**Fixed.**",
        "The error has been resolved.",
        "The tests don\u{2019}t hang any more and all tests pass.",
    ] {
        assert_eq!(kind(sentence), Some(Kind::Tested), "{sentence}");
    }
    for sentence in ["The build succeeds.", "It compiles cleanly.", "The crate builds without warnings."] {
        assert_eq!(kind(sentence), Some(Kind::Built), "{sentence}");
    }
}

#[test]
fn negated_hedged_and_conditional_phrases_are_not_claims() {
    for sentence in [
        "Not fixed.",
        "It is not fixed yet.",
        "The bug isn\u{2019}t fixed.",
        "The tests still fail.",
        "I could not verify the change.",
        "This has not been verified.",
        "I couldn't confirm that it works.",
        "Not all tests pass.",
        "None of the tests passed.",
        "It should be fixed now.",
        "This might work.",
        "Let me know if it works.",
        "Once the tests pass, merge it.",
        "Run the suite to make sure all tests pass.",
        "Here is how it works.",
        "The buffer has a fixed size.",
        "Use a fixed-width font.",
        "The build will succeed once you install Rust.",
        "Does it work now?",
        "I changed the loop.",
    ] {
        assert_eq!(kind(sentence), None, "{sentence}");
    }
}

#[test]
fn a_negation_in_an_earlier_clause_does_not_cancel_a_claim() {
    assert_eq!(kind("I did not touch the API, and all tests pass."), Some(Kind::Tested));
    assert_eq!(kind("No new dependencies; the bug is fixed."), Some(Kind::Tested));
}

#[test]
fn sentences_are_cut_at_terminators_and_lines_without_code_or_markers() {
    let text = "Fixed, all tests pass. I updated app.py!\n\n- Ran `pytest -q`.\n1. Done\n```\nall tests pass\n```\n## Summary: ok?";
    assert_eq!(
        sentences(text),
        vec!["Fixed, all tests pass.", "I updated app.py!", "Ran `pytest -q`.", "Done", "Summary: ok?"]
    );
}

#[test]
fn file_names_named_as_changed_are_found() {
    let cases: &[(&str, &[&str])] = &[
        ("I updated app.py.", &["app.py"]),
        (
            "Updated `src/app.py` and `tests/test_app.py` to use the new API.",
            &["src/app.py", "tests/test_app.py"],
        ),
        ("Fixed the off-by-one in ./lib/parse.rs.", &["lib/parse.rs"]),
        ("`app.py` and utils.py were updated.", &["app.py", "utils.py"]),
        ("- `src/app.py`: fixed the loop", &["src/app.py"]),
        ("Edited app.py:12 so it returns early.", &["app.py"]),
        ("Updated app.py to call helper() from utils.py.", &["app.py"]),
        ("Fixed the import and test_app.py now passes.", &[]),
        ("I did not change utils.py.", &[]),
        ("utils.py was not changed.", &[]),
        ("Ran test.py, fixed the bug.", &[]),
        ("You may want to update config.toml.", &[]),
        ("I read README.md and Cargo.toml.", &[]),
        ("Updated the version to 1.2.3.", &[]),
    ];
    for (sentence, expected) in cases {
        assert_eq!(
            named_files(sentence),
            expected.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            "{sentence}"
        );
    }
}

#[test]
fn a_named_file_matches_a_changed_path_by_its_tail_or_a_command_that_ran() {
    let evidence = Evidence {
        changed: vec!["src/app.py".into(), "/tmp/out.json".into()],
        commands: vec!["sed -i s/a/b/ notes.md".into()],
        ..Evidence::default()
    };
    for name in ["src/app.py", "app.py", "/work/src/app.py", "/tmp/out.json", "notes.md"] {
        assert!(touched(name, &evidence), "{name}");
    }
    for name in ["other/app.py", "pp.py", "out.json.bak"] {
        assert!(!touched(name, &evidence), "{name}");
    }
}

#[test]
fn every_pattern_compiles() {
    assert_eq!(TESTS_RE.len(), TESTS.len());
    assert_eq!(WORKS_RE.len(), WORKS.len());
    assert_eq!(BUILDS_RE.len(), BUILDS.len());
}

#[test]
fn every_phrase_pattern_compiles() {
    use super::super::phrases::{BUILDS, TESTS, WORKS};
    for patterns in [TESTS, WORKS, BUILDS] {
        assert_eq!(super::compiled(patterns).len(), patterns.len(), "{patterns:?}");
    }
}
