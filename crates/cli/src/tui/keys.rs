//! Keys and pastes: what each does depends on what is open, in this order — Ctrl+C and Ctrl+D
//! first (cancel, exit), then the permission dialog, the plan dialog, the question card, a picker or confirmation, the completion
//! list, and finally the prompt editor. Submitting a prompt dispatches `!cmd` and slash commands
//! here; only a plain prompt becomes a model call.

use lathe_protocol::PermissionMode;
use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use lathe_protocol::{AgentOp, PermissionAnswer};

use super::cells::NoticeKind;
use super::completion::{Completion, CompletionKind};
use super::dialog::DialogOutcome;
use super::help;
use super::picker::{PickOutcome, Picker, PickerItems, RewindConfirm, SessionRow, TurnRow};
use super::slash::{self, SlashCommand};
use super::state::{Action, EXIT_WINDOW, Overlay, UiState};

impl UiState {
    /// Handles one key press.
    pub fn on_key(&mut self, key: KeyEvent, now: Instant) -> Vec<Action> {
        if key.kind == KeyEventKind::Release {
            return Vec::new();
        }
        let control = key.modifiers.contains(KeyModifiers::CONTROL);
        if control && key.code == KeyCode::Char('c') {
            return self.interrupt(now);
        }
        if control && key.code == KeyCode::Char('d') && self.input.is_empty() && !self.has_dialog() {
            return vec![Action::Quit];
        }
        if let Some(dialog) = &mut self.dialog {
            return match dialog.key(key) {
                DialogOutcome::Open => Vec::new(),
                DialogOutcome::Answered(answer) => {
                    let call_id = dialog.call.id.clone();
                    self.dialog = None;
                    vec![Action::Op(AgentOp::Permission { call_id, answer })]
                }
            };
        }
        if self.plan.is_some() {
            return self.plan_key(key, now);
        }
        if self.question.is_some() {
            return self.question_key(key);
        }
        if let Some(overlay) = &mut self.overlay {
            return match overlay {
                Overlay::Picker(picker) => match picker.key(key) {
                    PickOutcome::Open => Vec::new(),
                    PickOutcome::Cancelled => {
                        self.overlay = None;
                        Vec::new()
                    }
                    PickOutcome::Session(id) => {
                        self.overlay = None;
                        vec![Action::ResumeSession(id)]
                    }
                    PickOutcome::Turn(turn) => {
                        let (prompt, files) = self.rewind_files(turn);
                        self.overlay = Some(Overlay::Rewind(RewindConfirm { turn, prompt, files }));
                        Vec::new()
                    }
                },
                Overlay::Rewind(confirm) => match confirm.key(key) {
                    None => Vec::new(),
                    Some(confirmed) => {
                        let turn = confirm.turn;
                        self.overlay = None;
                        if confirmed { vec![Action::Rewind(turn)] } else { Vec::new() }
                    }
                },
            };
        }
        if let Some(actions) = self.completion_key(key, now) {
            return actions;
        }
        let actions = self.editor_key(key, now);
        self.refresh_completion();
        actions
    }

    /// Handles a bracketed paste.
    pub fn on_paste(&mut self, text: &str, now: Instant) {
        if let Some(dialog) = &mut self.dialog {
            dialog.paste(text);
            return;
        }
        if let Some(plan) = &mut self.plan {
            plan.paste(text);
            return;
        }
        if let Some(card) = &mut self.question {
            card.paste(text);
            return;
        }
        if self.overlay.is_some() {
            return;
        }
        if let Err(refused) = self.input.paste(text) {
            self.push_notice(NoticeKind::Warning, &refused.to_string());
            self.flash("paste refused (over 1 MB)", now);
        }
        self.refresh_completion();
    }

