//! Plan mode's dialog: the model presented a plan with `exit_plan_mode` (the plan itself goes to
//! the transcript, [`plan_rows`]); the dialog offers three choices — run it with edits accepted,
//! run it asking per edit, or keep planning with one line of feedback for the model. `1` `2` `3`
//! (or ↑/↓ and Enter) choose; Esc keeps planning without feedback, and Esc on the feedback line
//! goes back to the choices.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use lathe_protocol::plan::PlanAnswer;
use lathe_protocol::{AgentOp, PermissionMode};
use ratatui::text::{Line, Span};

use super::markdown;
use super::state::{Action, UiState};
use super::theme;
use super::wrap::{sanitize, sanitize_input, wrap_words};

/// The three choices, in the order shown.
const CHOICES: [&str; 3] =
    ["run it, edits accepted", "run it, ask per edit", "keep planning (with feedback)"];

/// The dialog for one presented plan.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanDialog {
    /// The `exit_plan_mode` call waiting for the answer.
    pub call_id: String,
    /// Where the plan was saved.
    pub plan_file: Option<String>,
    /// The highlighted choice (0-based).
    pub selected: usize,
    /// `Some` once "keep planning" was chosen: the feedback typed so far.
    pub feedback: Option<String>,
}

/// What the user chose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanChoice {
    /// Leave plan mode for this mode and carry the plan out.
    Run(PermissionMode),
    /// Stay in plan mode; the feedback goes to the model.
    KeepPlanning(String),
}

impl PlanDialog {
    /// A dialog for the plan of call `call_id`, saved to `plan_file`.
    pub fn new(call_id: String, plan_file: Option<String>) -> PlanDialog {
        PlanDialog { call_id, plan_file, selected: 0, feedback: None }
    }

    /// Handles a key; `Some` once the user has chosen.
    pub fn key(&mut self, key: KeyEvent) -> Option<PlanChoice> {
        if let Some(feedback) = &mut self.feedback {
            match key.code {
                KeyCode::Enter => return Some(PlanChoice::KeepPlanning(feedback.trim().to_string())),
                KeyCode::Esc => self.feedback = None,
                KeyCode::Backspace => {
                    feedback.pop();
                }
                KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => feedback.clear(),
                KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => feedback.push(c),
                _ => {}
            }
            return None;
        }
        let chosen = match key.code {
            KeyCode::Char('1') => 0,
            KeyCode::Char('2') => 1,
            KeyCode::Char('3') => 2,
            KeyCode::Enter => self.selected,
            KeyCode::Up => {
                self.selected = self.selected.saturating_sub(1);
                return None;
            }
            KeyCode::Down => {
                self.selected = (self.selected + 1).min(CHOICES.len() - 1);
                return None;
            }
            KeyCode::Esc => return Some(PlanChoice::KeepPlanning(String::new())),
            _ => return None,
        };
        match chosen {
            0 => Some(PlanChoice::Run(PermissionMode::AcceptEdits)),
            1 => Some(PlanChoice::Run(PermissionMode::Default)),
            _ => {
                self.selected = 2;
                self.feedback = Some(String::new());
                None
            }
        }
    }

    /// Adds pasted text to the feedback line (ignored before "keep planning" was chosen).
    pub fn paste(&mut self, text: &str) {
        if let Some(feedback) = &mut self.feedback {
            feedback.push_str(&sanitize_input(&text.replace(['\r', '\n'], " ")));
        }
    }

