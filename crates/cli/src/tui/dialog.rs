//! The permission dialog: which tool wants to do what (the full command or path, and for an edit
//! or a write the change itself, all from the tool's [`ToolPreview`]), why it needs asking, and the
//! answers: `y` yes once, `a` always (remembering the suggested rule), `n` no — then one optional
//! line of feedback for the model — and Esc = no.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use lathe_protocol::{FileChange, PermissionAnswer, ToolCall, ToolPreview};
use ratatui::text::{Line, Span};
use serde_json::Value;

use super::diff;
use super::theme;
use super::wrap::{sanitize, sanitize_input, wrap_chars, wrap_words};

/// Rows of a change's diff in the dialog.
const PREVIEW_ROWS: usize = 12;

/// The dialog for one pending call.
#[derive(Debug, Clone, PartialEq)]
pub struct PermissionDialog {
    /// The call waiting for an answer.
    pub call: ToolCall,
    /// Why it needs asking.
    pub reason: String,
    /// The rule `a` stores, as the policy suggested it (e.g. `shell(cargo test:*)`).
    pub suggestion: Option<String>,
    /// What the call would do, as its tool shows it.
    pub preview: Option<ToolPreview>,
    /// `Some` once `n` was pressed: the feedback typed so far.
    pub feedback: Option<String>,
}

/// What a key did to the dialog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DialogOutcome {
    /// Still open.
    Open,
    /// Answered; the dialog closes.
    Answered(PermissionAnswer),
}

impl PermissionDialog {
    /// A dialog for `call`.
    pub fn new(
        call: ToolCall,
        reason: String,
        suggestion: Option<String>,
        preview: Option<ToolPreview>,
    ) -> Self {
        PermissionDialog { call, reason, suggestion, preview, feedback: None }
    }