    fn interrupt(&mut self, now: Instant) -> Vec<Action> {
        self.exit_armed = self.exit_armed.filter(|at| now.duration_since(*at) < EXIT_WINDOW);
        if let Some(dialog) = self.dialog.take() {
            let deny = AgentOp::Permission {
                call_id: dialog.call.id,
                answer: PermissionAnswer::Deny { feedback: None },
            };
            return vec![Action::Op(deny), Action::Op(AgentOp::Cancel)];
        }
        if self.plan.take().is_some() || self.question.take().is_some() {
            return vec![Action::Op(AgentOp::Cancel)];
        }
        if self.is_busy() {
            self.flash("cancelling…", now);
            return vec![Action::Op(AgentOp::Cancel)];
        }
        if self.shell.is_some() {
            return vec![Action::CancelShell];
        }
        if self.overlay.take().is_some() {
            return Vec::new();
        }
        if self.exit_armed.is_some() {
            return vec![Action::Quit];
        }
        self.exit_armed = Some(now);
        self.input.clear();
        self.completion = None;
        self.flash("Press Ctrl+C again to exit", now);
        Vec::new()
    }

    fn completion_key(&mut self, key: KeyEvent, now: Instant) -> Option<Vec<Action>> {
        let completion = self.completion.as_mut()?;
        match key.code {
            KeyCode::Up => completion.step(-1),
            KeyCode::Down => completion.step(1),
            KeyCode::Esc => self.completion = None,
            KeyCode::Tab | KeyCode::Enter => {
                let kind = completion.kind;
                let range = completion.range.clone();
                let replacement = completion.chosen().map(|c| c.replacement.clone()).unwrap_or_default();
                self.input.replace_range(range, &replacement);
                self.completion = None;
                if kind == CompletionKind::Command && key.code == KeyCode::Enter {
                    return Some(self.submit(now));
                }
                let user_argument = self
                    .user_commands
                    .iter()
                    .any(|c| format!("/{}", c.name) == replacement && c.argument_hint.is_some());
                if kind == CompletionKind::Command
                    && (user_argument
                        || slash::COMMANDS
                            .iter()
                            .any(|c| format!("/{}", c.name) == replacement && !c.argument.is_empty()))
                {
                    self.input.insert(" ");
                }
                self.refresh_completion();
            }
            _ => return None,
        }
        Some(Vec::new())
    }

    fn refresh_completion(&mut self) {
        self.completion = Completion::for_input(&self.input, &self.cwd, &self.user_commands);
    }

    fn editor_key(&mut self, key: KeyEvent, now: Instant) -> Vec<Action> {
        let control = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        match key.code {
            KeyCode::Enter if shift || alt => self.input.insert("\n"),
            KeyCode::Char('j') if control => self.input.insert("\n"),
            KeyCode::Enter => {
                // A trailing backslash continues the prompt on a new line (terminals that cannot
                // report Shift+Enter).
                if self.input.text().ends_with('\\') && self.input.cursor() == self.input.text().len() {
                    self.input.backspace();
                    self.input.insert("\n");
                } else {
                    return self.submit(now);
                }
            }
            KeyCode::BackTab => return self.cycle_mode(now),
            KeyCode::Esc if self.is_busy() => {
                self.flash("cancelling…", now);
                let mut actions = vec![Action::Op(AgentOp::Cancel)];
                actions.extend(self.stop_loop_on_escape(now));
                return actions;
            }
            KeyCode::Esc if self.loop_running() => return self.stop_loop_on_escape(now),
            KeyCode::Char('a') if control => self.input.home(),
            KeyCode::Char('e') if control => self.input.end(),
            KeyCode::Char('b') if control => self.input.left(),
            KeyCode::Char('f') if control => self.input.right(),
            KeyCode::Char('u') if control => self.input.kill_to_line_start(),
            KeyCode::Char('k') if control => self.input.kill_to_line_end(),
            KeyCode::Char('w') if control => self.input.delete_word_before(),
            KeyCode::Char('d') if control => self.input.delete(),
            KeyCode::Char('b') if alt => self.input.word_left(),
            KeyCode::Char('f') if alt => self.input.word_right(),
            KeyCode::Backspace if alt || control => self.input.delete_word_before(),
            KeyCode::Char(c) if !control => {
                let mut buffer = [0u8; 4];
                self.input.insert(c.encode_utf8(&mut buffer));
            }
            KeyCode::Tab => self.input.insert("    "),
            KeyCode::Backspace => self.input.backspace(),
            KeyCode::Delete => self.input.delete(),
            KeyCode::Left if control || alt => self.input.word_left(),
            KeyCode::Right if control || alt => self.input.word_right(),
            KeyCode::Left => self.input.left(),
            KeyCode::Right => self.input.right(),
            KeyCode::Home => self.input.home(),
            KeyCode::End => self.input.end(),
            KeyCode::Up => {
                self.input.up();
            }
            KeyCode::Down => {
                self.input.down();
            }
            _ => {}
        }
        Vec::new()
    }