    /// The dialog's rows at `width` cells, and the cursor position while feedback is typed. When
    /// `max_rows` is short, the frame, the title and the file go first; the choices stay.
    pub fn rows(&self, width: usize, max_rows: usize) -> (Vec<Line<'static>>, Option<(u16, u16)>) {
        let mut head = vec![
            Line::from(Span::styled("─".repeat(width), theme::border())),
            Line::from(vec![
                Span::styled("Plan ready. Run it?", theme::warning().patch(theme::key())),
                Span::styled(" (exit_plan_mode; the plan is above)", theme::dim()),
            ]),
        ];
        if let Some(file) = &self.plan_file {
            let line = Line::from(Span::styled(format!("saved to {}", sanitize(file)), theme::dim()));
            head.extend(wrap_words(&line, width, &[Span::raw("  ")], &[Span::raw("  ")]));
        }
        let (body, cursor) = match &self.feedback {
            None => (self.choice_rows(width), None),
            Some(feedback) => super::dialog::feedback_rows(
                "Keep planning. What should change in the plan? (enter sends, esc goes back)",
                feedback,
                width,
            ),
        };
        let keep = max_rows.saturating_sub(body.len());
        head.drain(..head.len().saturating_sub(keep));
        let offset = head.len() as u16;
        head.extend(body);
        (head, cursor.map(|(x, y)| (x, y + offset)))
    }

    fn choice_rows(&self, width: usize) -> Vec<Line<'static>> {
        let mut rows = Vec::new();
        for (index, choice) in CHOICES.iter().enumerate() {
            let (marker, style) = if index == self.selected {
                ("› ", theme::selected())
            } else {
                ("  ", ratatui::style::Style::default())
            };
            let line = Line::from(vec![
                Span::styled(format!("{}", index + 1), theme::key()),
                Span::styled(format!(" {choice}"), style),
            ]);
            rows.extend(wrap_words(
                &line,
                width,
                &[Span::styled(marker, theme::user())],
                &[Span::raw("    ")],
            ));
        }
        let hint = Line::from(Span::styled("1-3 or ↑↓ enter choose · esc keeps planning", theme::dim()));
        rows.extend(wrap_words(&hint, width, &[], &[]));
        rows
    }
}

impl UiState {
    /// A key for the open plan dialog. Running the plan leaves plan mode first, explicitly (the
    /// `SetMode` op), then approves it; keeping planning sends the feedback and keeps the mode.
    pub(super) fn plan_key(&mut self, key: KeyEvent, now: Instant) -> Vec<Action> {
        let Some(plan) = &mut self.plan else { return Vec::new() };
        let Some(choice) = plan.key(key) else { return Vec::new() };
        let call_id = plan.call_id.clone();
        self.plan = None;
        match choice {
            PlanChoice::Run(mode) => {
                self.session.mode = Some(mode);
                self.flash(format!("permission mode: {mode}"), now);
                let answer = AgentOp::PlanAnswer { call_id, answer: PlanAnswer::Approve };
                vec![Action::SetMode(mode), Action::Op(answer)]
            }
            PlanChoice::KeepPlanning(feedback) => {
                let answer = PlanAnswer::KeepPlanning { feedback };
                vec![Action::Op(AgentOp::PlanAnswer { call_id, answer })]
            }
        }
    }

    /// `/plan [task]`: plan mode from the next call on, and the task sent (or queued while a turn
    /// runs).
    pub(super) fn plan_command(&mut self, task: Option<String>, now: Instant) -> Vec<Action> {
        self.session.mode = Some(PermissionMode::Plan);
        self.flash("permission mode: plan", now);
        let mut actions = vec![Action::SetMode(PermissionMode::Plan)];
        match task {
            Some(task) if self.is_busy() => {
                self.queued.push_back(task);
                self.flash("plan mode; the task is sent when the current turn ends", now);
            }
            Some(task) => actions.extend(self.send_prompt(task, now)),
            None => {}
        }
        actions
    }
}

/// The plan as the transcript shows it: a title, then the plan's markdown, indented.
pub fn plan_rows(plan: &str, width: usize) -> Vec<Line<'static>> {
    let mut rows = vec![Line::from(Span::styled("● Plan", theme::key()))];
    for mut row in markdown::render(plan, width.saturating_sub(2).max(1)) {
        row.spans.insert(0, Span::raw("  "));
        rows.push(row);
    }
    rows.push(Line::default());
    rows
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
