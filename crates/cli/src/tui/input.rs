//! The prompt editor: multi-line text with a cursor, word motions, kill commands, history recall
//! and bracketed-paste handling.
//!
//! Large pastes are kept out of the editing buffer: a paste of more than [`COLLAPSE_LINES`] lines or
//! [`COLLAPSE_CHARS`] characters is shown as a placeholder (`[Pasted text #1 +120 lines]`) and
//! expanded when the prompt is submitted; a paste over [`MAX_PASTE_BYTES`] is refused (the caller
//! shows why), so a 10 MB paste neither hangs the UI nor lands in the model's context by accident.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::wrap::{char_width, sanitize, sanitize_input};

/// A paste with more lines than this becomes a placeholder.
pub const COLLAPSE_LINES: usize = 10;
/// A paste with more characters than this becomes a placeholder.
pub const COLLAPSE_CHARS: usize = 2_000;
/// The largest paste accepted, in bytes.
pub const MAX_PASTE_BYTES: usize = 1024 * 1024;

/// Why a paste was not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("paste of {} refused: the limit is 1 MB; save it to a file and mention it with @path", human_bytes(*bytes))]
pub struct PasteTooLarge {
    /// Size of the refused paste.
    pub bytes: usize,
}

/// `1.5 MB`, `20 KB`, `300 B`.
pub fn human_bytes(bytes: usize) -> String {
    if bytes >= 1024 * 1024 {
        format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
    } else if bytes >= 1024 {
        format!("{} KB", bytes / 1024)
    } else {
        format!("{bytes} B")
    }
}

/// The editor's text, cursor and recall state.
#[derive(Debug, Default)]
pub struct InputEditor {
    text: String,
    /// Byte offset of the cursor in `text` (always on a char boundary).
    cursor: usize,
    pastes: Vec<(String, String)>,
    history: Vec<String>,
    /// Position in `history` while recalling; `history.len()` when editing a new prompt.
    recall: Option<usize>,
    draft: String,
}

impl InputEditor {
    /// An empty editor recalling from `history` (oldest first).
    pub fn with_history(history: Vec<String>) -> Self {
        InputEditor { history, ..InputEditor::default() }
    }

    /// The text as shown (placeholders not expanded).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The cursor's byte offset.
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// Whether there is no text.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Replaces the whole text, cursor at the end.
    pub fn set_text(&mut self, text: &str) {
        self.text = text.to_string();
        self.cursor = self.text.len();
    }

    /// Replaces the bytes `range` with `with`, cursor after the insertion.
    pub fn replace_range(&mut self, range: std::ops::Range<usize>, with: &str) {
        self.text.replace_range(range.clone(), with);
        self.cursor = range.start + with.len();
    }

    /// Clears the text (pastes included) and leaves history recall.
    pub fn clear(&mut self) {
        self.text.clear();
        self.cursor = 0;
        self.pastes.clear();
        self.recall = None;
    }

    /// Takes the prompt for submission, with pasted placeholders expanded, and clears the editor.
    pub fn submit(&mut self) -> String {
        let mut text = std::mem::take(&mut self.text);
        for (placeholder, content) in self.pastes.drain(..) {
            text = text.replacen(&placeholder, &content, 1);
        }
        self.clear();
        text
    }

    /// Adds a submitted prompt to the recall list.
    pub fn remember(&mut self, prompt: &str) {
        if self.history.last().map(String::as_str) != Some(prompt) {
            self.history.push(prompt.to_string());
        }
    }

    /// Inserts typed text at the cursor.
    pub fn insert(&mut self, text: &str) {
        self.text.insert_str(self.cursor, text);
        self.cursor += text.len();
    }

    /// Inserts a bracketed paste: line endings normalised, large pastes collapsed to a placeholder.
    pub fn paste(&mut self, pasted: &str) -> Result<(), PasteTooLarge> {
        if pasted.len() > MAX_PASTE_BYTES {
            return Err(PasteTooLarge { bytes: pasted.len() });
        }
        let normalised = pasted.replace("\r\n", "\n").replace('\r', "\n");
        // Control bytes (Ctrl+C, ESC) in a paste reach the prompt in caret notation (`^C`, `^[`).
        let normalised = sanitize_input(&normalised).into_owned();
        let lines = normalised.lines().count();
        if lines > COLLAPSE_LINES || normalised.chars().count() > COLLAPSE_CHARS {
            let placeholder = format!("[Pasted text #{} +{lines} lines]", self.pastes.len() + 1);
            self.insert(&placeholder);
            self.pastes.push((placeholder, normalised));
        } else {
            self.insert(&sanitize(&normalised));
        }
        Ok(())
    }

    /// Deletes the character before the cursor.
    pub fn backspace(&mut self) {
        if let Some(previous) = self.previous_boundary(self.cursor) {
            self.text.replace_range(previous..self.cursor, "");
            self.cursor = previous;
        }
    }

    /// Deletes the character under the cursor.
    pub fn delete(&mut self) {
        if let Some(next) = self.next_boundary(self.cursor) {
            self.text.replace_range(self.cursor..next, "");
        }
    }

    /// Moves one character left.
    pub fn left(&mut self) {
        if let Some(previous) = self.previous_boundary(self.cursor) {
            self.cursor = previous;
        }
    }

    /// Moves one character right.
    pub fn right(&mut self) {
        if let Some(next) = self.next_boundary(self.cursor) {
            self.cursor = next;
        }
    }

    /// Moves to the start of the current line.
    pub fn home(&mut self) {
        self.cursor = self.line_start(self.cursor);
    }

    /// Moves to the end of the current line.
    pub fn end(&mut self) {
        self.cursor = self.line_end(self.cursor);
    }

