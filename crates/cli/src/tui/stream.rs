//! Streamed Markdown: cuts a growing answer into finished rows (which go to the terminal's
//! scrollback and are never drawn again) and a live tail (drawn in the viewport every frame).
//!
//! The text is processed a complete line at a time. Outside a code fence, lines collect into a
//! block until a blank line (or a heading, or a fence) ends it; the block is then rendered with
//! `markdown::render` and committed. Inside a fence every completed line is highlighted and committed
//! at once, so a long code block streams row by row and each line is highlighted exactly once. The
//! live tail is the current block plus the incomplete last line. When the tail is taller than the
//! viewport can show, its top rows are committed early ([`MarkdownStream::prepare`]): greedy
//! word wrapping never changes a row once a later row exists, so those rows are final.

use ratatui::text::{Line, Span};

use super::highlight::CodeHighlighter;
use super::markdown;
use super::theme;
use super::wrap::{sanitize, wrap_chars, wrap_words};

/// Whether the stream is the answer or the model's reasoning (shown dimmed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Assistant text.
    Answer,
    /// Thinking / reasoning text.
    Reasoning,
}

struct Fence {
    marker: char,
    length: usize,
    indent: usize,
    highlighter: CodeHighlighter,
}

/// One streamed message (answer or reasoning).
pub struct MarkdownStream {
    tone: Tone,
    width: usize,
    partial: String,
    block: String,
    fence: Option<Fence>,
    /// Rows of the current block already committed early.
    block_committed: usize,
    /// The width the current block was rendered at when its first rows were committed early: it
    /// renders at that width until it ends (its rows then keep matching the committed ones), and
    /// rows wider than the screen are wrapped again.
    block_width: usize,
    /// Whether any row has been committed (the next block then starts with a blank row).
    started: bool,
    committed: Vec<Line<'static>>,
    chars: usize,
}

impl MarkdownStream {
    /// An empty stream rendering at `width` cells.
    pub fn new(tone: Tone, width: usize) -> Self {
        MarkdownStream {
            tone,
            width: width.max(1),
            partial: String::new(),
            block: String::new(),
            fence: None,
            block_committed: 0,
            block_width: width.max(1),
            started: false,
            committed: Vec::new(),
            chars: 0,
        }
    }

    /// The tone this stream renders in.
    pub fn tone(&self) -> Tone {
        self.tone
    }

    /// Renders later rows at `width` cells (rows already committed stay as they are; a block whose
    /// top rows were committed keeps its width until it ends).
    pub fn set_width(&mut self, width: usize) {
        self.width = width.max(1);
    }

    /// Adds a streamed piece of text.
    pub fn push(&mut self, delta: &str) {
        self.chars += delta.chars().count();
        let delta = sanitize(delta);
        let mut rest: &str = &delta;
        while let Some(end) = rest.find('\n') {
            self.partial.push_str(&rest[..end]);
            let line = std::mem::take(&mut self.partial);
            self.line(&line);
            rest = &rest[end + 1..];
        }
        self.partial.push_str(rest);
    }

