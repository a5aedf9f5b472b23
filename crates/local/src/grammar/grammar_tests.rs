#![allow(clippy::unwrap_used, clippy::expect_used)]

use lathe_protocol::ToolSpec;
use serde_json::{Value, json};

use super::*;
use crate::chatml::final_answer_spec;

fn tool(name: &str, schema: Value) -> ToolSpec {
    ToolSpec { name: name.into(), description: String::new(), input_schema: schema }
}

/// The built-in tools' schemas, as `lathe-tools` advertises them (never a copy that can drift).
pub(crate) fn builtin_tools() -> Vec<ToolSpec> {
    lathe_tools::ToolRegistry::builtin().specs()
}

/// A `shell` tool and the local provider's `answer` tool.
fn shell_and_answer() -> Vec<ToolSpec> {
    vec![
        tool(
            "shell",
            json!({"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}),
        ),
        final_answer_spec(),
    ]
}

fn rule<'a>(grammar: &'a str, name: &str) -> &'a str {
    let prefix = format!("{name} ::= ");
    grammar
        .lines()
        .find_map(|line| line.strip_prefix(prefix.as_str()))
        .unwrap_or_else(|| panic!("no rule {name} in\n{grammar}"))
}

/// Every rule referenced is defined exactly once.
fn assert_closed(grammar: &str) {
    let mut defined = std::collections::BTreeSet::new();
    for line in grammar.lines() {
        let (name, _) = line.split_once(" ::= ").unwrap_or_else(|| panic!("bad line {line}"));
        assert!(defined.insert(name.to_string()), "{name} defined twice");
    }
    for line in grammar.lines() {
        let (_, body) = line.split_once(" ::= ").unwrap();
        // Strip literals and classes, then every remaining word must be a rule.
        let mut cleaned = String::new();
        let mut chars = body.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '"' => {
                    while let Some(d) = chars.next() {
                        if d == '\\' {
                            chars.next();
                        } else if d == '"' {
                            break;
                        }
                    }
                    cleaned.push(' ');
                }
                '[' => {
                    while let Some(d) = chars.next() {
                        if d == '\\' {
                            chars.next();
                        } else if d == ']' {
                            break;
                        }
                    }
                    cleaned.push(' ');
                }
                '{' => {
                    for d in chars.by_ref() {
                        if d == '}' {
                            break;
                        }
                    }
                }
                c => cleaned.push(c),
            }
        }
        for word in cleaned.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')) {
            if !word.is_empty() && !word.chars().all(|c| c.is_ascii_digit()) {
                assert!(defined.contains(word), "rule {word} used but not defined in\n{grammar}");
            }
        }
    }
}

#[test]
fn no_tools_means_no_grammar() {
    assert_eq!(build_grammar(&[], AnswerMode::Text), None);
}

