#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

fn target(content: &str) -> EditTarget {
    EditTarget { path: "src/a.py".into(), content: content.into(), avoid: Vec::new() }
}

fn grammar(targets: &[EditTarget]) -> String {
    let mut builder = Builder::default();
    let rule = edit_args_rule(&mut builder, targets).expect("editable");
    format!("root ::= {rule}\n{}", builder.finish())
}

#[test]
fn only_lines_occurring_once_start_an_old_string() {
    let content = "def f():\n    return 1\n\ndef g():\n    return 1\n";
    let text = grammar(&[target(content)]);
    // `    return 1` occurs twice, so only the two `def` lines start an old_string.
    let old = text.lines().find(|line| line.starts_with("e0-old ::= ")).unwrap();
    assert_eq!(old, r#"e0-old ::= "\"" ( e0-l0-r4 | e0-l3-r4 ) "\"""#);
    // Each line continues into the next one, at most four lines in all; the last line ends it.
    assert!(text.contains(r#"e0-l0-r4 ::= "def f():" ( "\\n" e0-l1-r3 )?"#), "{text}");
    assert!(text.contains(r#"e0-l3-r1 ::= "def g():""#), "{text}");
    assert!(text.contains(r#"e0-l2-r2 ::= ( "\\n" e0-l3-r1 )?"#), "{text}");
    assert!(text.contains(r#"e0-l4-r4 ::= "    return 1""#), "{text}");
    assert!(text.contains(r#"( "\"path\": \"src/a.py\", \"old_string\": " e0-old )"#), "{text}");
}

#[test]
fn json_escapes_are_those_the_model_writes() {
    let text = grammar(&[target("print(\"tab\there\")\n")]);
    // JSON `\"` and `\t` inside the string, each backslash escaped once more for GBNF.
    assert!(text.contains(r#"e0-l0-r1 ::= "print(\\\"tab\\there\\\")""#), "{text}");
}

#[test]
fn files_without_a_unique_line_or_with_crlf_are_not_editable() {
    assert!(!target("x\nx\n").editable());
    assert!(!target("a\r\nb\r\n").editable());
    assert!(!target(&"y = 1\n".repeat(10_000)).editable());
    let mut builder = Builder::default();
    assert_eq!(edit_args_rule(&mut builder, &[target("\n\n")]), None);
}

#[test]
fn lines_to_avoid_start_no_old_string_unless_nothing_else_could() {
    let content = "def f():\n    return 1\n\ndef g():\n    return 1\n";
    let avoiding = |avoid: &[&str]| {
        let text = grammar(&[EditTarget {
            avoid: avoid.iter().map(|line| line.to_string()).collect(),
            ..target(content)
        }]);
        text.lines().find(|line| line.starts_with("e0-old ::= ")).unwrap().to_string()
    };
    assert_eq!(avoiding(&["def f():"]), r#"e0-old ::= "\"" ( e0-l3-r4 ) "\"""#);
    // The line still continues a span that starts earlier; and with every start avoided, all stay.
    assert_eq!(avoiding(&["def f():", "def g():"]), r#"e0-old ::= "\"" ( e0-l0-r4 | e0-l3-r4 ) "\"""#);
}
