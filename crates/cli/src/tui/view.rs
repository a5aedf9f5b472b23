//! Drawing the inline viewport from the UI state: top to bottom the live tail of the answer and
//! the running tool calls, the spinner, the input (or the permission dialog, the plan dialog, the
//! question card, a picker, the rewind confirmation), the completion list, and the footer (a short notice or the status line).
//!
//! When the terminal is short, rows are given out in order of need: the footer, then the input or
//! dialog (keeping the cursor or the answer keys in view), the spinner, the completion list, and
//! whatever is left to the live tail (its newest rows).

use lathe_protocol::PermissionMode;
use std::time::Instant;

use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};

use super::cells::{self, CallState, SPINNER};
use super::state::{Overlay, UiState};
use super::theme;
use super::wrap::truncate;

/// The viewport's content.
#[derive(Debug, Default)]
pub struct ViewFrame {
    /// Rows, top to bottom.
    pub rows: Vec<Line<'static>>,
    /// Where the terminal cursor goes (column, row), when text is being typed.
    pub cursor: Option<(u16, u16)>,
}

struct Interactive {
    rows: Vec<Line<'static>>,
    cursor: Option<(u16, u16)>,
}

fn interactive(state: &UiState, width: usize, max_rows: usize) -> Interactive {
    if let Some(dialog) = &state.dialog {
        let (rows, cursor) = dialog.rows(width, max_rows);
        return Interactive { rows, cursor };
    }
    if let Some(plan) = &state.plan {
        let (rows, cursor) = plan.rows(width, max_rows);
        return Interactive { rows, cursor };
    }
    if let Some(card) = &state.question {
        let (rows, cursor) = card.rows(width, max_rows);
        return Interactive { rows, cursor };
    }
    match &state.overlay {
        Some(Overlay::Picker(picker)) => return Interactive { rows: picker.rows(width), cursor: None },
        Some(Overlay::Rewind(confirm)) => return Interactive { rows: confirm.rows(width), cursor: None },
        None => {}
    }
    let mut rows = vec![Line::from(Span::styled("─".repeat(width), theme::border()))];
    let (input_rows, (x, y)) =
        state.input.layout(width, &[Span::styled("› ", theme::user())], &[Span::raw("  ")], Style::default());
    rows.extend(input_rows);
    Interactive { rows, cursor: Some((x, y + 1)) }
}

/// Rows the viewport needs besides the live tail (so the caller can tell the state how many live
/// rows fit before drawing).
pub fn chrome_height(state: &UiState, width: usize, max_height: usize) -> usize {
    let mut rows = 1 + interactive(state, width, max_height).rows.len();
    if state.is_busy() || state.shell.is_some() {
        rows += 1;
    }
    if !state.has_dialog() && state.overlay.is_none() {
        rows += state.completion.as_ref().map_or(0, |c| c.rows(width).len());
    }
    rows.min(max_height)
}

/// Draws the viewport for a terminal `width` × `max_height` cells at time `now`.
pub fn viewport(state: &UiState, width: usize, max_height: usize, now: Instant) -> ViewFrame {
    if max_height == 0 || width == 0 {
        return ViewFrame::default();
    }
    let mut room = max_height;
    // A dialog on a very short terminal gets the status line's row too.
    let modal = state.has_dialog() || state.overlay.is_some();
    let footer = (!modal || max_height >= 8).then(|| footer(state, width, now));
    if footer.is_some() {
        room -= 1;
    }

    let Interactive { rows: mut middle, mut cursor } = interactive(state, width, room);
    if middle.len() > room {
        let keep_from = match cursor {
            Some((_, y)) => usize::from(y).saturating_sub(room.saturating_sub(1)),
            None => middle.len() - room,
        }
        .min(middle.len() - room);
        middle.drain(..keep_from);
        middle.truncate(room);
        cursor = cursor.map(|(x, y)| (x, y.saturating_sub(keep_from as u16)));
    }
    room -= middle.len();

    let spinner = spinner_row(state, width, now);
    let spinner = spinner.filter(|_| room > 0);
    if spinner.is_some() {
        room -= 1;
    }

    let mut popup = Vec::new();
    if !state.has_dialog()
        && state.overlay.is_none()
        && let Some(completion) = &state.completion
    {
        popup = completion.rows(width);
        popup.truncate(room);
        room -= popup.len();
    }

    let frame = state.spinner_frame(now);
    let mut live: Vec<Line<'static>> = state.live_rows().to_vec();
    for running in &state.running {
        let call_state = if state.dialog.as_ref().is_some_and(|d| d.call.id == running.call.id) {
            CallState::AwaitingPermission
        } else if state.question.as_ref().is_some_and(|card| card.call_id == running.call.id) {
            CallState::AwaitingAnswer
        } else {
            CallState::Running { frame }
        };
        let elapsed = now.duration_since(running.started);
        live.push(cells::call_line(&running.call, &running.summary, call_state, elapsed, width));
        live.extend(state.subagent_row(&running.call.id, width));
    }
    if live.len() > room {
        live.drain(..live.len() - room);
    }

    let mut rows = live;
    rows.extend(spinner);
    let offset = rows.len() as u16;
    rows.extend(middle);
    rows.extend(popup);
    rows.extend(footer);
    ViewFrame { rows, cursor: cursor.map(|(x, y)| (x.min(width.saturating_sub(1) as u16), y + offset)) }
}

