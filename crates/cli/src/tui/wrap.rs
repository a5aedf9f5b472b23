//! Wrapping styled lines to a width in terminal cells.
//!
//! Transcript lines are wrapped by the UI itself before they go into the terminal's scrollback, so
//! that the number of rows each entry takes is known (the inline viewport needs it) and continuation
//! rows can carry an indent (list items, block quotes, tool results). Prose wraps at word
//! boundaries ([`wrap_words`]); code and tool output wrap at any character ([`wrap_chars`]), keeping
//! every space. Widths are display cells (`unicode-width`): a CJK character takes two.

use std::borrow::Cow;

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// Columns a tab expands to.
const TAB_WIDTH: usize = 4;

/// Display width of `c` in cells (control characters are replaced before they get here).
pub fn char_width(c: char) -> usize {
    c.width().unwrap_or(0)
}

/// Display width of `text` in cells.
pub fn str_width(text: &str) -> usize {
    text.chars().map(char_width).sum()
}

/// Makes text safe to put on the screen: tabs become spaces (to the next multiple of four within
/// the string), other control characters become `�`, and `\r` is dropped. Newlines are kept.
pub fn sanitize(text: &str) -> Cow<'_, str> {
    clean(text, |_, out| out.push('\u{fffd}'))
}

/// Makes text the user pasted fit for the prompt (and so for the request): each control character
/// but newline and tab is shown in caret notation (`^C` for U+0003, `^[` for ESC, `^?` for DEL),
/// and one without a caret form (the C1 controls) is dropped — never `�`.
pub fn sanitize_input(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        let code = c as u32;
        match c {
            '\n' | '\t' => out.push(c),
            _ if code < 0x20 => {
                out.push('^');
                out.push(char::from_u32(code + 0x40).unwrap_or('?'));
            }
            '\u{7f}' => out.push_str("^?"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Tabs expanded, `\r` dropped, newlines kept, and every other control character given to
/// `control` (which writes what stands for it, in one cell or two).
fn clean(text: &str, control: impl Fn(char, &mut String)) -> Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() && c != '\n') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut column = 0;
    for c in text.chars() {
        match c {
            '\n' => {
                out.push('\n');
                column = 0;
            }
            '\t' => {
                let spaces = TAB_WIDTH - column % TAB_WIDTH;
                out.extend(std::iter::repeat_n(' ', spaces));
                column += spaces;
            }
            '\r' => {}
            c if c.is_control() => {
                let before = out.len();
                control(c, &mut out);
                column += out.len() - before;
            }
            c => {
                out.push(c);
                column += char_width(c);
            }
        }
    }
    Cow::Owned(out)
}

/// A piece of a word: text in one style.
type Piece = (String, Style);

enum Token {
    Word { pieces: Vec<Piece>, width: usize },
    Space { text: String, style: Style, width: usize },
}

fn tokenize(line: &Line<'_>) -> Vec<Token> {
    let mut tokens: Vec<Token> = Vec::new();
    for span in &line.spans {
        let style = line.style.patch(span.style);
        for c in span.content.chars() {
            let width = char_width(c);
            let is_space = c == ' ';
            match tokens.last_mut() {
                Some(Token::Space { text, width: w, .. }) if is_space => {
                    text.push(c);
                    *w += width;
                }
                Some(Token::Word { pieces, width: w }) if !is_space => {
                    match pieces.last_mut() {
                        Some((text, piece_style)) if *piece_style == style => text.push(c),
                        _ => pieces.push((c.to_string(), style)),
                    }
                    *w += width;
                }
                _ if is_space => tokens.push(Token::Space { text: c.to_string(), style, width }),
                _ => tokens.push(Token::Word { pieces: vec![(c.to_string(), style)], width }),
            }
        }
    }
    tokens
}

/// Builds output rows: each row starts with a prefix (`first` for the first row, `rest` after).
struct Rows<'p> {
    width: usize,
    rest: &'p [Span<'static>],
    rows: Vec<Line<'static>>,
    current: Vec<Span<'static>>,
    used: usize,
    has_content: bool,
}

