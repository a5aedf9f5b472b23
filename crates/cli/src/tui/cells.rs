//! Transcript entries as rows: the user's prompt, one line per tool call with its status and
//! elapsed time, a result summary of at most [`RESULT_ROWS`] rows (what the tool's result view
//! suggests: a colored diff for a change), notices, and the task list.
//!
//! Everything here is a pure function of the entry and the width, so the same code draws a tool
//! call while it runs (in the viewport) and once it is done (into the scrollback).

use std::time::Duration;

use lathe_protocol::{ResultView, ToolCall, ToolResult, ToolStatus};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use serde_json::Value;

use super::diff;
use super::theme;
use super::wrap::{sanitize, str_width, truncate, wrap_chars, wrap_words};

/// Rows of a tool result summary.
pub const RESULT_ROWS: usize = 5;
/// Rows of a diff after an edit or write.
pub const DIFF_ROWS: usize = 24;

/// Where a tool call is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallState {
    /// Running; `frame` picks the spinner glyph.
    Running {
        /// Spinner frame.
        frame: usize,
    },
    /// Waiting for the user's permission answer.
    AwaitingPermission,
    /// Waiting for the user's answer to the question it asked.
    AwaitingAnswer,
    /// Finished with this result status; `is_error` from the result.
    Done {
        /// How it ended.
        status: ToolStatus,
        /// Whether the result is an error.
        is_error: bool,
    },
}

/// Spinner glyphs, one per frame.
pub const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// The prompt as the user typed it: `›` then the text, wrapped.
pub fn user_prompt(text: &str, width: usize) -> Vec<Line<'static>> {
    let text = sanitize(text);
    let mut rows = Vec::new();
    for (i, line) in text.trim_end().lines().enumerate() {
        let first = if i == 0 { Span::styled("› ", theme::user()) } else { Span::raw("  ") };
        let line = Line::from(Span::styled(line.to_string(), Style::default().add_modifier(Modifier::BOLD)));
        rows.extend(wrap_words(&line, width, &[first], &[Span::raw("  ")]));
    }
    rows
}

/// A notice in the transcript: information (dim), a warning (yellow) or an error (red).
pub fn notice(kind: NoticeKind, text: &str, width: usize) -> Vec<Line<'static>> {
    let (mark, style) = match kind {
        NoticeKind::Info => ("• ", theme::dim()),
        NoticeKind::Warning => ("⚠ ", theme::warning()),
        NoticeKind::Error => ("✗ ", theme::error()),
    };
    let text = sanitize(text);
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let first = if i == 0 { Span::styled(mark, style) } else { Span::raw("  ") };
        rows.extend(wrap_words(
            &Line::from(Span::styled(line.to_string(), style)),
            width,
            &[first],
            &[Span::raw("  ")],
        ));
    }
    rows
}

/// How a notice looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeKind {
    /// Neutral information.
    Info,
    /// Something to know; the run goes on.
    Warning,
    /// Something failed.
    Error,
}

/// The tool call's line: bullet, name, the tool's one-line `summary` of the call (or that its
/// arguments were cut off), then status and elapsed time.
pub fn call_line(
    call: &ToolCall,
    summary: &str,
    state: CallState,
    elapsed: Duration,
    width: usize,
) -> Line<'static> {
    let (bullet, bullet_style, status, status_style) = match state {
        CallState::Running { frame } => {
            (SPINNER[frame % SPINNER.len()], theme::dim(), String::new(), theme::dim())
        }
        CallState::AwaitingPermission => {
            ("●", theme::warning(), "awaiting permission".to_string(), theme::warning())
        }
        CallState::AwaitingAnswer => {
            ("●", theme::warning(), "awaiting your answer".to_string(), theme::warning())
        }
        CallState::Done { status, is_error } => match status {
            ToolStatus::Completed if is_error => ("●", theme::error(), "✗".to_string(), theme::error()),
            ToolStatus::Completed => ("●", theme::ok(), "✓".to_string(), theme::ok()),
            ToolStatus::Denied => ("●", theme::warning(), "denied".to_string(), theme::warning()),
            ToolStatus::Failed => ("●", theme::error(), "failed".to_string(), theme::error()),
            ToolStatus::Interrupted => ("●", theme::warning(), "interrupted".to_string(), theme::warning()),
        },
    };
    let time = format_elapsed(elapsed);
    let tail = if status.is_empty() { format!(" · {time}") } else { format!(" · {status} {time}") };
    let name = sanitize(&call.name).into_owned();
    let fixed = 2 + str_width(&name) + 1 + str_width(&tail);
    let summary = if call.incomplete.is_some() { "(arguments cut off)" } else { summary };
    let summary = truncate(&sanitize(summary), width.saturating_sub(fixed));
    let mut spans = vec![
        Span::styled(format!("{bullet} "), bullet_style),
        Span::styled(name, theme::tool_name()),
        Span::raw(" "),
        Span::styled(summary, Style::default()),
    ];
    if status.is_empty() {
        spans.push(Span::styled(tail, theme::dim()));
    } else {
        spans.push(Span::styled(" · ", theme::dim()));
        spans.push(Span::styled(status, status_style));
        spans.push(Span::styled(format!(" {time}"), theme::dim()));
    }
    Line::from(spans)
}

