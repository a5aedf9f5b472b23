//! Colored unified diffs, as tools give them: an edit's or a write's change in its result view
//! and in its permission preview.
//!
//! Each row is `<line number> <sign> <text>`: added rows green with their new line number, removed
//! rows red with their old one, context dimmed; the `---`/`+++` headers are dropped (the tool line
//! already names the file) and hunks are separated by `⋮`. Long lines wrap under their text.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::theme;
use super::wrap::{sanitize, wrap_chars};

/// Width of the line-number column.
const GUTTER: usize = 4;

/// Renders `diff` (unified format) to at most `max_rows` rows of `width` cells, each starting
/// with `prefix` and the line's number in the file; when rows are left out the last row says how
/// many.
pub fn render(diff: &str, width: usize, prefix: &[Span<'static>], max_rows: usize) -> Vec<Line<'static>> {
    let diff = sanitize(diff);
    let mut rows: Vec<Line<'static>> = Vec::new();
    let (mut old, mut new) = (0usize, 0usize);
    let mut hunks = 0;
    for line in diff.lines() {
        let (number, sign, style, text) = if let Some(header) = line.strip_prefix("@@ ") {
            if let Some((o, n)) = hunk_start(header) {
                (old, new) = (o, n);
            }
            hunks += 1;
            if hunks > 1 {
                let mark = Span::styled(format!("{:>GUTTER$}", "⋮"), theme::dim());
                rows.push(Line::from([prefix, &[mark]].concat()));
            }
            continue;
        } else if line.starts_with("--- ") || line.starts_with("+++ ") {
            continue;
        } else if let Some(text) = line.strip_prefix('+') {
            new += 1;
            (Some(new - 1), '+', theme::diff_added(), text)
        } else if let Some(text) = line.strip_prefix('-') {
            old += 1;
            (Some(old - 1), '-', theme::diff_removed(), text)
        } else if let Some(text) = line.strip_prefix(' ') {
            old += 1;
            new += 1;
            (Some(new - 1), ' ', theme::dim(), text)
        } else {
            (None, ' ', theme::dim(), line)
        };
        let mut first = prefix.to_vec();
        let number = number.map_or(String::new(), |n| n.to_string());
        first.push(Span::styled(format!("{number:>GUTTER$} "), theme::dim()));
        first.push(Span::styled(format!("{sign} "), style));
        let mut rest = prefix.to_vec();
        rest.push(Span::raw(" ".repeat(GUTTER + 3)));
        let body = Line::from(Span::styled(text.to_string(), Style::default().patch(style)));
        rows.extend(wrap_chars(&body, width, &first, &rest));
    }
    cap(rows, max_rows, prefix)
}

/// Keeps at most `max_rows` rows; the last one then says how many were left out.
pub fn cap(mut rows: Vec<Line<'static>>, max_rows: usize, prefix: &[Span<'static>]) -> Vec<Line<'static>> {
    if rows.len() > max_rows && max_rows > 0 {
        let hidden = rows.len() - (max_rows - 1);
        rows.truncate(max_rows - 1);
        let mut last = prefix.to_vec();
        last.push(Span::styled(format!("… +{hidden} lines"), theme::dim()));
        rows.push(Line::from(last));
    }
    rows
}

/// `(old start, new start)` from the text after `@@ ` (`-12,3 +12,4 @@`).
fn hunk_start(header: &str) -> Option<(usize, usize)> {
    let mut parts = header.split_whitespace();
    let old = parts.next()?.strip_prefix('-')?;
    let new = parts.next()?.strip_prefix('+')?;
    let start = |range: &str| range.split(',').next().and_then(|n| n.parse::<usize>().ok());
    Some((start(old)?, start(new)?))
}

#[cfg(test)]
#[path = "diff_tests.rs"]
mod tests;