impl<'p> Rows<'p> {
    fn new(width: usize, first: &'p [Span<'static>], rest: &'p [Span<'static>]) -> Self {
        let mut rows = Rows {
            width: width.max(1),
            rest,
            rows: Vec::new(),
            current: Vec::new(),
            used: 0,
            has_content: false,
        };
        rows.start(first);
        rows
    }

    fn start(&mut self, prefix: &[Span<'static>]) {
        self.current = prefix.to_vec();
        self.used = prefix.iter().map(Span::width).sum();
        // A prefix wider than the row leaves one cell for content so that progress is always made.
        if self.used >= self.width {
            self.used = self.width - 1;
        }
        self.has_content = false;
    }

    fn available(&self) -> usize {
        self.width - self.used
    }

    fn newline(&mut self) {
        let row = std::mem::take(&mut self.current);
        self.rows.push(Line::from(row));
        let rest = self.rest;
        self.start(rest);
    }

    fn push(&mut self, text: &str, style: Style, width: usize) {
        match self.current.last_mut() {
            Some(last) if last.style == style && self.has_content => last.content.to_mut().push_str(text),
            _ => self.current.push(Span::styled(text.to_string(), style)),
        }
        self.used += width;
        self.has_content = true;
    }

    /// Pushes text character by character, breaking rows wherever it is full.
    fn push_chars(&mut self, text: &str, style: Style) {
        let mut run = String::new();
        let mut run_width = 0;
        for c in text.chars() {
            let w = char_width(c);
            if self.used + run_width + w > self.width && (self.has_content || run_width > 0) {
                self.push(&run, style, run_width);
                run.clear();
                run_width = 0;
                self.newline();
            }
            run.push(c);
            run_width += w;
        }
        if !run.is_empty() {
            self.push(&run, style, run_width);
        }
    }

    fn finish(mut self) -> Vec<Line<'static>> {
        let row = std::mem::take(&mut self.current);
        self.rows.push(Line::from(row));
        self.rows
    }
}

/// Wraps `line` at word boundaries to `width` cells. The first row starts with `first`, the others
/// with `rest`; spaces at a break are dropped, words longer than a row are split. An empty line
/// gives one row holding just the prefix.
pub fn wrap_words(
    line: &Line<'_>,
    width: usize,
    first: &[Span<'static>],
    rest: &[Span<'static>],
) -> Vec<Line<'static>> {
    let mut rows = Rows::new(width, first, rest);
    let mut pending_space: Option<(String, Style, usize)> = None;
    for token in tokenize(line) {
        match token {
            Token::Space { text, style, width } => {
                if rows.has_content {
                    pending_space = Some((text, style, width));
                }
            }
            Token::Word { pieces, width } => {
                let space_width = pending_space.as_ref().map_or(0, |(_, _, w)| *w);
                if rows.has_content && space_width + width > rows.available() {
                    rows.newline();
                    pending_space = None;
                }
                if let Some((text, style, w)) = pending_space.take() {
                    rows.push(&text, style, w);
                }
                if width <= rows.available() {
                    for (text, style) in &pieces {
                        rows.push(text, *style, str_width(text));
                    }
                } else {
                    for (text, style) in &pieces {
                        rows.push_chars(text, *style);
                    }
                }
            }
        }
    }
    rows.finish()
}

/// Wraps `line` at any character to `width` cells, keeping every space (code, command output).
pub fn wrap_chars(
    line: &Line<'_>,
    width: usize,
    first: &[Span<'static>],
    rest: &[Span<'static>],
) -> Vec<Line<'static>> {
    let mut rows = Rows::new(width, first, rest);
    for span in &line.spans {
        rows.push_chars(&span.content, line.style.patch(span.style));
    }
    rows.finish()
}

/// Cuts `text` to at most `width` cells, ending with `…` when something was cut.
pub fn truncate(text: &str, width: usize) -> String {
    if str_width(text) <= width {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = char_width(c);
        if used + w + 1 > width {
            break;
        }
        out.push(c);
        used += w;
    }
    if width > 0 {
        out.push('…');
    }
    out
}

#[cfg(test)]
#[path = "wrap_tests.rs"]
mod tests;
