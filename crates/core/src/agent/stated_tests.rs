#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Stated checks: what they assert, and that they pass on fixed code and fail on the bug, run by
//! a real `python3` in a temp dir.

use std::path::Path;
use std::process::Command;

use super::{code_of, stated_check};

fn workspace(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

/// Runs `check` with bash in `dir`: its exit status and output.
fn run(check: &str, dir: &Path) -> (bool, String) {
    let out = Command::new("bash").arg("-c").arg(check).current_dir(dir).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

#[test]
fn a_stated_return_value_is_asserted_without_quotes_and_the_failure_shows_what_the_code_returned() {
    let buggy =
        "def sum_x(n):\n    total = 0\n    for i in range(1, n):\n        total += 5 * i\n    return total\n";
    let dir = workspace(&[("x_series.py", buggy), ("other.py", "def sum_x(n):\n    return 0\n")]);
    let prompt =
        "sum_x in x_series.py has an off-by-one bug: sum_x(6) returns 75 but should return 105. Fix it.";
    let check = stated_check(prompt, dir.path()).expect("a stated check");
    assert_eq!(check, "python3 -B -c 'import x_series as m1; r = m1.sum_x(6); assert r == 105, r'");
    let (passed, output) = run(&check, dir.path());
    assert!(!passed);
    assert!(output.contains("AssertionError: 75"), "{output}");
    std::fs::write(dir.path().join("x_series.py"), buggy.replace("range(1, n)", "range(1, n + 1)")).unwrap();
    assert_eq!(run(&check, dir.path()), (true, String::new()));
    assert!(code_of(&check).is_some_and(|code| check.contains(code) && code.ends_with("r == 105, r")));
}

#[test]
fn a_stated_member_is_asserted_with_in_and_string_arguments_keep_their_value() {
    let dir = workspace(&[
        ("h_series.py", "def h_range(start, end):\n    return list(range(start, end))\n"),
        ("t.py", "def twice(text):\n    return text\n"),
    ]);
    let check =
        stated_check("h_range(4, 9) in h_series.py should include 9 but it does not. Fix it.", dir.path())
            .expect("a stated check");
    assert!(check.contains("assert 9 in r, r"), "{check}");
    let (passed, output) = run(&check, dir.path());
    assert!(!passed && output.contains("AssertionError: [4, 5, 6, 7, 8]"), "{output}");
    std::fs::write(
        dir.path().join("h_series.py"),
        "def h_range(start, end):\n    return list(range(start, end + 1))\n",
    )
    .unwrap();
    assert!(run(&check, dir.path()).0);

    let check =
        stated_check("In t.py, twice('ab') should return 'abab'.", dir.path()).expect("a stated check");
    let (passed, output) = run(&check, dir.path());
    assert!(!passed && output.contains("AssertionError: ab"), "{output}");
}

#[test]
fn an_added_function_must_exist_with_the_stated_parameters() {
    let dir = workspace(&[("u.py", "def label(code):\n    return str(code)\n\nLIMIT = 3\n")]);
    let prompt =
        "Add a function product_of(a, b) to u.py that returns a times b. Keep the existing functions.";
    let check = stated_check(prompt, dir.path()).expect("a stated check");
    assert!(!check.contains('"'), "{check}");
    let (passed, output) = run(&check, dir.path());
    assert!(!passed && output.contains("module 'u' has no attribute 'product_of'"), "{output}");
    let hint = super::adding_hint(prompt, dir.path()).expect("a hint");
    assert!(
        hint.contains("product_of is not in u.py yet. Add it after the file's last line: edit_file with old_string \"LIMIT = 3\"")
            && hint.contains("`def product_of(a, b):` at column 0"),
        "{hint}"
    );
    std::fs::write(
        dir.path().join("u.py"),
        "def label(code):\n    return str(code)\n\ndef product_of(a):\n    return a\n",
    )
    .unwrap();
    let (passed, output) = run(&check, dir.path());
    assert!(!passed && output.contains("AssertionError: (a)"), "{output}");
    std::fs::write(dir.path().join("u.py"), "def product_of(a, b):\n    return a * b\n").unwrap();
    assert_eq!(super::adding_hint(prompt, dir.path()), None, "product_of is there now");
    assert!(run(&check, dir.path()).0);
}

#[test]
fn a_rename_must_leave_the_new_name_only_and_the_other_named_file_importable() {
    let dir = workspace(&[
        ("lib.py", "def calc_x(x):\n    return x * 3\n"),
        ("app/main.py", "from lib import calc_x\n\nif __name__ == \"__main__\":\n    print(calc_x(2))\n"),
    ]);
    let prompt = "Rename the function calc_x to get_x in lib.py, and update app/main.py, which uses it.";
    let check = stated_check(prompt, dir.path()).expect("a stated check");
    assert!(check.ends_with("' calc_x still defined in lib.py"), "{check}");
    assert!(!check.contains('"'), "{check}");
    assert!(!run(&check, dir.path()).0);
    // The new name added and the old one kept: not renamed.
    std::fs::write(
        dir.path().join("lib.py"),
        "def calc_x(x):\n    return x * 3\n\ndef get_x(x):\n    return x * 3\n",
    )
    .unwrap();
    let (passed, output) = run(&check, dir.path());
    assert!(
        !passed && output.contains("AssertionError: ['calc_x', 'still', 'defined', 'in', 'lib.py']"),
        "{output}"
    );
    std::fs::write(dir.path().join("lib.py"), "def get_x(x):\n    return x * 3\n").unwrap();
    let (passed, output) = run(&check, dir.path());
    assert!(!passed && output.contains("cannot import name 'calc_x'"), "{output}");
    let hint = super::renaming_hint(prompt, dir.path()).expect("a hint");
    assert!(hint.contains(r#"edit_file {"path":"app/main.py","old_string":"from lib import calc_x","new_string":"from lib import get_x"}"#), "{hint}");
    assert!(
        hint.contains(r#""old_string":"    print(calc_x(2))","new_string":"    print(get_x(2))"}"#),
        "{hint}"
    );
    std::fs::write(
        dir.path().join("app/main.py"),
        "from lib import get_x\n\nif __name__ == \"__main__\":\n    print(get_x(2))\n",
    )
    .unwrap();
    assert_eq!(run(&check, dir.path()), (true, String::new()));
}

#[test]
fn nothing_literal_or_no_named_file_gives_no_stated_check() {
    let dir = workspace(&[("s.py", "def first(items, k):\n    return items[:k - 1]\n")]);
    // The arguments are names, not values: no assertion can be made from them.
    assert_eq!(stated_check("first(items, k) in s.py should return the first k items.", dir.path()), None);
    assert_eq!(stated_check("first(items, k) should return 3.", dir.path()), None);
    assert_eq!(stated_check("Fix the typo in s.py: it should say Hello.", dir.path()), None);
    // "Add a function to …" names none; "called" names one.
    assert_eq!(stated_check("Add a function to s.py that returns 3.", dir.path()), None);
    let check = stated_check("Add a function called last to s.py.", dir.path()).expect("a stated check");
    assert!(check.contains("m1.last"), "{check}");
    // A value with a quote the shell string cannot hold is left out.
    assert_eq!(stated_check("In s.py, first([1], 1) should return 'it\\'s'.", dir.path()), None);
}
