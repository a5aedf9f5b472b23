use super::*;
use pretty_assertions::assert_eq;
use ratatui::backend::TestBackend;

fn frame(rows: &[&str]) -> ViewFrame {
    ViewFrame { rows: rows.iter().map(|r| Line::from(r.to_string())).collect(), cursor: Some((1, 0)) }
}

fn screen(terminal: &InlineTerminal<TestBackend>) -> Vec<String> {
    let buffer = terminal.backend().buffer();
    buffer
        .content
        .chunks(usize::from(buffer.area.width))
        .map(|row| row.iter().map(|c| c.symbol()).collect::<String>().trim_end().to_string())
        .collect()
}

fn scrollback(terminal: &InlineTerminal<TestBackend>) -> Vec<String> {
    let buffer = terminal.backend().scrollback();
    buffer
        .content
        .chunks(usize::from(buffer.area.width))
        .map(|row| row.iter().map(|c| c.symbol()).collect::<String>().trim_end().to_string())
        .collect()
}

#[test]
fn rows_go_above_the_viewport_and_into_the_scrollback() {
    let mut terminal = InlineTerminal::new(TestBackend::new(10, 4), 1).unwrap_or_else(|e| match e {});
    terminal.draw(&frame(&["input"])).unwrap_or_else(|e| match e {});
    assert_eq!(screen(&terminal), vec!["", "input", "", ""]);
    let rows: Vec<Line<'static>> = ["one", "two", "three", "four"].iter().map(|r| Line::from(*r)).collect();
    terminal.insert_rows(&rows).unwrap_or_else(|e| match e {});
    terminal.draw(&frame(&["input", "status"])).unwrap_or_else(|e| match e {});
    assert_eq!(screen(&terminal), vec!["three", "four", "input", "status"]);
    assert_eq!(scrollback(&terminal), vec!["", "one", "two"]);
}

#[test]
fn the_viewport_grows_by_scrolling_and_shrinks_by_clearing() {
    let mut terminal = InlineTerminal::new(TestBackend::new(8, 4), 2).unwrap_or_else(|e| match e {});
    terminal.draw(&frame(&["a", "b", "c"])).unwrap_or_else(|e| match e {});
    assert_eq!(terminal.area(), Rect::new(0, 1, 8, 3));
    terminal.draw(&frame(&["a"])).unwrap_or_else(|e| match e {});
    assert_eq!(screen(&terminal), vec!["", "a", "", ""]);
    terminal.draw(&frame(&["1", "2", "3", "4", "5", "6"])).unwrap_or_else(|e| match e {});
    assert_eq!(screen(&terminal), vec!["1", "2", "3", "4"]);
}

#[test]
fn clear_leaves_the_transcript_and_the_cursor_under_it() {
    let mut terminal = InlineTerminal::new(TestBackend::new(8, 4), 0).unwrap_or_else(|e| match e {});
    terminal.insert_rows(&[Line::from("kept")]).unwrap_or_else(|e| match e {});
    terminal.draw(&frame(&["input", "status"])).unwrap_or_else(|e| match e {});
    terminal.clear().unwrap_or_else(|e| match e {});
    assert_eq!(screen(&terminal), vec!["kept", "", "", ""]);
    let mut backend = terminal.backend().clone();
    assert_eq!(backend.get_cursor_position().ok(), Some(Position::new(0, 1)));
}

#[test]
fn resizing_keeps_a_bottom_viewport_at_the_bottom() {
    let mut terminal = InlineTerminal::new(TestBackend::new(10, 6), 5).unwrap_or_else(|e| match e {});
    terminal.draw(&frame(&["input", "status"])).unwrap_or_else(|e| match e {});
    assert_eq!(terminal.area(), Rect::new(0, 4, 10, 2));
    terminal.backend_mut().resize(10, 3);
    terminal.resize(Size::new(10, 3)).unwrap_or_else(|e| match e {});
    terminal.draw(&frame(&["input", "status"])).unwrap_or_else(|e| match e {});
    assert_eq!(terminal.area(), Rect::new(0, 1, 10, 2));
}

#[test]
fn a_viewport_taller_than_the_resized_screen_is_cut_to_it_before_rows_are_inserted() {
    let mut terminal = InlineTerminal::new(TestBackend::new(60, 20), 0).unwrap_or_else(|e| match e {});
    let tall = ["tail 1", "tail 2", "tail 3", "spinner", "border", "input", "status", "more"];
    terminal.draw(&frame(&tall)).unwrap_or_else(|e| match e {});
    terminal.insert_rows(&[Line::from("first")]).unwrap_or_else(|e| match e {});
    assert_eq!(terminal.area(), Rect::new(0, 1, 60, 8));
    terminal.backend_mut().resize(20, 5);
    terminal.resize(Size::new(20, 5)).unwrap_or_else(|e| match e {});
    assert_eq!(terminal.area(), Rect::new(0, 0, 20, 5));
    // Rows inserted before the next frame scroll into the scrollback, the viewport under them.
    terminal.insert_rows(&[Line::from("second"), Line::from("third")]).unwrap_or_else(|e| match e {});
    assert_eq!(terminal.area(), Rect::new(0, 0, 20, 5));
    terminal.draw(&frame(&["spinner", "border", "input", "status", "more"])).unwrap_or_else(|e| match e {});
    assert_eq!(screen(&terminal), vec!["spinner", "border", "input", "status", "more"]);
    assert!(
        scrollback(&terminal).ends_with(&["second".to_string(), "third".to_string()]),
        "{:?}",
        scrollback(&terminal)
    );
}
