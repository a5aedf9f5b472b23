use super::*;
use pretty_assertions::assert_eq;
use ratatui::style::Color;

fn texts(rows: &[Line<'_>]) -> Vec<String> {
    rows.iter()
        .map(|row| row.spans.iter().map(|s| s.content.as_ref()).collect::<String>().trim_end().to_string())
        .collect()
}

#[test]
fn paragraphs_headings_and_lists() {
    let source = "# Title\n\nSome *text* and `code`.\n\n1. one\n2. two\n   - nested\n\n> quoted\n> more\n";
    assert_eq!(
        texts(&render(source, 40)),
        vec!["Title", "", "Some text and code.", "", "1. one", "2. two", "   ◦ nested", "", "│ quoted more"]
    );
}

#[test]
fn inline_code_is_cyan_and_strong_is_bold() {
    let rows = render("a **b** `c`", 20);
    let spans = &rows[0].spans;
    assert!(spans.iter().any(|s| s.content == "b" && s.style.add_modifier.contains(Modifier::BOLD)));
    assert!(spans.iter().any(|s| s.content == "c" && s.style.fg == Some(Color::Cyan)));
}

#[test]
fn fenced_code_keeps_indentation_and_is_highlighted() {
    let rows = render("```python\ndef f():\n    return 1\n```\n", 30);
    assert_eq!(texts(&rows), vec!["def f():", "    return 1"]);
    assert!(rows[0].spans.iter().any(|s| matches!(s.style.fg, Some(Color::Rgb(..)))));
}

#[test]
fn unknown_language_is_plain() {
    let rows = render("```nosuchlang\nx = 1\n```", 30);
    assert_eq!(texts(&rows), vec!["x = 1"]);
}

#[test]
fn links_show_their_target() {
    assert_eq!(
        texts(&render("see [docs](https://example.com/d)", 60)),
        vec!["see docs (https://example.com/d)"]
    );
    assert_eq!(texts(&render("<https://example.com>", 60)), vec!["https://example.com"]);
}

#[test]
fn tables_are_laid_out_in_columns() {
    let source = "| name | value |\n|---|---|\n| alpha | 1 |\n| b | 22 |\n";
    assert_eq!(texts(&render(source, 40)), vec!["name  │ value", "──────┼──────", "alpha │ 1", "b     │ 22"]);
}

#[test]
fn wide_tables_are_cut_to_fit() {
    let source = "| a | b |\n|---|---|\n| a very long cell that will not fit | another long one here |\n";
    for row in render(source, 30) {
        assert!(row.width() <= 30, "{row:?}");
    }
}

#[test]
fn task_lists_and_rules() {
    assert_eq!(
        texts(&render("- [x] done\n- [ ] todo\n\n---\n", 20)),
        vec!["• [x] done", "• [ ] todo", "", "────────────────────"]
    );
}

#[test]
fn long_paragraph_wraps_under_its_list_marker() {
    assert_eq!(
        texts(&render("- one two three four five six", 14)),
        vec!["• one two", "  three four", "  five six"]
    );
}
