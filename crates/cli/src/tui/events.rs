//! Agent events applied to the UI state: streamed text and reasoning, tool calls and their
//! results, permission requests, usage, mode and model changes, the rewind flow, the `/report`
//! answer, and the end of a run (which sends a prompt queued meanwhile).

use lathe_protocol::PermissionMode;
use std::time::{Duration, Instant};

use lathe_protocol::{
    AgentEvent, CompactionTrigger, FileRewind, Receipt, ResultView, RewindAction, StopCause, ToolCall,
    ToolResult, ToolStatus,
};

use super::cells::{self, CallState, NoticeKind};
use super::dialog::PermissionDialog;
use super::picker::TurnRow;
use super::plan::{PlanDialog, plan_rows};
use super::question::QuestionCard;
use super::state::{Action, Running, UiState};
use super::stream::Tone;

impl UiState {
    /// Applies an agent event; returns what the front end must do next (a queued prompt).
    pub fn on_event(&mut self, event: AgentEvent, now: Instant) -> Vec<Action> {
        match event {
            AgentEvent::SessionStarted {
                session_id,
                model,
                provider,
                cwd,
                permission_mode,
                resumed_turns,
                sandbox,
                ..
            } => {
                let text = if resumed_turns > 0 {
                    format!(
                        "Resumed session {session_id}: {resumed_turns} earlier prompt{} (/rewind lists them) · {model} \
                         ({provider}) · {cwd}",
                        if resumed_turns == 1 { "" } else { "s" }
                    )
                } else {
                    format!("Lathe · {model} ({provider}) · {cwd} · /help lists commands and keys")
                };
                self.push_notice(NoticeKind::Info, &text);
                self.session.session_id = session_id;
                self.session.model = model;
                self.session.provider = provider;
                self.session.cwd = cwd;
                self.session.sandbox = sandbox;
                self.set_mode(permission_mode);
            }
            AgentEvent::ModeChanged { mode } => self.set_mode(mode),
            AgentEvent::Goal { outcome } => self.goal_event(outcome),
            AgentEvent::Loop { state } => self.loop_event(state),
            AgentEvent::ModelChanged { model, provider } => {
                self.push_notice(NoticeKind::Info, &format!("model: {model} ({provider})"));
                self.session.model = model;
                self.session.provider = provider;
            }
            AgentEvent::UserTurns { turns } => {
                let rows = turns.iter().map(|t| TurnRow { turn: t.turn, prompt: t.prompt.clone() }).collect();
                self.turns = turns;
                self.open_turns(rows);
            }
            AgentEvent::CommandFinished { command, summary, output, exit_code, elapsed_ms } => {
                let elapsed = Duration::from_millis(elapsed_ms);
                self.command_finished(&command, &summary, output, exit_code, elapsed);
            }
            AgentEvent::Rewound { turn, prompt, files } => {
                self.overlay = None;
                let text = rewound_text(&self.session.cwd, turn, &files);
                self.push_notice(NoticeKind::Info, &text);
                self.input.set_text(&prompt);
            }
            AgentEvent::TurnStarted { .. } => {
                if self.busy.is_none() {
                    self.start_turn(now);
                }
            }
            AgentEvent::TextDelta { text } => self.stream_delta(Tone::Answer, &text),
            AgentEvent::ThinkingDelta { text } => self.stream_delta(Tone::Reasoning, &text),
            AgentEvent::AssistantMessage { message } => {
                if !self.streamed_text {
                    let text = message.text();
                    if !text.trim().is_empty() {
                        self.stream_delta(Tone::Answer, &text);
                    }
                }
                self.finish_stream();
                self.streamed_text = false;
                for call in message.tool_calls() {
                    self.calls.insert(call.id.clone(), call.clone());
                }
            }
            AgentEvent::ToolCallStarted { call, summary } => {
                self.finish_stream();
                self.calls.insert(call.id.clone(), call.clone());
                self.running.push(Running { call, summary, started: now });
            }
            AgentEvent::PermissionRequest { call, reason, suggestion, preview } => {
                self.finish_stream();
                self.dialog = Some(PermissionDialog::new(call, reason, suggestion, preview));
            }
            AgentEvent::PlanReady(ready) => {
                self.finish_stream();
                let rows = plan_rows(&ready.plan, self.width);
                self.push_rows(rows);
                self.plan = Some(PlanDialog::new(ready.call_id, ready.plan_file));
            }
            AgentEvent::Question(question) => {
                self.finish_stream();
                self.question = Some(QuestionCard::new(question));
            }
            AgentEvent::ToolResult { result, tool, elapsed_ms, view } => {
                self.tool_result(result, tool, elapsed_ms, view.as_ref())
            }
            AgentEvent::Todos { items } => {
                let rows = cells::todo_rows(&items, self.width);
                self.push_rows(rows);
            }
            AgentEvent::Retry(info) => self.flash(info.describe(), now),
            // The spinner already shows the model is working.
            AgentEvent::OutputProgress { .. } => {}
            AgentEvent::Usage { stats, context, .. } => {
                self.totals = stats;
                if let Some(context) = context {
                    self.context_tokens = context.used_tokens;
                    if context.window_tokens > 0 {
                        self.session.context_window = Some(context.window_tokens);
                    }
                }
                if let Some(busy) = &mut self.busy {
                    busy.reported_tokens = stats.output_tokens.saturating_sub(busy.base_output);
                    busy.streamed_chars = 0;
                }
            }
            AgentEvent::ContextPruned { results, tokens_before, tokens_after } => {
                let text = format!(
                    "Context: {results} old tool output{} replaced by stubs ({tokens_before} → {tokens_after} tokens)",
                    if results == 1 { "" } else { "s" }
                );
                self.finish_stream();
                self.end_flash(super::state::COMPACTING);
                self.push_notice(NoticeKind::Info, &text);
            }
            AgentEvent::Compacted {
                trigger,
                tokens_before,
                tokens_after,
                summarized_items,
                kept_items,
                ..
            } => {
                let trigger = match trigger {
                    CompactionTrigger::Auto => "the context window was nearly full",
                    CompactionTrigger::Overflow => "the provider said the prompt was too long",
                    CompactionTrigger::Manual => "/compact",
                };
                let text = format!(
                    "Conversation compacted ({trigger}): {summarized_items} items summarized, {kept_items} kept · \
                     {tokens_before} → {tokens_after} tokens"
                );
                self.finish_stream();
                self.end_flash(super::state::COMPACTING);
                self.push_notice(NoticeKind::Info, &text);
            }
            AgentEvent::Warning { message } => {
                self.finish_stream();
                self.push_notice(NoticeKind::Warning, &message);
            }
            AgentEvent::Subagent { parent_call_id, agent_id, subagent_type, event } => {
                self.subagent_event(parent_call_id, &agent_id, subagent_type, *event)
            }
            AgentEvent::BackgroundAgent { agent_id, subagent_type, description, status } => {
                let row = super::extensions::BackgroundRow { agent_id, kind: subagent_type, description };
                self.background_event(row, &status)
            }
            AgentEvent::Commands { commands } => self.user_commands = commands,
            AgentEvent::Steered { .. } => {}
            AgentEvent::Report { report } => {
                let text = super::help::report(&report);
                self.push_notice(NoticeKind::Info, &text);
            }
            AgentEvent::Finished { cause, .. } => return self.finished(cause, now),
        }
        Vec::new()
    }