    fn cycle_mode(&mut self, now: Instant) -> Vec<Action> {
        let position = self.mode_cycle.iter().position(|m| Some(*m) == self.session.mode);
        let next = position.map_or(0, |p| (p + 1) % self.mode_cycle.len().max(1));
        let Some(mode) = self.mode_cycle.get(next).copied() else { return Vec::new() };
        self.session.mode = Some(mode);
        self.flash(format!("permission mode: {mode}"), now);
        vec![Action::SetMode(mode)]
    }

    /// Submits the editor's text: a `!command`, a slash command, or a prompt. Whatever is
    /// submitted is recorded in the prompt history first.
    pub fn submit(&mut self, now: Instant) -> Vec<Action> {
        if self.input.text().trim().is_empty() {
            return Vec::new();
        }
        let text = self.input.submit();
        self.completion = None;
        self.input.remember(&text);
        let mut actions = vec![Action::Remember(text.clone())];
        let trimmed = text.trim();
        if let Some(command) = trimmed.strip_prefix('!') {
            let command = command.trim().to_string();
            if self.is_busy() || self.shell.is_some() {
                self.flash("wait for the running turn to finish (ctrl+c cancels it)", now);
                self.input.set_text(&text);
                return Vec::new();
            }
            self.show_prompt(&format!("!{command}"));
            self.shell = Some((command.clone(), now));
            actions.push(Action::Shell(command));
        } else if slash::is_command(trimmed) {
            let trimmed = trimmed.to_string();
            actions.extend(self.command(&trimmed, now));
        } else if self.is_busy() {
            self.queued.push_back(text);
            self.flash("queued: sent when the current turn ends", now);
        } else {
            actions.extend(self.send_prompt(text, now));
        }
        actions
    }