    /// Ends the message: everything still live is committed.
    pub fn finish(&mut self) {
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.line(&line);
        }
        self.flush_block();
        self.fence = None;
    }

    /// Rows committed since the last call, in order.
    pub fn take_committed(&mut self) -> Vec<Line<'static>> {
        std::mem::take(&mut self.committed)
    }

    /// The live tail as it should be drawn now.
    #[cfg(test)]
    pub fn live(&self) -> Vec<Line<'static>> {
        if self.fence.is_some() {
            return self.tone_rows(self.fence_tail());
        }
        let mut rows = self.render_tail();
        rows.drain(..self.block_committed.min(rows.len()));
        let rows = self.fit(rows);
        self.finish_live(rows)
    }

    /// Commits the top rows of the live tail so that at most `keep` rows stay live, and returns
    /// the rows that stay (as [`MarkdownStream::live`] would, with one rendering instead of two).
    pub fn prepare(&mut self, keep: usize) -> Vec<Line<'static>> {
        if self.fence.is_some() {
            return self.tone_rows(self.fence_tail());
        }
        let mut rows = self.render_tail();
        rows.drain(..self.block_committed.min(rows.len()));
        let keep = keep.max(1);
        if rows.len() > keep {
            let count = rows.len() - keep;
            let first = self.block_committed == 0;
            if first {
                self.block_width = self.width;
            }
            let overflow: Vec<Line<'static>> = rows.drain(..count).collect();
            self.block_committed += count;
            let overflow = self.fit(overflow);
            self.commit_block_rows(overflow, first);
        }
        let rows = self.fit(rows);
        self.finish_live(rows)
    }

    /// Changes with every piece of text received (for caching the live rows).
    pub fn revision(&self) -> usize {
        self.chars
    }

    fn fence_tail(&self) -> Vec<Line<'static>> {
        if self.partial.is_empty() {
            return Vec::new();
        }
        let indent = self.fence.as_ref().map_or(0, |f| f.indent);
        wrap_chars(&Line::from(strip_indent(&self.partial, indent).to_string()), self.width, &[], &[])
    }

    fn finish_live(&self, mut rows: Vec<Line<'static>>) -> Vec<Line<'static>> {
        if self.started && self.block_committed == 0 && !rows.is_empty() {
            rows.insert(0, Line::default());
        }
        self.tone_rows(rows)
    }

    fn render_tail(&self) -> Vec<Line<'static>> {
        if self.block.is_empty() && self.partial.is_empty() {
            return Vec::new();
        }
        let mut source = self.block.clone();
        source.push_str(&self.partial);
        markdown::render(&source, self.block_render_width())
    }

    /// The width the current block renders at.
    fn block_render_width(&self) -> usize {
        if self.block_committed > 0 { self.block_width } else { self.width }
    }

    /// Rows wider than the screen (a block rendered before the screen narrowed), wrapped again.
    fn fit(&self, rows: Vec<Line<'static>>) -> Vec<Line<'static>> {
        if rows.iter().all(|row| row.width() <= self.width) {
            return rows;
        }
        rows.into_iter()
            .flat_map(|row| {
                if row.width() <= self.width { vec![row] } else { wrap_words(&row, self.width, &[], &[]) }
            })
            .collect()
    }

    fn line(&mut self, line: &str) {
        if let Some(fence) = &mut self.fence {
            if closes(line, fence.marker, fence.length) {
                self.fence = None;
                return;
            }
            let text = strip_indent(line, fence.indent);
            let row = fence.highlighter.line(text);
            let pad = " ".repeat(fence.indent);
            let prefix = if pad.is_empty() { Vec::new() } else { vec![Span::raw(pad)] };
            let rows = wrap_chars(&row, self.width, &prefix, &prefix);
            self.commit_rows(rows);
            return;
        }
        if let Some((marker, length, indent, info)) = opens(line) {
            self.flush_block();
            self.separate();
            self.fence = Some(Fence { marker, length, indent, highlighter: CodeHighlighter::new(info) });
            return;
        }
        if line.trim().is_empty() {
            self.flush_block();
            return;
        }
        let heading = line.trim_start().starts_with('#');
        if heading {
            self.flush_block();
        }
        self.block.push_str(line);
        self.block.push('\n');
        if heading {
            self.flush_block();
        }
    }

    fn flush_block(&mut self) {
        if self.block.is_empty() {
            return;
        }
        let mut rows = markdown::render(&self.block, self.block_render_width());
        let start = self.block_committed.min(rows.len());
        let first = self.block_committed == 0;
        let rows: Vec<Line<'static>> = rows.drain(start..).collect();
        let rows = self.fit(rows);
        self.commit_block_rows(rows, first);
        self.block.clear();
        self.block_committed = 0;
    }

    fn commit_block_rows(&mut self, rows: Vec<Line<'static>>, first_of_block: bool) {
        if rows.is_empty() {
            return;
        }
        if first_of_block {
            self.separate();
        }
        self.commit_rows(rows);
    }

    /// A blank row between blocks (not before the first).
    fn separate(&mut self) {
        if self.started {
            self.committed.push(Line::default());
            self.started = false;
        }
    }

    fn commit_rows(&mut self, rows: Vec<Line<'static>>) {
        let rows = self.tone_rows(rows);
        self.committed.extend(rows);
        self.started = true;
    }

    fn tone_rows(&self, rows: Vec<Line<'static>>) -> Vec<Line<'static>> {
        match self.tone {
            Tone::Answer => rows,
            Tone::Reasoning => rows
                .into_iter()
                .map(|row| {
                    let spans: Vec<Span<'static>> =
                        row.spans.into_iter().map(|span| span.patch_style(theme::reasoning())).collect();
                    Line::from(spans).style(row.style)
                })
                .collect(),
        }
    }
}

/// `(marker, length, indent, info)` when `line` opens a fenced code block.
fn opens(line: &str) -> Option<(char, usize, usize, &str)> {
    let trimmed = line.trim_start_matches(' ');
    let indent = line.len() - trimmed.len();
    let marker = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let length = trimmed.chars().take_while(|c| *c == marker).count();
    if length < 3 {
        return None;
    }
    let info = trimmed[length..].trim();
    if marker == '`' && info.contains('`') {
        return None;
    }
    Some((marker, length, indent, info))
}

fn closes(line: &str, marker: char, length: usize) -> bool {
    let trimmed = line.trim();
    trimmed.chars().count() >= length && trimmed.chars().all(|c| c == marker)
}

fn strip_indent(line: &str, indent: usize) -> &str {
    let spaces = line.len() - line.trim_start_matches(' ').len();
    &line[spaces.min(indent)..]
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