    fn tool_result(&mut self, result: ToolResult, tool: String, elapsed_ms: u64, view: Option<&ResultView>) {
        self.finish_stream();
        let position = self.running.iter().position(|r| r.call.id == result.call_id);
        let receipt_summary =
            || result.receipt.as_ref().map(|receipt| receipt.summary.clone()).unwrap_or_default();
        let (call, summary) = match position {
            Some(index) => {
                let running = self.running.remove(index);
                (running.call, running.summary)
            }
            None => {
                let call = self.calls.get(&result.call_id).cloned().unwrap_or_else(|| ToolCall {
                    id: result.call_id.clone(),
                    name: tool,
                    arguments: serde_json::Value::Null,
                    incomplete: None,
                });
                (call, receipt_summary())
            }
        };
        if self.dialog.as_ref().is_some_and(|d| d.call.id == result.call_id) {
            self.dialog = None;
        }
        if self.plan.as_ref().is_some_and(|plan| plan.call_id == result.call_id) {
            self.plan = None;
        }
        if self.question.as_ref().is_some_and(|card| card.call_id == result.call_id) {
            self.question = None;
        }
        let state = CallState::Done { status: result.status, is_error: result.is_error };
        let elapsed = Duration::from_millis(elapsed_ms);
        let mut rows = vec![cells::call_line(&call, &summary, state, elapsed, self.width)];
        rows.extend(self.take_subagent_summary(&call.id, self.width));
        rows.extend(cells::result_rows(&result, view, self.width));
        self.push_rows(rows);
    }