    fn command(&mut self, line: &str, now: Instant) -> Vec<Action> {
        let parsed = slash::parse_with(line, &self.user_commands);
        if let Ok(SlashCommand::User { .. }) = parsed {
            // The session expands it: sent (or queued) as the prompt it is.
            if self.is_busy() {
                self.queued.push_back(line.to_string());
                self.flash("queued: sent when the current turn ends", now);
                return Vec::new();
            }
            return self.send_prompt(line.to_string(), now);
        }
        self.show_prompt(line);
        let command = match parsed {
            Ok(command) => command,
            Err(error) => {
                self.push_notice(NoticeKind::Warning, &error.to_string());
                return Vec::new();
            }
        };
        let busy = self.is_busy();
        match command {
            SlashCommand::Help => {
                let rows = help::rows(self.width, &self.user_commands);
                self.push_rows(rows);
                Vec::new()
            }
            SlashCommand::Cost => {
                let text = help::cost(&self.totals());
                self.push_notice(NoticeKind::Info, &text);
                Vec::new()
            }
            SlashCommand::Status => {
                let text = help::status(
                    &self.session,
                    self.context_tokens,
                    &self.totals(),
                    &self.jobs.list(),
                    &self.background,
                );
                self.push_notice(NoticeKind::Info, &text);
                Vec::new()
            }
            SlashCommand::Jobs => {
                let text = help::jobs(&self.jobs.list());
                self.push_notice(NoticeKind::Info, &text);
                Vec::new()
            }
            SlashCommand::Team(argument) => {
                let (kind, text) = super::team::command(self.team.as_deref(), argument.as_deref());
                self.push_notice(kind, &text);
                Vec::new()
            }
            // The session answers once no turn is running (see `AgentEvent::Report`).
            SlashCommand::Report => vec![Action::Op(AgentOp::Report)],
            SlashCommand::Model(None) => {
                let text = format!(
                    "model: {} ({}); /model NAME switches for the next request",
                    self.session.model, self.session.provider
                );
                self.push_notice(NoticeKind::Info, &text);
                Vec::new()
            }
            SlashCommand::Model(Some(model)) => vec![Action::SetModel(model)],
            SlashCommand::Goal(argument) => self.goal_command(argument.as_deref(), now),
            SlashCommand::Loop(argument) => self.loop_command(argument.as_deref(), now),
            SlashCommand::Plan(task) => self.plan_command(task, now),
            SlashCommand::Mode(None) => {
                let text = format!(
                    "permission mode: {}; /mode default|accept-edits|plan|dont-ask|bypass sets it, shift+tab cycles",
                    self.session.mode.map_or("", PermissionMode::as_str)
                );
                self.push_notice(NoticeKind::Info, &text);
                Vec::new()
            }
            SlashCommand::Mode(Some(mode)) => {
                // The five names `/mode` lists, not the aliases the flag also takes.
                let Some(mode) = PermissionMode::ALL.into_iter().find(|known| known.as_str() == mode) else {
                    self.push_notice(
                        NoticeKind::Warning,
                        &format!(
                            "unknown permission mode `{mode}` (default, accept-edits, plan, auto, dont-ask, bypass)"
                        ),
                    );
                    return Vec::new();
                };
                self.session.mode = Some(mode);
                self.flash(format!("permission mode: {mode}"), now);
                vec![Action::SetMode(mode)]
            }
            SlashCommand::Resume(_) | SlashCommand::Rewind | SlashCommand::Clear if busy => {
                self.flash("wait for the running turn to finish (ctrl+c cancels it)", now);
                Vec::new()
            }
            SlashCommand::Resume(None) => vec![Action::ListSessions],
            SlashCommand::Resume(Some(id)) => vec![Action::ResumeSession(id)],
            SlashCommand::Rewind => vec![Action::ListTurns],
            SlashCommand::Clear => vec![Action::NewSession],
            SlashCommand::Compact(focus) => {
                self.flash(super::state::COMPACTING, now);
                vec![Action::Compact(focus)]
            }
            SlashCommand::Skills => {
                self.show_skills();
                Vec::new()
            }
            SlashCommand::User { .. } => Vec::new(),
            SlashCommand::Mcp => {
                let text = match self.session.mcp_servers.as_slice() {
                    [] => crate::mcp::NONE_CONFIGURED.to_string(),
                    lines => format!("MCP servers:\n{}", lines.join("\n")),
                };
                self.push_notice(NoticeKind::Info, &text);
                Vec::new()
            }
            SlashCommand::Memory(argument) => vec![Action::Memory(argument)],
            SlashCommand::Quit => vec![Action::Quit],
        }
    }

    /// Opens the session picker.
    pub fn open_sessions(&mut self, rows: Vec<SessionRow>) {
        self.overlay = Some(Overlay::Picker(Picker::new(PickerItems::Sessions(rows))));
    }

    /// Opens the rewind picker.
    pub fn open_turns(&mut self, rows: Vec<TurnRow>) {
        self.overlay = Some(Overlay::Picker(Picker::new(PickerItems::Turns(rows))));
    }
}

#[cfg(test)]
#[path = "keys_tests.rs"]
mod tests;
