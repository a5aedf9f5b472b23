//! Input that arrives as one burst (one read from the terminal): a paste into a terminal without
//! bracketed paste comes as plain key presses, its line breaks as Enter (`\r`). An Enter between
//! printable characters of the same burst is such a line break, not a submit, so `line1\rline2`
//! pasted that way stays one prompt of two lines. A person typing never produces it: each key is a
//! read of its own.

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// Turns each run of plain Enter presses that has a printable character press right before and
/// right after it in `events` (one burst) into Shift+Enter presses, which insert line breaks (so
/// a pasted blank line stays in the prompt).
pub fn line_breaks_inside(events: &mut [Event]) {
    let mut at = 0;
    while at < events.len() {
        if !is_plain_enter(&events[at]) {
            at += 1;
            continue;
        }
        // A run of Enters (a blank line is two) between printable keys.
        let end = (at..events.len()).find(|&i| !is_plain_enter(&events[i])).unwrap_or(events.len());
        let before = at > 0 && is_printable(&events[at - 1]);
        let after = end < events.len() && is_printable(&events[end]);
        if before && after {
            for event in &mut events[at..end] {
                *event = Event::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::SHIFT));
            }
        }
        at = end;
    }
}

fn is_plain_enter(event: &Event) -> bool {
    matches!(event, Event::Key(key) if key.code == KeyCode::Enter && key.modifiers.is_empty()
        && key.kind == KeyEventKind::Press)
}

fn is_printable(event: &Event) -> bool {
    matches!(event, Event::Key(key) if matches!(key.code, KeyCode::Char(_))
        && !key.modifiers.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
        && key.kind == KeyEventKind::Press)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(text: &str) -> Vec<Event> {
        text.chars()
            .map(|c| match c {
                '\r' => Event::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)),
                c => Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)),
            })
            .collect()
    }

    fn enters(events: &[Event]) -> Vec<KeyModifiers> {
        events
            .iter()
            .filter_map(|event| match event {
                Event::Key(key) if key.code == KeyCode::Enter => Some(key.modifiers),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn an_enter_inside_a_burst_is_a_line_break_and_a_final_one_still_submits() {
        let mut burst = chars("line1\rline2\r");
        line_breaks_inside(&mut burst);
        assert_eq!(enters(&burst), vec![KeyModifiers::SHIFT, KeyModifiers::NONE]);
        let mut paragraphs = chars("one\r\rtwo\r");
        line_breaks_inside(&mut paragraphs);
        assert_eq!(enters(&paragraphs), vec![KeyModifiers::SHIFT, KeyModifiers::SHIFT, KeyModifiers::NONE]);
        let mut typed = chars("\r");
        line_breaks_inside(&mut typed);
        assert_eq!(enters(&typed), vec![KeyModifiers::NONE]);
        let mut after_ctrl = chars("a\rb");
        after_ctrl[0] = Event::Key(KeyEvent::new(KeyCode::Char('a'), KeyModifiers::CONTROL));
        line_breaks_inside(&mut after_ctrl);
        assert_eq!(enters(&after_ctrl), vec![KeyModifiers::NONE]);
    }
}