#[test]
fn text_mode_allows_calls_or_text_that_cannot_start_like_json() {
    let grammar = build_grammar(
        &[tool(
            "read_file",
            json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        )],
        AnswerMode::Text,
    )
    .unwrap();
    assert_closed(&grammar);
    assert_eq!(rule(&grammar, "root"), "calls | text");
    assert!(
        rule(&grammar, "call")
            .starts_with(r#""<tool_call>\n{\"name\": " ( "\"read_file\", \"arguments\": " t0-read-file )"#),
        "{grammar}"
    );
    assert!(rule(&grammar, "text").starts_with("[^<{`"), "{grammar}");
    assert_eq!(rule(&grammar, "t0-read-file"), r#""{" t0-read-file-first0 "}""#);
    assert_eq!(rule(&grammar, "t0-read-file-kv0"), r#""\"path\": " string"#);
}

#[test]
fn final_answer_mode_forces_a_call_every_turn() {
    let tools = shell_and_answer();
    let grammar = build_grammar(&tools, AnswerMode::FinalAnswerTool).unwrap();
    assert_closed(&grammar);
    assert_eq!(rule(&grammar, "root"), "final | calls");
    assert!(!grammar.contains("text ::="));
    assert!(rule(&grammar, "final").contains(r#""\"answer\", \"arguments\": ""#));
    assert!(!rule(&grammar, "call").contains("\"answer\""));
}

#[test]
fn optional_properties_can_be_left_out_in_schema_order() {
    let schema = json!({"type": "object", "properties": {
        "a": {"type": "string"}, "b": {"type": "integer"}, "c": {"type": "boolean"}
    }, "required": ["b"]});
    let grammar = build_grammar(&[tool("t", schema)], AnswerMode::Text).unwrap();
    assert_closed(&grammar);
    // a? b c?  →  first0 = a rest1 | first1 ; first1 = b rest2 ; rest1 = ", " b rest2 ; rest2 = (", " c)?
    assert_eq!(rule(&grammar, "t0-t-first0"), "t0-t-kv0 t0-t-rest1 | t0-t-first1");
    assert_eq!(rule(&grammar, "t0-t-first1"), "t0-t-kv1 t0-t-rest2");
    assert_eq!(rule(&grammar, "t0-t-rest1"), r#"", " t0-t-kv1 t0-t-rest2"#);
    assert_eq!(rule(&grammar, "t0-t-rest2"), r#"( ", " t0-t-kv2 )?"#);
    assert_eq!(rule(&grammar, "t0-t"), r#""{" t0-t-first0 "}""#);
}

#[test]
fn all_optional_objects_may_be_empty() {
    let schema = json!({"type": "object", "properties": {"a": {"type": "string"}}});
    let grammar = build_grammar(&[tool("t", schema)], AnswerMode::Text).unwrap();
    assert_eq!(rule(&grammar, "t0-t"), r#""{" t0-t-first0? "}""#);
}

#[test]
fn the_builtin_tools_enums_refs_nullables_and_minimums_are_translated() {
    let tools = builtin_tools();
    let grammar = build_grammar(&tools, AnswerMode::Text).unwrap();
    assert_closed(&grammar);
    let grep = tools.iter().position(|t| t.name == "grep").unwrap();
    // output_mode: an optional enum (schemars writes it as a nullable `$ref`).
    let output_mode = grammar
        .lines()
        .find(|line| line.starts_with(&format!("t{grep}-grep-")) && line.contains("output_mode"))
        .unwrap_or_else(|| panic!("no output_mode rule in\n{grammar}"));
    assert!(output_mode.contains(r#""\"content\"" | "\"files\"" | "\"count\"""#), "{output_mode}");
    assert!(output_mode.contains("null"), "{output_mode}");
    // read_file offset: minimum 1 → no zero.
    assert!(grammar.contains(r#"( ( [1-9] [0-9]{0,15} ) )"#), "{grammar}");
    // todo items: array of $ref objects with an enum status.
    assert!(grammar.contains(r#""\"in_progress\"""#), "{grammar}");
}

#[test]
fn bounded_integers_and_min_lengths_are_translated() {
    let schema = json!({"type": "object", "properties": {
        "pattern": {"type": "string", "minLength": 1},
        "context": {"type": ["integer", "null"], "minimum": 0, "maximum": 20}
    }, "required": ["pattern"]});
    let grammar = build_grammar(&[tool("grep", schema)], AnswerMode::Text).unwrap();
    assert_closed(&grammar);
    // context: maximum 20 → at most one digit, no sign.
    let context = rule(&grammar, "t0-grep-context");
    assert!(context.contains(r#"( ( "0" | [1-9] [0-9]{0,0} ) )"#), "{context}");
    // pattern: minLength 1.
    assert!(grammar.contains(r#""\"pattern\": " "\"" char{1,} "\"""#), "{grammar}");
}

#[test]
fn unknown_constructs_fall_back_to_any_json_value() {
    let schema = json!({"type": "object", "properties": {"x": {"not": {}}, "y": {"type": "object"}}, "required": ["x", "y"]});
    let grammar = build_grammar(&[tool("t", schema)], AnswerMode::Text).unwrap();
    assert_closed(&grammar);
    assert_eq!(rule(&grammar, "t0-t-kv0"), r#""\"x\": " value"#);
    assert_eq!(rule(&grammar, "t0-t-kv1"), r#""\"y\": " object"#);
}

#[test]
fn literals_escape_quotes_backslashes_and_control_characters() {
    assert_eq!(literal("a\"b\\c\nd\u{1}"), r#""a\"b\\c\nd\x01""#);
}

#[test]
fn tool_required_mode_allows_only_calls() {
    let grammar = build_grammar(&builtin_tools(), AnswerMode::ToolRequired).unwrap();
    assert_closed(&grammar);
    assert_eq!(rule(&grammar, "root"), "calls");
    assert!(!grammar.contains("\"answer\"") && !grammar.lines().any(|line| line.starts_with("text ::=")));
}

#[test]
fn a_cited_answer_starts_its_thought_with_a_line_number() {
    let tools = shell_and_answer();
    let shape = Shape { cite_line: true, ..Shape::default() };
    let grammar = build_shaped_grammar(&tools, AnswerMode::FinalAnswerTool, shape).unwrap();
    assert_closed(&grammar);
    assert!(rule(&grammar, "final").contains("cited-answer-args"), "{grammar}");
    assert_eq!(
        rule(&grammar, "cited-answer-args"),
        r#""{\"thought\": \"Line " [1-9] [0-9]{0,3} ": " char* "\", \"answer\": " string "}""#
    );
    // Other tools keep their schema's rule; without cite_line the answer does too.
    assert!(rule(&grammar, "call").contains("t0-shell"), "{grammar}");
    let plain = build_grammar(&tools, AnswerMode::FinalAnswerTool).unwrap();
    assert!(!plain.contains("cited-answer-args"), "{plain}");
}
