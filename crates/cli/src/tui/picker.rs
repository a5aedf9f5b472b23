//! Choosing from a list: the session picker (`lathe --resume` without an id, `/resume`), the
//! prompt picker of `/rewind`, and the rewind confirmation that lists the files that will change.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::text::{Line, Span};

use super::theme;
use super::wrap::{sanitize, str_width, truncate};

/// Rows of a list shown at once.
pub const VISIBLE_ROWS: usize = 10;

/// One earlier session, as the session picker shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRow {
    /// Session id.
    pub id: String,
    /// The first prompt (one line).
    pub title: String,
    /// When it was last used, already formatted (`2026-11-30 18:04`).
    pub when: String,
    /// User turns.
    pub turns: u32,
    /// Estimated cost in US dollars.
    pub cost_usd: f64,
}

/// One earlier prompt of this session, as `/rewind` lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnRow {
    /// The turn number (1 = the first prompt).
    pub turn: u32,
    /// The prompt text.
    pub prompt: String,
}

/// What the list is for.
#[derive(Debug, Clone, PartialEq)]
pub enum PickerItems {
    /// Sessions to resume.
    Sessions(Vec<SessionRow>),
    /// Prompts to rewind to.
    Turns(Vec<TurnRow>),
}

impl PickerItems {
    fn len(&self) -> usize {
        match self {
            PickerItems::Sessions(rows) => rows.len(),
            PickerItems::Turns(rows) => rows.len(),
        }
    }
}

/// What a key did to a picker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PickOutcome {
    /// Still open.
    Open,
    /// Closed without a choice.
    Cancelled,
    /// The session with this id was chosen.
    Session(String),
    /// This turn was chosen.
    Turn(u32),
}

/// A list with a selection.
#[derive(Debug, Clone, PartialEq)]
pub struct Picker {
    /// The items.
    pub items: PickerItems,
    /// Index of the selected item.
    pub selected: usize,
}

impl Picker {
    /// A picker with the first item selected (for turns: the last one, the most recent prompt).
    pub fn new(items: PickerItems) -> Self {
        let selected = match &items {
            PickerItems::Sessions(_) => 0,
            PickerItems::Turns(rows) => rows.len().saturating_sub(1),
        };
        Picker { items, selected }
    }

    /// Handles a key.
    pub fn key(&mut self, key: KeyEvent) -> PickOutcome {
        let count = self.items.len();
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => {
                self.selected = (self.selected + 1).min(count.saturating_sub(1))
            }
            KeyCode::PageUp => self.selected = self.selected.saturating_sub(VISIBLE_ROWS),
            KeyCode::PageDown => self.selected = (self.selected + VISIBLE_ROWS).min(count.saturating_sub(1)),
            KeyCode::Home => self.selected = 0,
            KeyCode::End => self.selected = count.saturating_sub(1),
            KeyCode::Esc | KeyCode::Char('q') => return PickOutcome::Cancelled,
            KeyCode::Enter => {
                return match &self.items {
                    PickerItems::Sessions(rows) => rows
                        .get(self.selected)
                        .map_or(PickOutcome::Cancelled, |r| PickOutcome::Session(r.id.clone())),
                    PickerItems::Turns(rows) => {
                        rows.get(self.selected).map_or(PickOutcome::Cancelled, |r| PickOutcome::Turn(r.turn))
                    }
                };
            }
            _ => {}
        }
        PickOutcome::Open
    }

    /// The picker's rows at `width` cells.
    pub fn rows(&self, width: usize) -> Vec<Line<'static>> {
        let mut rows = vec![Line::from(Span::styled("─".repeat(width), theme::border()))];
        let (title, empty) = match &self.items {
            PickerItems::Sessions(_) => ("Resume a session", "No earlier sessions in this directory."),
            PickerItems::Turns(_) => ("Rewind to before a prompt", "No prompts to rewind to yet."),
        };
        rows.push(Line::from(Span::styled(title, theme::key())));
        let count = self.items.len();
        if count == 0 {
            rows.push(Line::from(Span::styled(empty, theme::dim())));
        }
        let first = self.selected.saturating_sub(VISIBLE_ROWS - 1).min(count.saturating_sub(VISIBLE_ROWS));
        let shown: Vec<(usize, String, String)> = (first..(first + VISIBLE_ROWS).min(count))
            .map(|index| {
                let (text, detail) = match &self.items {
                    PickerItems::Sessions(items) => {
                        let row = &items[index];
                        let turns = if row.turns == 1 {
                            "1 turn".to_string()
                        } else {
                            format!("{} turns", row.turns)
                        };
                        (row.title.clone(), format!("{} · {turns} · ${:.2}", row.when, row.cost_usd))
                    }
                    PickerItems::Turns(items) => {
                        let row = &items[index];
                        (row.prompt.clone(), format!("turn {}", row.turn))
                    }
                };
                (index, sanitize(&text).lines().next().unwrap_or("").to_string(), detail)
            })
            .collect();
        let detail_width = shown.iter().map(|(_, _, d)| str_width(d)).max().unwrap_or(0);
        let text_width = shown.iter().map(|(_, t, _)| str_width(t)).max().unwrap_or(0);
        let room = width.saturating_sub(2 + 2 + detail_width).max(8).min(text_width);
        for (index, text, detail) in shown {
            let marker = if index == self.selected { "› " } else { "  " };
            let style =
                if index == self.selected { theme::selected() } else { ratatui::style::Style::default() };
            let text = truncate(&text, room);
            let pad = " ".repeat(room.saturating_sub(str_width(&text)) + 2);
            rows.push(Line::from(vec![
                Span::styled(marker, theme::selected()),
                Span::styled(text, style),
                Span::raw(pad),
                Span::styled(detail, theme::dim()),
            ]));
        }
        rows.push(Line::from(vec![
            Span::styled("↑↓", theme::key()),
            Span::styled(" choose  ", theme::dim()),
            Span::styled("enter", theme::key()),
            Span::styled(" open  ", theme::dim()),
            Span::styled("esc", theme::key()),
            Span::styled(" cancel", theme::dim()),
        ]));
        rows
    }
}

