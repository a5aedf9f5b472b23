//! Markdown tables laid out in columns: each column as wide as its widest cell, the widest columns
//! narrowed until the table fits the width, and cells that do not fit cut with `…`.

use pulldown_cmark::{Event, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::theme;
use super::wrap::{char_width, str_width};

/// Columns are never narrowed below this many cells.
const MIN_COLUMN: usize = 3;
const SEPARATOR: &str = " │ ";

/// A table being collected from parser events.
#[derive(Default)]
pub struct Table {
    rows: Vec<Vec<Vec<Span<'static>>>>,
    header_rows: usize,
    row: Vec<Vec<Span<'static>>>,
}

impl Table {
    /// Takes the table's structural events; cell content arrives in `inline` through the normal
    /// inline handling. Returns whether the event was consumed.
    pub fn event(
        &mut self,
        event: &Event<'_>,
        inline: &mut Vec<Span<'static>>,
        styles: &mut Vec<Style>,
    ) -> bool {
        match event {
            Event::Start(Tag::TableHead) => {
                styles.push(Style::default().add_modifier(Modifier::BOLD));
                true
            }
            Event::End(TagEnd::TableHead) => {
                styles.pop();
                self.rows.push(std::mem::take(&mut self.row));
                self.header_rows = self.rows.len();
                true
            }
            Event::Start(Tag::TableRow) => true,
            Event::End(TagEnd::TableRow) => {
                self.rows.push(std::mem::take(&mut self.row));
                true
            }
            Event::Start(Tag::TableCell) => {
                inline.clear();
                true
            }
            Event::End(TagEnd::TableCell) => {
                self.row.push(std::mem::take(inline));
                true
            }
            _ => false,
        }
    }

    /// Lays the table out in `width` cells, each row starting with `prefix`.
    pub fn render(self, width: usize, prefix: &[Span<'static>]) -> Vec<Line<'static>> {
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        if columns == 0 {
            return Vec::new();
        }
        let mut widths = vec![0; columns];
        for row in &self.rows {
            for (column, cell) in row.iter().enumerate() {
                widths[column] = widths[column].max(cell.iter().map(Span::width).sum());
            }
        }
        let prefix_width: usize = prefix.iter().map(Span::width).sum();
        let available = width.saturating_sub(prefix_width + SEPARATOR.len() * (columns - 1));
        while widths.iter().sum::<usize>() > available {
            let Some((widest, &w)) = widths.iter().enumerate().max_by_key(|(_, w)| **w) else { break };
            if w <= MIN_COLUMN {
                break;
            }
            widths[widest] = w - 1;
        }
        let mut out = Vec::new();
        for (index, row) in self.rows.iter().enumerate() {
            let mut spans = prefix.to_vec();
            for (column, &w) in widths.iter().enumerate() {
                if column > 0 {
                    spans.push(Span::styled(SEPARATOR, theme::border()));
                }
                let cell = row.get(column).map(Vec::as_slice).unwrap_or(&[]);
                spans.extend(fit(cell, w));
            }
            out.push(Line::from(spans));
            if index + 1 == self.header_rows {
                let mut rule = prefix.to_vec();
                let parts: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                rule.push(Span::styled(parts.join("─┼─"), theme::border()));
                out.push(Line::from(rule));
            }
        }
        out
    }
}

/// The cell's spans cut to `width` cells (with `…`) or padded with spaces to exactly `width`.
fn fit(cell: &[Span<'static>], width: usize) -> Vec<Span<'static>> {
    let total: usize = cell.iter().map(Span::width).sum();
    let mut out = Vec::new();
    if total <= width {
        out.extend(cell.iter().cloned());
        out.push(Span::raw(" ".repeat(width - total)));
        return out;
    }
    let mut used = 0;
    'spans: for span in cell {
        let mut text = String::new();
        for c in span.content.chars() {
            let w = char_width(c);
            if used + w + 1 > width {
                out.push(Span::styled(text, span.style));
                break 'spans;
            }
            text.push(c);
            used += w;
        }
        out.push(Span::styled(text, span.style));
    }
    out.push(Span::raw("…"));
    used += 1;
    let shown: usize = out.iter().map(|s| str_width(&s.content)).sum();
    out.push(Span::raw(" ".repeat(width.saturating_sub(shown.max(used)))));
    out
}
