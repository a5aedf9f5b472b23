use super::*;
use pretty_assertions::assert_eq;
use ratatui::style::{Color, Style};

fn texts(rows: &[Line<'_>]) -> Vec<String> {
    rows.iter().map(|row| row.spans.iter().map(|s| s.content.as_ref()).collect()).collect()
}

#[test]
fn words_wrap_at_spaces_with_prefixes() {
    let line = Line::from("the quick brown fox jumps over the lazy dog");
    let rows = wrap_words(&line, 16, &[Span::raw("• ")], &[Span::raw("  ")]);
    assert_eq!(texts(&rows), vec!["• the quick", "  brown fox", "  jumps over the", "  lazy dog"]);
}

#[test]
fn long_words_are_split_and_styles_kept_across_rows() {
    let red = Style::default().fg(Color::Red);
    let line = Line::from(vec![Span::raw("see "), Span::styled("abcdefghijklmnop", red)]);
    let rows = wrap_words(&line, 8, &[], &[]);
    assert_eq!(texts(&rows), vec!["see", "abcdefgh", "ijklmnop"]);
    assert_eq!(rows[1].spans[0].style, red);
    assert_eq!(rows[2].spans[0].style, red);
}

#[test]
fn wide_characters_count_two_cells() {
    let rows = wrap_chars(&Line::from("日本語のテキスト"), 5, &[], &[]);
    assert_eq!(texts(&rows), vec!["日本", "語の", "テキ", "スト"]);
}

#[test]
fn chars_keep_every_space() {
    let rows = wrap_chars(&Line::from("    indented  code"), 10, &[], &[Span::raw("> ")]);
    assert_eq!(texts(&rows), vec!["    indent", "> ed  code"]);
}

#[test]
fn empty_line_is_one_row_with_the_prefix() {
    let rows = wrap_words(&Line::from(""), 10, &[Span::raw("│ ")], &[]);
    assert_eq!(texts(&rows), vec!["│ "]);
}

#[test]
fn a_prefix_wider_than_the_row_still_makes_progress() {
    let rows = wrap_words(&Line::from("abc"), 2, &[Span::raw(">>>>")], &[Span::raw(">>>>")]);
    assert!(rows.len() <= 4, "{rows:?}");
    assert_eq!(texts(&rows).concat().replace('>', ""), "abc");
}

#[test]
fn sanitize_expands_tabs_and_replaces_control_characters() {
    assert_eq!(sanitize("a\tb\r\n\u{1b}[31mc"), "a   b\n\u{fffd}[31mc");
    assert!(matches!(sanitize("plain"), Cow::Borrowed(_)));
}

#[test]
fn truncate_marks_the_cut() {
    assert_eq!(truncate("hello world", 8), "hello w…");
    assert_eq!(truncate("short", 8), "short");
}

#[test]
fn pasted_control_characters_are_shown_in_caret_notation_never_as_a_replacement_character() {
    assert_eq!(sanitize_input("ab\u{3}cd\u{1b}ef\u{7f}\u{85}g\th\n"), "ab^Ccd^[ef^?g\th\n");
    assert!(matches!(sanitize_input("plain\ttext\n"), Cow::Borrowed(_)));
}
