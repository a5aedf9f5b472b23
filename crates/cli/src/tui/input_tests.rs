use super::*;
use pretty_assertions::assert_eq;

#[test]
fn editing_moves_and_kills() {
    let mut input = InputEditor::default();
    input.insert("hello wörld");
    input.word_left();
    input.backspace();
    assert_eq!(input.text(), "hellowörld");
    input.end();
    input.delete_word_before();
    assert_eq!(input.text(), "");
    input.insert("one\ntwo");
    input.up();
    input.kill_to_line_end();
    assert_eq!(input.text(), "onetwo", "at the end of a line, Ctrl+K joins the next");
}

#[test]
fn up_and_down_move_between_lines_before_recalling_history() {
    let mut input = InputEditor::with_history(vec!["old one".into(), "old two".into()]);
    input.insert("draft");
    assert!(input.up());
    assert_eq!(input.text(), "old two");
    assert!(input.up());
    assert_eq!(input.text(), "old one");
    assert!(!input.up());
    assert!(input.down());
    assert!(input.down());
    assert_eq!(input.text(), "draft");
    input.set_text("a\nbc");
    assert!(input.up());
    assert_eq!((input.text(), input.cursor()), ("a\nbc", 1));
}

#[test]
fn layout_wraps_and_places_the_cursor() {
    let mut input = InputEditor::default();
    input.insert("abcdefgh\nxy");
    let (rows, cursor) = input.layout(6, &[Span::raw("› ")], &[Span::raw("  ")], Style::default());
    let texts: Vec<String> =
        rows.iter().map(|r| r.spans.iter().map(|s| s.content.as_ref()).collect()).collect();
    assert_eq!(texts, vec!["› abcd", "  efgh", "  xy"]);
    assert_eq!(cursor, (4, 2));
    input.home();
    let (_, cursor) = input.layout(6, &[Span::raw("› ")], &[Span::raw("  ")], Style::default());
    assert_eq!(cursor, (2, 2));
}

#[test]
fn cursor_at_the_end_of_a_full_row_goes_to_the_next_row() {
    let mut input = InputEditor::default();
    input.insert("abcd");
    let (rows, cursor) = input.layout(6, &[Span::raw("› ")], &[Span::raw("  ")], Style::default());
    assert_eq!((rows.len(), cursor), (2, (2, 1)));
}

#[test]
fn pastes_keep_newlines_and_large_ones_collapse() {
    let mut input = InputEditor::default();
    input.paste("a\r\nb").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(input.text(), "a\nb");
    input.clear();
    let big = "line\n".repeat(50);
    input.paste(&big).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(input.text(), "[Pasted text #1 +50 lines]");
    assert_eq!(input.submit(), big);
    assert_eq!(
        input.paste(&"x".repeat(MAX_PASTE_BYTES + 1)),
        Err(PasteTooLarge { bytes: MAX_PASTE_BYTES + 1 })
    );
}