fn spinner_row(state: &UiState, width: usize, now: Instant) -> Option<Line<'static>> {
    let glyph = SPINNER[state.spinner_frame(now) % SPINNER.len()];
    if let Some((command, started)) = &state.shell {
        let text = format!(
            " running !{command} · {} · ctrl+c stops",
            cells::format_elapsed(now.duration_since(*started))
        );
        return Some(Line::from(vec![
            Span::styled(glyph, theme::selected()),
            Span::styled(truncate(&text, width.saturating_sub(1)), theme::dim()),
        ]));
    }
    let busy = state.busy?;
    if state.has_dialog() {
        return None;
    }
    let elapsed = cells::format_elapsed(now.duration_since(busy.started));
    let text = format!(" Working · {elapsed} · ↓ {} tokens · esc to interrupt", human_count(busy.tokens()));
    Some(Line::from(vec![
        Span::styled(glyph, theme::selected()),
        Span::styled(truncate(&text, width.saturating_sub(1)), theme::dim()),
    ]))
}

fn footer(state: &UiState, width: usize, now: Instant) -> Line<'static> {
    if let Some(notice) = state.current_notice(now) {
        return Line::from(Span::styled(truncate(notice, width), theme::warning()));
    }
    status_line(state, width)
}

/// The status line: model, permission mode, context used, session tokens, estimated cost (parts
/// dropped from the right when the terminal is narrow).
pub fn status_line(state: &UiState, width: usize) -> Line<'static> {
    let totals = state.totals();
    let mode = state.session.mode;
    let mode_style = match mode {
        Some(PermissionMode::Bypass) => Style::default().fg(Color::Red),
        Some(PermissionMode::AcceptEdits | PermissionMode::DontAsk) => Style::default().fg(Color::Yellow),
        Some(PermissionMode::Plan) => Style::default().fg(Color::Cyan),
        Some(PermissionMode::Auto) => Style::default().fg(Color::Magenta),
        Some(PermissionMode::Default) | None => theme::dim(),
    };
    let mode = mode.map_or(String::new(), |mode| mode.to_string());
    let mut parts: Vec<(String, Style)> =
        vec![(state.session.model.clone(), theme::dim()), (mode, mode_style)];
    if let Some(window) = state.session.context_window.filter(|w| *w > 0) {
        let percent = (state.context_tokens * 100 / window).min(100);
        let style = if percent >= 80 { theme::warning() } else { theme::dim() };
        parts.push((format!("ctx {percent}%"), style));
    }
    parts.push((format!("{} tokens", human_count(totals.input_tokens + totals.output_tokens)), theme::dim()));
    parts.push((format!("${:.2}", totals.cost_usd), theme::dim()));
    if !state.queued.is_empty() {
        parts.push((format!("{} queued", state.queued.len()), theme::warning()));
    }
    if let Some(running) = super::team::running(state.team.as_deref()) {
        parts.push((running, theme::dim()));
    }
    // Before the session has started the model and the mode are not known yet: no empty parts.
    parts.retain(|(text, _)| !text.is_empty());
    let separator = " · ";
    while parts.len() > 1 {
        let total: usize =
            parts.iter().map(|(t, _)| t.chars().count()).sum::<usize>() + separator.len() * (parts.len() - 1);
        if total <= width {
            break;
        }
        parts.pop();
    }
    let mut spans = Vec::new();
    for (index, (text, style)) in parts.into_iter().enumerate() {
        if index > 0 {
            spans.push(Span::styled(separator, theme::dim()));
        }
        spans.push(Span::styled(truncate(&text, width), style));
    }
    Line::from(spans)
}

/// `950`, `12.3k`, `4.1M`.
pub fn human_count(n: u64) -> String {
    if n >= 1_000_000 {
        format!("{:.1}M", n as f64 / 1_000_000.0)
    } else if n >= 1_000 {
        format!("{:.1}k", n as f64 / 1_000.0)
    } else {
        n.to_string()
    }
}

/// One frame: commits what no longer fits live, prints finished rows into the scrollback, and
/// draws the viewport.
pub fn draw_frame<B: ratatui::backend::Backend>(
    terminal: &mut super::terminal::InlineTerminal<B>,
    state: &mut UiState,
    now: Instant,
) -> Result<(), B::Error> {
    let screen = terminal.screen();
    let (width, height) = (usize::from(screen.width), usize::from(screen.height));
    let chrome = chrome_height(state, width, height);
    state.prepare_frame(height.saturating_sub(chrome));
    let rows = state.take_history();
    terminal.insert_rows(&rows)?;
    let frame = viewport(state, width, height, now);
    terminal.draw(&frame)
}
