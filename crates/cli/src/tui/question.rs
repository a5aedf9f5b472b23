//! The question card: the model asked with `ask_user`; the card shows the question and its
//! options, plus a last choice to type an answer of one's own. `1`…`n` (or ↑/↓ and Enter) choose;
//! any other character starts a typed answer with it; Esc declines to answer. With no options the
//! answer line is open at once. On the answer line Enter sends (nothing when it is empty) and Esc
//! goes back to the options (or, with none, declines). Ctrl+C closes the card and cancels the turn,
//! as for any running call.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use lathe_protocol::AgentOp;
use lathe_protocol::question::{Question, QuestionAnswer};
use ratatui::text::{Line, Span};

use super::state::{Action, UiState};
use super::theme;
use super::wrap::{sanitize, sanitize_input, wrap_words};

/// The card for one question.
#[derive(Debug, Clone, PartialEq)]
pub struct QuestionCard {
    /// The `ask_user` call waiting for the answer.
    pub call_id: String,
    /// The question.
    pub question: String,
    /// The options, in the model's order.
    pub options: Vec<String>,
    /// The highlighted choice (0-based; `options.len()` is "type an answer").
    pub selected: usize,
    /// `Some` while an answer is typed: the text so far.
    pub typed: Option<String>,
}

impl QuestionCard {
    /// A card for `question`; with no options the answer line is open.
    pub fn new(question: Question) -> QuestionCard {
        let typed = question.options.is_empty().then(String::new);
        QuestionCard {
            call_id: question.call_id,
            question: question.question,
            options: question.options,
            selected: 0,
            typed,
        }
    }

    /// Handles a key; `Some` once the user has answered or declined.
    pub fn key(&mut self, key: KeyEvent) -> Option<QuestionAnswer> {
        let control = key.modifiers.contains(KeyModifiers::CONTROL);
        if let Some(typed) = &mut self.typed {
            match key.code {
                KeyCode::Enter if !typed.trim().is_empty() => {
                    return Some(QuestionAnswer::Answered { text: typed.trim().to_string() });
                }
                KeyCode::Esc if self.options.is_empty() => return Some(QuestionAnswer::Declined),
                KeyCode::Esc => self.typed = None,
                KeyCode::Backspace => {
                    typed.pop();
                }
                KeyCode::Char('u') if control => typed.clear(),
                KeyCode::Char(c) if !control => typed.push(c),
                _ => {}
            }
            return None;
        }
        let last = self.options.len();
        let chosen = match key.code {
            KeyCode::Enter => self.selected,
            KeyCode::Up => {
                self.selected = self.selected.saturating_sub(1);
                return None;
            }
            KeyCode::Down => {
                self.selected = (self.selected + 1).min(last);
                return None;
            }
            KeyCode::Esc => return Some(QuestionAnswer::Declined),
            KeyCode::Char(c) if !control => match c.to_digit(10).map(|digit| digit as usize) {
                Some(digit) if (1..=last + 1).contains(&digit) => digit - 1,
                _ => {
                    self.selected = last;
                    self.typed = Some(c.to_string());
                    return None;
                }
            },
            _ => return None,
        };
        match self.options.get(chosen) {
            Some(option) => Some(QuestionAnswer::Answered { text: option.clone() }),
            None => {
                self.selected = last;
                self.typed = Some(String::new());
                None
            }
        }
    }

    /// Adds pasted text (one line) to the answer, opening the answer line when the options show.
    pub fn paste(&mut self, text: &str) {
        let typed = self.typed.get_or_insert_with(String::new);
        typed.push_str(&sanitize_input(&text.replace(['\r', '\n'], " ")));
        self.selected = self.options.len();
    }

    /// The card's rows at `width` cells within `max_rows`, and the cursor position while an answer
    /// is typed. When space is short the frame goes first, then the title, then the question is
    /// cut; the choices (or the answer line) stay.
    pub fn rows(&self, width: usize, max_rows: usize) -> (Vec<Line<'static>>, Option<(u16, u16)>) {
        let indent = [Span::raw("  ")];
        let mut rule = vec![Line::from(Span::styled("─".repeat(width), theme::border()))];
        let mut title = vec![Line::from(vec![
            Span::styled("The model asks you", theme::warning().patch(theme::key())),
            Span::styled(" (ask_user)", theme::dim()),
        ])];
        let mut question = Vec::new();
        for line in sanitize(&self.question).lines() {
            let line = Line::from(Span::styled(line.to_string(), theme::key()));
            question.extend(wrap_words(&line, width, &indent, &indent));
        }
        let (body, cursor) = match &self.typed {
            None => (self.choice_rows(width), None),
            Some(typed) => {
                let prompt = if self.options.is_empty() {
                    "Your answer (enter sends, esc declines):"
                } else {
                    "Your answer (enter sends, esc goes back to the options):"
                };
                super::dialog::feedback_rows(prompt, typed, width)
            }
        };
        let room = max_rows.saturating_sub(body.len());
        // Drop order: the frame, the title; then the question is cut.
        if rule.len() + title.len() + question.len() > room {
            rule.clear();
        }
        if title.len() + question.len() > room {
            title.clear();
        }
        let over = (rule.len() + title.len() + question.len()).saturating_sub(room);
        if over > 0 {
            question.truncate(question.len().saturating_sub(over));
            if let Some(last) = question.last_mut() {
                last.spans.push(Span::styled(" …", theme::dim()));
            }
        }
        let mut rows: Vec<Line<'static>> = rule.into_iter().chain(title).chain(question).collect();
        let offset = rows.len() as u16;
        rows.extend(body);
        (rows, cursor.map(|(x, y)| (x, y + offset)))
    }

    fn choice_rows(&self, width: usize) -> Vec<Line<'static>> {
        let own = "type an answer of your own".to_string();
        let mut rows = Vec::new();
        for (index, choice) in
            self.options.iter().map(|option| sanitize(option).into_owned()).chain([own]).enumerate()
        {
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
        let hint = format!("1-{} or ↑↓ enter choose · type to answer · esc declines", self.options.len() + 1);
        rows.extend(wrap_words(&Line::from(Span::styled(hint, theme::dim())), width, &[], &[]));
        rows
    }
}

impl UiState {
    /// A key for the open question card: an answer (or a refusal to answer) goes to the session.
    pub(super) fn question_key(&mut self, key: KeyEvent) -> Vec<Action> {
        let Some(card) = &mut self.question else { return Vec::new() };
        let Some(answer) = card.key(key) else { return Vec::new() };
        let call_id = card.call_id.clone();
        self.question = None;
        vec![Action::Op(AgentOp::QuestionAnswer { call_id, answer })]
    }
}

#[cfg(test)]
#[path = "question_tests.rs"]
mod tests;