    /// Handles a key.
    pub fn key(&mut self, key: KeyEvent) -> DialogOutcome {
        if let Some(feedback) = &mut self.feedback {
            return match key.code {
                KeyCode::Enter => {
                    let text = feedback.trim().to_string();
                    DialogOutcome::Answered(PermissionAnswer::Deny {
                        feedback: Some(text).filter(|t| !t.is_empty()),
                    })
                }
                KeyCode::Esc => DialogOutcome::Answered(PermissionAnswer::Deny { feedback: None }),
                KeyCode::Backspace => {
                    feedback.pop();
                    DialogOutcome::Open
                }
                KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                    feedback.clear();
                    DialogOutcome::Open
                }
                KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                    feedback.push(c);
                    DialogOutcome::Open
                }
                _ => DialogOutcome::Open,
            };
        }
        match key.code {
            KeyCode::Char('y' | 'Y') | KeyCode::Enter => DialogOutcome::Answered(PermissionAnswer::AllowOnce),
            KeyCode::Char('a' | 'A') => DialogOutcome::Answered(PermissionAnswer::AllowAlways),
            KeyCode::Char('n' | 'N') => {
                self.feedback = Some(String::new());
                DialogOutcome::Open
            }
            KeyCode::Esc => DialogOutcome::Answered(PermissionAnswer::Deny { feedback: None }),
            _ => DialogOutcome::Open,
        }
    }

    /// Adds pasted text to the feedback line (ignored before `n`).
    pub fn paste(&mut self, text: &str) {
        if let Some(feedback) = &mut self.feedback {
            feedback.push_str(&sanitize_input(&text.replace(['\r', '\n'], " ")));
        }
    }

    /// The dialog's rows at `width` cells within `max_rows`, and the cursor position when it takes
    /// text. When space is short the edit preview, the frame, the reason and the title go first;
    /// then the command is cut — the answer keys always stay.
    pub fn rows(&self, width: usize, max_rows: usize) -> (Vec<Line<'static>>, Option<(u16, u16)>) {
        let indent = [Span::raw("  ")];
        let rule = vec![Line::from(Span::styled("─".repeat(width), theme::border()))];
        let (title, subject) = self.title();
        let title = vec![Line::from(vec![
            Span::styled(title, theme::warning().patch(theme::key())),
            Span::styled(format!(" ({})", sanitize(&self.call.name)), theme::dim()),
        ])];
        let mut subject_rows = Vec::new();
        for line in sanitize(&subject).lines() {
            subject_rows.extend(wrap_chars(
                &Line::from(Span::styled(line.to_string(), theme::key())),
                width,
                &indent,
                &indent,
            ));
        }
        let mut preview = self.preview(width);
        let mut reason = Vec::new();
        if !self.reason.is_empty() {
            let line = Line::from(Span::styled(sanitize(&self.reason).into_owned(), theme::dim()));
            reason = wrap_words(&line, width, &indent, &indent);
        }
        let (mut answer, mut cursor) = self.answer_rows(width);
        let mut sections = [rule, title, subject_rows, preview.split_off(0), reason.split_off(0)];
        let total = |sections: &[Vec<Line<'static>>; 5], answer: &Vec<Line<'static>>| {
            sections.iter().map(Vec::len).sum::<usize>() + answer.len()
        };
        // Drop order: preview (3), rule (0), reason (4), title (1).
        for index in [3, 0, 4, 1] {
            if total(&sections, &answer) <= max_rows {
                break;
            }
            sections[index].clear();
        }
        let over = total(&sections, &answer).saturating_sub(max_rows);
        if over > 0 {
            let subject = &mut sections[2];
            let keep = subject.len().saturating_sub(over);
            subject.truncate(keep);
            if let Some(last) = subject.last_mut() {
                last.spans.push(Span::styled(" …", theme::dim()));
            }
        }
        let mut rows: Vec<Line<'static>> = sections.into_iter().flatten().collect();
        if answer.len() > max_rows {
            let cut = answer.len() - max_rows;
            answer.drain(..cut);
            cursor = cursor.map(|(x, y)| (x, y.saturating_sub(cut as u16)));
        }
        let offset = rows.len() as u16;
        rows.extend(answer);
        (rows, cursor.map(|(x, y)| (x, y + offset)))
    }

    /// The answer keys, or the feedback prompt and line (with the cursor position in them).
    fn answer_rows(&self, width: usize) -> (Vec<Line<'static>>, Option<(u16, u16)>) {
        match &self.feedback {
            None => {
                let mut keys = vec![
                    Span::styled("y", theme::key()),
                    Span::raw(" yes  "),
                    Span::styled("a", theme::key()),
                    Span::raw(" always"),
                ];
                if let Some(rule) = &self.suggestion {
                    keys.push(Span::styled(format!(" ({})", sanitize(rule)), theme::dim()));
                }
                keys.extend([
                    Span::raw("  "),
                    Span::styled("n", theme::key()),
                    Span::raw(" no  "),
                    Span::styled("esc", theme::key()),
                    Span::raw(" no"),
                ]);
                (wrap_words(&Line::from(keys), width, &[], &[]), None)
            }
            Some(feedback) => feedback_rows(
                "Denied. Tell the model what to do instead (enter sends, empty = no feedback):",
                feedback,
                width,
            ),
        }
    }

    /// The question and its subject: from the preview (the command, the file, the URL), else
    /// `Use <tool>?` and the arguments.
    fn title(&self) -> (String, String) {
        match &self.preview {
            Some(ToolPreview::Command { command, .. }) => ("Run this command?".into(), command.clone()),
            Some(ToolPreview::Diff { path, change: FileChange::Edit, .. }) => {
                ("Edit this file?".into(), path.clone())
            }
            Some(ToolPreview::Diff { path, change: FileChange::Write, .. }) => {
                ("Write this file?".into(), path.clone())
            }
            Some(ToolPreview::Url { url }) => ("Fetch this URL?".into(), url.clone()),
            None => (
                format!("Use {}?", self.call.name),
                match &self.call.arguments {
                    Value::Object(map) if map.is_empty() => String::new(),
                    other => serde_json::to_string_pretty(other).unwrap_or_default(),
                },
            ),
        }
    }

    /// For a change, its diff against the file on disk, as the tool made it.
    fn preview(&self, width: usize) -> Vec<Line<'static>> {
        match &self.preview {
            Some(ToolPreview::Diff { unified, .. }) => {
                diff::render(unified, width, &[Span::raw("  ")], PREVIEW_ROWS)
            }
            Some(ToolPreview::Command { .. } | ToolPreview::Url { .. }) | None => Vec::new(),
        }
    }
}

/// A line of feedback being typed under `question`: the rows, and the cursor (column, row) at its
/// end. The permission dialog's denial and the plan dialog's "keep planning" share it.
pub(super) fn feedback_rows(
    question: &str,
    feedback: &str,
    width: usize,
) -> (Vec<Line<'static>>, Option<(u16, u16)>) {
    let mut rows =
        wrap_words(&Line::from(Span::styled(question.to_string(), theme::warning())), width, &[], &[]);
    let line = Line::from(Span::raw(feedback.to_string()));
    let wrapped = wrap_chars(&line, width, &[Span::styled("› ", theme::user())], &[Span::raw("  ")]);
    let last = wrapped.last().map_or(2, Line::width);
    let y = rows.len() + wrapped.len() - 1;
    rows.extend(wrapped);
    (rows, Some((last.min(width.saturating_sub(1)) as u16, y as u16)))
}