    fn finished(&mut self, cause: StopCause, now: Instant) -> Vec<Action> {
        self.finish_stream();
        self.end_flash(super::state::COMPACTING);
        self.dialog = None;
        self.plan = None;
        self.question = None;
        for running in std::mem::take(&mut self.running) {
            let state = CallState::Done { status: ToolStatus::Interrupted, is_error: true };
            let elapsed = now.duration_since(running.started);
            let line = cells::call_line(&running.call, &running.summary, state, elapsed, self.width);
            self.history.push(line);
        }
        match &cause {
            StopCause::Completed => {}
            StopCause::Cancelled => {
                self.push_notice(NoticeKind::Warning, "Interrupted. What should Lathe do instead?")
            }
            other => self.push_notice(NoticeKind::Error, &crate::print::describe(other)),
        }
        self.busy = None;
        self.calls.clear();
        self.subagents.clear();
        match self.queued.pop_front() {
            Some(prompt) => self.send_prompt(prompt, now),
            None => Vec::new(),
        }
    }

    /// Shows and sends a prompt, starting a turn.
    pub(super) fn send_prompt(&mut self, prompt: String, now: Instant) -> Vec<Action> {
        self.show_prompt(&prompt);
        self.start_turn(now);
        vec![Action::Prompt(prompt)]
    }

    fn set_mode(&mut self, mode: PermissionMode) {
        if !self.mode_cycle.contains(&mode) {
            self.mode_cycle.push(mode);
        }
        self.session.mode = Some(mode);
    }

    /// The files a rewind to `turn` changes, from the last turn list.
    pub(super) fn rewind_files(&self, turn: u32) -> (String, Vec<(String, String)>) {
        let Some(entry) = self.turns.iter().find(|t| t.turn == turn) else {
            return (String::new(), Vec::new());
        };
        let files = entry.files.iter().map(|f| (f.path.clone(), action_name(f.action).to_string())).collect();
        (entry.prompt.clone(), files)
    }
}

fn action_name(action: RewindAction) -> &'static str {
    match action {
        RewindAction::Restore => "restored",
        RewindAction::Delete => "deleted",
        RewindAction::Recreate => "recreated",
    }
}

/// `path` relative to the workspace `cwd` when inside it.
fn shown_path(cwd: &str, path: &str) -> String {
    match std::path::Path::new(path).strip_prefix(cwd) {
        Ok(relative) if !cwd.is_empty() && !relative.as_os_str().is_empty() => relative.display().to_string(),
        _ => path.to_string(),
    }
}

fn rewound_text(cwd: &str, turn: u32, files: &[FileRewind]) -> String {
    let mut text = format!("Rewound to before prompt {turn}; the prompt is back in the editor.");
    if files.is_empty() {
        text.push_str(" No files changed.");
    }
    for file in files {
        text.push_str(&format!("\n{} {}", action_name(file.action), shown_path(cwd, &file.path)));
    }
    text
}

/// How the user's own commands are labelled in the transcript: like a call of the shell tool.
const USER_COMMAND_LABEL: &str = "shell";

impl UiState {
    /// Shows a finished `!command` as a call of the shell tool would be, with its output and
    /// status.
    fn command_finished(
        &mut self,
        command: &str,
        summary: &str,
        output: String,
        exit_code: Option<i32>,
        elapsed: Duration,
    ) {
        self.shell = None;
        let arguments = serde_json::json!({ "command": command });
        let call = ToolCall {
            id: "user-shell".into(),
            name: USER_COMMAND_LABEL.into(),
            arguments,
            incomplete: None,
        };
        let mut text = output;
        if !text.ends_with('\n') && !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&match exit_code {
            Some(code) => format!("exit code: {code}"),
            None => "killed".to_string(),
        });
        let failed = exit_code != Some(0);
        let status = if exit_code.is_none() { ToolStatus::Interrupted } else { ToolStatus::Completed };
        let mut result = ToolResult::text("user-shell", text, failed, status);
        result.receipt = Some(Receipt { exit_code, ..Receipt::default() });
        let width = self.width;
        let state = CallState::Done { status, is_error: failed };
        let mut rows = vec![cells::call_line(&call, summary, state, elapsed, width)];
        rows.extend(cells::result_rows(&result, None, width));
        rows.push(ratatui::text::Line::default());
        self.push_rows(rows);
    }
}
