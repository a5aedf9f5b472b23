use std::path::Path;

use super::*;

fn kept(prompt: &str) -> (Vec<&'static str>, Option<&'static str>) {
    let found = KeptFiles::from_prompt(prompt);
    let leak = |text: String| -> &'static str { Box::leak(text.into_boxed_str()) };
    (found.paths.into_iter().map(leak).collect(), found.instead.map(leak))
}

#[test]
fn the_test_is_the_test_file_the_prompt_names() {
    assert_eq!(
        kept("`python3 test_rocket_calc.py` fails. Fix the bug in rocket_calc.py; do not change the test."),
        (vec!["test_rocket_calc.py"], Some("rocket_calc.py"))
    );
    assert_eq!(
        kept("Make tests/test_api.py pass by fixing api/server.py. Don't modify the tests!"),
        (vec!["tests/test_api.py"], Some("api/server.py"))
    );
    assert_eq!(
        kept("calc_test.go fails; never edit the test file, fix calc.go"),
        (vec!["calc_test.go"], Some("calc.go"))
    );
}

#[test]
fn named_files_and_leave_or_keep_them() {
    assert_eq!(
        kept("Add a flag to cli.py. Do not change config.py or `db.py`."),
        (vec!["config.py", "db.py"], Some("cli.py"))
    );
    assert_eq!(kept("Fix app.py and leave utils.py unchanged."), (vec!["utils.py"], Some("app.py")));
    assert_eq!(kept("Keep README.md as it is; update main.rs."), (vec!["README.md"], Some("main.rs")));
}

#[test]
fn nothing_kept_without_such_a_sentence() {
    for prompt in [
        "`python3 test_calc.py` fails. Fix it.",
        "Fix the typo in app.py: it should say Hello.",
        "Do not forget to run the tests.",
        "Change the test in test_a.py so it checks 4.",
        "Don't worry about test_a.py.",
    ] {
        assert_eq!(KeptFiles::from_prompt(prompt), KeptFiles::default(), "{prompt}");
    }
}

#[test]
fn a_kept_file_is_matched_relative_absolute_or_below_a_folder() {
    let found = KeptFiles::from_prompt("Fix calc.py; do not change test_calc.py.");
    let workspace = Path::new("/ws/project");
    for path in ["test_calc.py", "./test_calc.py", "/ws/project/test_calc.py", "sub/test_calc.py"] {
        assert_eq!(found.holds(path, workspace), Some("test_calc.py"), "{path}");
    }
    for path in ["calc.py", "my_test_calc.py", "/elsewhere/x.py"] {
        assert_eq!(found.holds(path, workspace), None, "{path}");
    }
}

#[test]
fn text_whose_lowercase_is_longer_is_read_without_a_panic() {
    // `İ` lowercases to two characters: positions found in a Unicode-lowercased copy would not be
    // positions in the prompt.
    assert_eq!(
        kept("İİİİ Fix calc.py; İİ do not change test_calc.py İİ."),
        (vec!["test_calc.py"], Some("calc.py"))
    );
}

#[test]
fn exceptions_questions_later_clauses_and_parts_of_words_keep_nothing_wrong() {
    // An allow-list, not a keep-list.
    assert_eq!(kept("Fix calc.py. Do not modify any file other than calc.py."), (vec![], None));
    assert_eq!(kept("Don't touch anything except app.py."), (vec![], None));
    // What the tests check is not the test file.
    assert_eq!(
        kept("Update test_calc.py for the new API; don't change what the tests check."),
        (vec![], None)
    );
    // The object ends where the next clause starts.
    assert_eq!(
        kept("Don't change the test, the bug is in calc.py (see test_calc.py)."),
        (vec!["test_calc.py"], Some("calc.py"))
    );
    assert_eq!(
        kept("Don't change the tests and fix calc.py; test_calc.py fails."),
        (vec!["test_calc.py"], Some("calc.py"))
    );
    // A list of files goes on over commas and `and`.
    assert_eq!(
        kept("Fix main.py. Do not change a.py, b.py and c.py."),
        (vec!["a.py", "b.py", "c.py"], Some("main.py"))
    );
    // Inside other words: `has issues`, `standalone`, `whenever`.
    assert_eq!(kept("Keep in mind parser.py has issues with tabs."), (vec![], None));
    assert_eq!(kept("Keep the standalone build in build.py working."), (vec![], None));
    assert_eq!(kept("Whenever change.py runs, log it."), (vec![], None));
}