/// The confirmation before a rewind.
#[derive(Debug, Clone, PartialEq)]
pub struct RewindConfirm {
    /// The turn to go back to.
    pub turn: u32,
    /// The prompt of that turn (put back in the editor after the rewind).
    pub prompt: String,
    /// Files that will change, each with what happens (`restored`, `deleted`, `recreated`).
    pub files: Vec<(String, String)>,
}

impl RewindConfirm {
    /// Handles a key: `Some(true)` confirmed, `Some(false)` cancelled, `None` still open.
    pub fn key(&self, key: KeyEvent) -> Option<bool> {
        match key.code {
            KeyCode::Char('y' | 'Y') | KeyCode::Enter => Some(true),
            KeyCode::Char('n' | 'N') | KeyCode::Esc => Some(false),
            _ => None,
        }
    }

    /// The confirmation's rows at `width` cells.
    pub fn rows(&self, width: usize) -> Vec<Line<'static>> {
        let mut rows = vec![
            Line::from(Span::styled("─".repeat(width), theme::border())),
            Line::from(Span::styled(
                format!("Rewind to before prompt {}? The conversation after it is dropped.", self.turn),
                theme::warning().patch(theme::key()),
            )),
        ];
        if self.files.is_empty() {
            rows.push(Line::from(Span::styled("No files change.", theme::dim())));
        } else {
            rows.push(Line::from(Span::raw("These files will change:")));
            for (path, change) in self.files.iter().take(VISIBLE_ROWS) {
                let text = truncate(&sanitize(path), width.saturating_sub(change.len() + 6));
                rows.push(Line::from(vec![
                    Span::raw("  • "),
                    Span::raw(text),
                    Span::styled(format!(" ({change})"), theme::dim()),
                ]));
            }
            if self.files.len() > VISIBLE_ROWS {
                rows.push(Line::from(Span::styled(
                    format!("  … and {} more", self.files.len() - VISIBLE_ROWS),
                    theme::dim(),
                )));
            }
        }
        rows.push(Line::from(vec![
            Span::styled("y", theme::key()),
            Span::raw(" rewind  "),
            Span::styled("n", theme::key()),
            Span::raw("/"),
            Span::styled("esc", theme::key()),
            Span::raw(" keep everything"),
        ]));
        rows
    }
}