    /// Moves to the start of the previous word.
    pub fn word_left(&mut self) {
        self.cursor = self.word_start_before(self.cursor);
    }

    /// Moves past the end of the next word.
    pub fn word_right(&mut self) {
        let rest = &self.text[self.cursor..];
        let skipped = rest.len() - rest.trim_start().len();
        let word = rest[skipped..].find(char::is_whitespace).unwrap_or(rest.len() - skipped);
        self.cursor += skipped + word;
    }

    /// Deletes the word before the cursor (Ctrl+W).
    pub fn delete_word_before(&mut self) {
        let start = self.word_start_before(self.cursor);
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }

    /// Deletes from the start of the line to the cursor (Ctrl+U).
    pub fn kill_to_line_start(&mut self) {
        let start = self.line_start(self.cursor);
        let start = if start == self.cursor && start > 0 { start - 1 } else { start };
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }

    /// Deletes from the cursor to the end of the line (Ctrl+K).
    pub fn kill_to_line_end(&mut self) {
        let end = self.line_end(self.cursor);
        let end = if end == self.cursor && end < self.text.len() { end + 1 } else { end };
        self.text.replace_range(self.cursor..end, "");
    }

    /// Moves up a line, or recalls the previous prompt when on the first line. Returns whether
    /// anything changed.
    pub fn up(&mut self) -> bool {
        let start = self.line_start(self.cursor);
        if start > 0 {
            let column = self.text[start..self.cursor].chars().count();
            let previous_start = self.line_start(start - 1);
            self.cursor = self.offset_at_column(previous_start, column);
            return true;
        }
        let index = match self.recall {
            Some(0) => return false,
            Some(index) => index - 1,
            None if self.history.is_empty() => return false,
            None => {
                self.draft = std::mem::take(&mut self.text);
                self.history.len() - 1
            }
        };
        self.recall = Some(index);
        self.text = self.history[index].clone();
        self.cursor = self.text.len();
        true
    }

    /// Moves down a line, or recalls the next prompt (and finally the draft) when on the last
    /// line. Returns whether anything changed.
    pub fn down(&mut self) -> bool {
        let end = self.line_end(self.cursor);
        if end < self.text.len() {
            let column = self.text[self.line_start(self.cursor)..self.cursor].chars().count();
            self.cursor = self.offset_at_column(end + 1, column);
            return true;
        }
        match self.recall {
            None => false,
            Some(index) if index + 1 < self.history.len() => {
                self.recall = Some(index + 1);
                self.text = self.history[index + 1].clone();
                self.cursor = self.text.len();
                true
            }
            Some(_) => {
                self.recall = None;
                self.text = std::mem::take(&mut self.draft);
                self.cursor = self.text.len();
                true
            }
        }
    }

    fn previous_boundary(&self, at: usize) -> Option<usize> {
        self.text[..at].char_indices().next_back().map(|(i, _)| i)
    }

    fn next_boundary(&self, at: usize) -> Option<usize> {
        self.text[at..].chars().next().map(|c| at + c.len_utf8())
    }

    fn line_start(&self, at: usize) -> usize {
        self.text[..at].rfind('\n').map_or(0, |i| i + 1)
    }

    fn line_end(&self, at: usize) -> usize {
        self.text[at..].find('\n').map_or(self.text.len(), |i| at + i)
    }

    fn offset_at_column(&self, line_start: usize, column: usize) -> usize {
        let end = self.line_end(line_start);
        self.text[line_start..end].char_indices().nth(column).map_or(end, |(i, _)| line_start + i)
    }

    fn word_start_before(&self, at: usize) -> usize {
        let before = &self.text[..at];
        let trimmed = before.trim_end();
        trimmed
            .rfind(char::is_whitespace)
            .map_or(0, |i| i + trimmed[i..].chars().next().map_or(1, char::len_utf8))
    }

    /// The rows to draw at `width` cells, each starting with `first` (first row) or `rest`, and the
    /// cursor's `(column, row)` within them.
    pub fn layout(
        &self,
        width: usize,
        first: &[Span<'static>],
        rest: &[Span<'static>],
        style: Style,
    ) -> (Vec<Line<'static>>, (u16, u16)) {
        let mut rows: Vec<Line<'static>> = Vec::new();
        let mut row = String::new();
        let mut prefix: Vec<Span<'static>> = first.to_vec();
        let mut column = prefix.iter().map(Span::width).sum::<usize>();
        let indent = rest.iter().map(Span::width).sum::<usize>();
        let width = width.max(indent + 1);
        let mut cursor = (column, 0);
        let finish_row =
            |rows: &mut Vec<Line<'static>>, prefix: &mut Vec<Span<'static>>, row: &mut String| {
                let mut spans = std::mem::replace(prefix, rest.to_vec());
                spans.push(Span::styled(std::mem::take(row), style));
                rows.push(Line::from(spans));
            };
        for (offset, c) in self.text.char_indices() {
            if offset == self.cursor {
                cursor = (column, rows.len());
            }
            if c == '\n' {
                finish_row(&mut rows, &mut prefix, &mut row);
                column = indent;
                continue;
            }
            let w = char_width(c);
            if column + w > width {
                finish_row(&mut rows, &mut prefix, &mut row);
                column = indent;
                if offset == self.cursor {
                    cursor = (column, rows.len());
                }
            }
            row.push(c);
            column += w;
        }
        if self.cursor >= self.text.len() {
            if column >= width {
                finish_row(&mut rows, &mut prefix, &mut row);
                column = indent;
            }
            cursor = (column, rows.len());
        }
        finish_row(&mut rows, &mut prefix, &mut row);
        (rows, (cursor.0 as u16, cursor.1 as u16))
    }
}

#[cfg(test)]
#[path = "input_tests.rs"]
mod tests;