/// `35ms`, `1.4s`, `12s`, `2m05s`.
pub fn format_elapsed(elapsed: Duration) -> String {
    let ms = elapsed.as_millis();
    if ms < 1_000 {
        format!("{ms}ms")
    } else if ms < 10_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else if ms < 60_000 {
        format!("{}s", ms / 1000)
    } else {
        format!("{}m{:02}s", ms / 60_000, (ms / 1000) % 60)
    }
}

/// The result summary under a finished call's line: what the tool's `view` suggests for a
/// successful result (the change as a diff, one line such as `read 42 lines`), else the first
/// [`RESULT_ROWS`] rows of the output (without the closing `exit code: 0` line of a command that
/// exited 0).
pub fn result_rows(result: &ToolResult, view: Option<&ResultView>, width: usize) -> Vec<Line<'static>> {
    let text = result.text_content();
    let first = [Span::styled("  └ ", theme::dim())];
    let rest = [Span::raw("    ")];
    let failed = result.is_error || result.status != ToolStatus::Completed;
    let style = match result.status {
        ToolStatus::Completed if result.is_error => theme::error(),
        ToolStatus::Completed => theme::dim(),
        ToolStatus::Failed => theme::error(),
        ToolStatus::Denied | ToolStatus::Interrupted => theme::warning(),
    };
    match view.filter(|_| !failed) {
        Some(ResultView::Diff { unified, .. }) => return change_rows(&text, unified, width),
        Some(ResultView::Line { text }) => {
            return vec![Line::from(vec![first[0].clone(), Span::styled(text.clone(), theme::dim())])];
        }
        None => {}
    }
    let mut lines: Vec<&str> = text.lines().collect();
    let exited_ok = result.receipt.as_ref().is_some_and(|receipt| receipt.exit_code == Some(0));
    if exited_ok && lines.last().is_some_and(|l| l.starts_with("exit code: 0")) && !failed {
        lines.pop();
    }
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    if lines.is_empty() {
        return vec![Line::from(vec![first[0].clone(), Span::styled("(no output)", theme::dim())])];
    }
    let mut rows = Vec::new();
    let mut shown = 0;
    for line in &lines {
        if rows.len() >= RESULT_ROWS {
            break;
        }
        let prefix: &[Span<'static>] = if shown == 0 { &first } else { &rest };
        let line = Line::from(Span::styled(sanitize(line).into_owned(), style));
        rows.extend(wrap_chars(&line, width, prefix, &rest));
        shown += 1;
    }
    if rows.len() > RESULT_ROWS || shown < lines.len() {
        rows.truncate(RESULT_ROWS - 1);
        let total = lines.len();
        rows.push(Line::from(vec![
            rest[0].clone(),
            Span::styled(format!("… {total} lines in all"), theme::dim()),
        ]));
    }
    rows
}

/// A change's rows: the output's first line, then the tool's diff `unified` followed by whatever
/// the output says after that diff (a warning, a note); only the first line when nothing changed.
fn change_rows(text: &str, unified: &str, width: usize) -> Vec<Line<'static>> {
    let headline = text.lines().next().unwrap_or("").to_string();
    let mut rows =
        vec![Line::from(vec![Span::styled("  └ ", theme::dim()), Span::styled(headline, theme::dim())])];
    if unified.is_empty() {
        return rows;
    }
    let after = text.find(unified).map_or("", |at| &text[at + unified.len()..]);
    let shown = format!("{unified}{after}");
    rows.extend(diff::render(&shown, width, &[Span::raw("    ")], DIFF_ROWS));
    rows
}

/// The task list of a `todo_write` call: one row per item, ☒ done, ◐ in progress, ☐ pending.
pub fn todo_rows(items: &Value, width: usize) -> Vec<Line<'static>> {
    let Some(items) = items.as_array() else { return Vec::new() };
    let mut rows = vec![Line::from(Span::styled("• Tasks", theme::tool_name()))];
    for item in items {
        let text = item.get("content").and_then(Value::as_str).unwrap_or("");
        let status = item.get("status").and_then(Value::as_str).unwrap_or("pending");
        let (mark, style) = match status {
            "completed" => ("☒ ", theme::dim().add_modifier(Modifier::CROSSED_OUT)),
            "in_progress" => ("◐ ", Style::default().add_modifier(Modifier::BOLD)),
            _ => ("☐ ", Style::default()),
        };
        let line = Line::from(Span::styled(sanitize(text).into_owned(), style));
        rows.extend(wrap_words(
            &line,
            width,
            &[Span::raw("  "), Span::styled(mark, style)],
            &[Span::raw("    ")],
        ));
    }
    rows
}

#[cfg(test)]
#[path = "cells_tests.rs"]
mod tests;
