//! The UI's model: everything the screen shows, changed only by agent events
//! ([`UiState::on_event`]), keys and pastes (`keys.rs`) and the results of actions the front end
//! carried out. Rendering (`view.rs`) reads it and never changes it, which is what lets the
//! snapshot tests draw a state without a session.
//!
//! Rows that are finished (a prompt, a committed part of an answer, a tool call with its result)
//! collect in a queue that the terminal drains into its scrollback ([`UiState::take_history`]);
//! what is still changing (the live tail of an answer, running tool calls, the spinner, the input,
//! dialogs, the status line) is drawn in the inline viewport.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use lathe_protocol::{
    AgentEvent, AgentOp, FileRewind, RewindAction, RunStats, StopCause, ToolCall, ToolResult, ToolStatus,
    UserTurn,
};
use ratatui::text::Line;

use super::cells::{self, CallState, NoticeKind};
use super::completion::Completion;
use super::dialog::PermissionDialog;
use super::input::InputEditor;
use super::picker::{Picker, RewindConfirm, TurnRow};
use super::stream::{MarkdownStream, Tone};

/// How long a footer notice stays.
pub const NOTICE_TIME: Duration = Duration::from_secs(3);
/// Ctrl+C twice within this time exits when idle.
pub const EXIT_WINDOW: Duration = Duration::from_secs(2);

/// What the status line shows about the session.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionView {
    /// Session id.
    pub session_id: String,
    /// Model name.
    pub model: String,
    /// Provider name.
    pub provider: String,
    /// Workspace root.
    pub cwd: String,
    /// Permission mode name (`default`, `accept-edits`, `plan`, `dont-ask`, `bypass`).
    pub mode: String,
    /// The model's context window in tokens, when known.
    pub context_window: Option<u64>,
}

/// Something the front end must do for the UI.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Send an operation to the session.
    Op(AgentOp),
    /// Send this prompt to the model.
    Prompt(String),
    /// Record this submitted line in the prompt history file.
    Remember(String),
    /// Run this shell command for the user (`!cmd`).
    Shell(String),
    /// Stop the running `!cmd`.
    CancelShell,
    /// Switch the permission mode.
    SetMode(String),
    /// Switch the model.
    SetModel(String),
    /// List this directory's sessions and open the picker.
    ListSessions,
    /// Resume the session with this id.
    ResumeSession(String),
    /// List this session's prompts and open the rewind picker.
    ListTurns,
    /// Rewind to before this turn.
    Rewind(u32),
    /// Start a new session.
    NewSession,
    /// Leave the UI.
    Quit,
}

/// A picker or confirmation shown instead of the input.
#[derive(Debug, Clone, PartialEq)]
pub enum Overlay {
    /// Choosing a session or a turn.
    Picker(Picker),
    /// Confirming a rewind.
    Rewind(RewindConfirm),
}

/// A tool call that has started and has no result yet.
#[derive(Debug, Clone)]
pub struct Running {
    /// The call.
    pub call: ToolCall,
    /// When it started.
    pub started: Instant,
}

/// The turn in progress.
#[derive(Debug, Clone, Copy)]
pub struct Busy {
    /// When the prompt was sent.
    pub started: Instant,
    /// Output tokens reported for this run so far.
    pub reported_tokens: u64,
    /// The session's output tokens when the run started.
    pub base_output: u64,
    /// Characters streamed since the last usage report (estimated at 4 per token).
    pub streamed_chars: usize,
}

impl Busy {
    /// The live token count: reported tokens plus an estimate for what streamed since.
    pub fn tokens(&self) -> u64 {
        self.reported_tokens + (self.streamed_chars as u64).div_ceil(4)
    }
}

/// The whole UI model.
pub struct UiState {
    /// Width of the terminal in cells.
    pub width: usize,
    /// Session facts for the status line.
    pub session: SessionView,
    /// Session totals, as the last usage report gave them.
    pub(super) totals: RunStats,
    /// Input tokens of the last request (context in use).
    pub context_tokens: u64,
    history: Vec<Line<'static>>,
    stream: Option<MarkdownStream>,
    streamed_text: bool,
    calls: HashMap<String, ToolCall>,
    /// Calls running now, in start order.
    pub running: Vec<Running>,
    /// The turn in progress.
    pub busy: Option<Busy>,
    /// The permission dialog, when a call waits for an answer.
    pub dialog: Option<PermissionDialog>,
    /// A picker or confirmation.
    pub overlay: Option<Overlay>,
    /// The prompt editor.
    pub input: InputEditor,
    /// The completion list under the editor.
    pub completion: Option<Completion>,
    /// A short-lived hint in the footer.
    pub notice: Option<(String, Instant)>,
    pub(super) exit_armed: Option<Instant>,
    pub(super) queued: VecDeque<String>,
    /// A `!cmd` running for the user, with its start time.
    pub shell: Option<(String, Instant)>,
    /// Where `@path` completion looks.
    pub cwd: PathBuf,
    /// The permission modes Shift+Tab cycles through.
    pub mode_cycle: Vec<String>,
    /// The user turns of the session, as last listed (for the rewind confirmation).
    pub(super) turns: Vec<UserTurn>,
    live: Vec<Line<'static>>,
    /// (stream revision, width, rows) the live rows were prepared for.
    live_key: Option<(usize, usize, usize)>,
    /// Whether the last row handed to the scrollback was blank.
    last_flushed_blank: bool,
}

impl UiState {
    /// A fresh UI for a terminal `width` cells wide, recalling `history`.
    pub fn new(width: u16, session: SessionView, history: Vec<String>, cwd: PathBuf) -> Self {
        let mut mode_cycle: Vec<String> = ["default", "accept-edits", "plan"].map(String::from).to_vec();
        if !mode_cycle.contains(&session.mode) && !session.mode.is_empty() {
            mode_cycle.push(session.mode.clone());
        }
        UiState {
            width: usize::from(width.max(1)),
            session,
            totals: RunStats::default(),
            context_tokens: 0,
            history: Vec::new(),
            stream: None,
            streamed_text: false,
            calls: HashMap::new(),
            running: Vec::new(),
            busy: None,
            dialog: None,
            overlay: None,
            input: InputEditor::with_history(history),
            completion: None,
            notice: None,
            exit_armed: None,
            queued: VecDeque::new(),
            shell: None,
            cwd,
            mode_cycle,
            turns: Vec::new(),
            live: Vec::new(),
            live_key: None,
            last_flushed_blank: true,
        }
    }

    /// Forgets the previous session's totals and turn state (a new or resumed session opens).
    pub fn reset_session(&mut self) {
        self.finish_stream();
        self.totals = RunStats::default();
        self.context_tokens = 0;
        self.calls.clear();
        self.running.clear();
        self.busy = None;
        self.dialog = None;
        self.queued.clear();
        self.turns.clear();
    }

    /// Session totals: tokens, requests, estimated cost.
    pub fn totals(&self) -> RunStats {
        self.totals
    }

    /// Whether the last finished row is blank (or there is none yet).
    fn ends_blank(&self) -> bool {
        match self.history.last() {
            Some(row) => row.width() == 0,
            None => self.last_flushed_blank,
        }
    }

    /// Takes the finished rows for the scrollback.
    pub fn take_history(&mut self) -> Vec<Line<'static>> {
        if let Some(stream) = &mut self.stream {
            let rows = stream.take_committed();
            self.history.extend(rows);
        }
        if let Some(last) = self.history.last() {
            self.last_flushed_blank = last.width() == 0;
        }
        std::mem::take(&mut self.history)
    }

    /// Appends finished rows.
    pub fn push_rows(&mut self, rows: Vec<Line<'static>>) {
        if let Some(stream) = &mut self.stream {
            let committed = stream.take_committed();
            self.history.extend(committed);
        }
        self.history.extend(rows);
    }

    /// Appends a notice to the transcript.
    pub fn push_notice(&mut self, kind: NoticeKind, text: &str) {
        let rows = cells::notice(kind, text, self.width);
        self.push_rows(rows);
    }

    /// Shows a short-lived hint in the footer.
    pub fn flash(&mut self, text: impl Into<String>, now: Instant) {
        self.notice = Some((text.into(), now));
    }

    /// The footer hint, while it lasts.
    pub fn current_notice(&self, now: Instant) -> Option<&str> {
        self.notice
            .as_ref()
            .filter(|(_, at)| now.duration_since(*at) < NOTICE_TIME)
            .map(|(text, _)| text.as_str())
    }

    /// The terminal changed width.
    pub fn resize(&mut self, width: u16) {
        self.width = usize::from(width.max(1));
        if let Some(stream) = &mut self.stream {
            stream.set_width(self.width);
        }
    }

    /// Prepares the live rows for a frame with room for `live_rows` of them: the top of a tall
    /// answer tail is committed to the scrollback so nothing scrolls out of sight unsaved. The
    /// rows are rendered again only when text arrived or the room or width changed.
    pub fn prepare_frame(&mut self, live_rows: usize) {
        let tools = self.running.len().min(live_rows);
        let keep = live_rows.saturating_sub(tools).max(1);
        match &mut self.stream {
            Some(stream) => {
                let key = (stream.revision(), self.width, keep);
                if self.live_key != Some(key) {
                    self.live = stream.prepare(keep);
                    self.live_key = Some(key);
                }
            }
            None => {
                self.live.clear();
                self.live_key = None;
            }
        }
    }

    /// The live tail rows prepared by [`UiState::prepare_frame`].
    pub fn live_rows(&self) -> &[Line<'static>] {
        &self.live
    }

    /// Whether a turn is running.
    pub fn is_busy(&self) -> bool {
        self.busy.is_some()
    }

    /// Marks the start of a turn for `prompt` (already shown by the caller).
    pub fn start_turn(&mut self, now: Instant) {
        let base_output = self.totals.output_tokens;
        self.busy = Some(Busy { started: now, reported_tokens: 0, base_output, streamed_chars: 0 });
    }

    /// Shows a prompt in the transcript.
    pub fn show_prompt(&mut self, prompt: &str) {
        self.finish_stream();
        let mut rows = if self.ends_blank() { Vec::new() } else { vec![Line::default()] };
        rows.extend(cells::user_prompt(prompt, self.width));
        rows.push(Line::default());
        self.push_rows(rows);
    }

    fn finish_stream(&mut self) {
        if let Some(mut stream) = self.stream.take() {
            stream.finish();
            let rows = stream.take_committed();
            self.history.extend(rows);
            self.history.push(Line::default());
        }
        self.live.clear();
        self.live_key = None;
    }

    fn stream_delta(&mut self, tone: Tone, text: &str) {
        if self.stream.as_ref().is_some_and(|s| s.tone() != tone) {
            self.finish_stream();
        }
        if self.stream.is_none() && !self.ends_blank() {
            self.history.push(Line::default());
        }
        let width = self.width;
        let stream = self.stream.get_or_insert_with(|| MarkdownStream::new(tone, width));
        stream.push(text);
        if tone == Tone::Answer {
            self.streamed_text = true;
        }
        if let Some(busy) = &mut self.busy {
            busy.streamed_chars += text.chars().count();
        }
    }

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
                self.set_mode(permission_mode);
            }
            AgentEvent::ModeChanged { mode } => self.set_mode(mode),
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
            AgentEvent::ToolCallStarted { call } => {
                self.finish_stream();
                self.calls.insert(call.id.clone(), call.clone());
                self.running.push(Running { call, started: now });
            }
            AgentEvent::PermissionRequest { call, reason, suggestion } => {
                self.finish_stream();
                self.dialog = Some(PermissionDialog::new(call, reason, suggestion));
            }
            AgentEvent::ToolResult { result, tool, elapsed_ms } => {
                self.tool_result(result, tool, elapsed_ms, now)
            }
            AgentEvent::Todos { items } => {
                let rows = cells::todo_rows(&items, self.width);
                self.push_rows(rows);
            }
            AgentEvent::Retry(info) => self.flash(info.describe(), now),
            AgentEvent::Usage { stats, context_tokens, context_window, .. } => {
                self.totals = stats;
                self.context_tokens = context_tokens;
                if context_window > 0 {
                    self.session.context_window = Some(context_window);
                }
                if let Some(busy) = &mut self.busy {
                    busy.reported_tokens = stats.output_tokens.saturating_sub(busy.base_output);
                    busy.streamed_chars = 0;
                }
            }
            AgentEvent::Warning { message } => {
                self.finish_stream();
                self.push_notice(NoticeKind::Warning, &message);
            }
            AgentEvent::Finished { cause, .. } => return self.finished(cause, now),
        }
        Vec::new()
    }

    fn tool_result(&mut self, result: ToolResult, tool: String, elapsed_ms: u64, now: Instant) {
        self.finish_stream();
        let position = self.running.iter().position(|r| r.call.id == result.call_id);
        let call = match position {
            Some(index) => self.running.remove(index).call,
            None => self.calls.get(&result.call_id).cloned().unwrap_or_else(|| ToolCall {
                id: result.call_id.clone(),
                name: tool,
                arguments: serde_json::Value::Null,
                incomplete: None,
            }),
        };
        if self.dialog.as_ref().is_some_and(|d| d.call.id == result.call_id) {
            self.dialog = None;
        }
        let state = CallState::Done { status: result.status, is_error: result.is_error };
        let mut rows = vec![cells::call_line(&call, state, Duration::from_millis(elapsed_ms), self.width)];
        rows.extend(cells::result_rows(&call, &result, self.width));
        let _ = now;
        self.push_rows(rows);
    }

    fn finished(&mut self, cause: StopCause, now: Instant) -> Vec<Action> {
        self.finish_stream();
        self.dialog = None;
        for running in std::mem::take(&mut self.running) {
            let state = CallState::Done { status: ToolStatus::Interrupted, is_error: true };
            let line =
                cells::call_line(&running.call, state, now.duration_since(running.started), self.width);
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

    fn set_mode(&mut self, mode: String) {
        if !mode.is_empty() && !self.mode_cycle.contains(&mode) {
            self.mode_cycle.push(mode.clone());
        }
        self.session.mode = mode;
    }

    /// The files a rewind to `turn` changes, from the last turn list.
    pub(super) fn rewind_files(&self, turn: u32) -> (String, Vec<(String, String)>) {
        let Some(entry) = self.turns.iter().find(|t| t.turn == turn) else {
            return (String::new(), Vec::new());
        };
        let files = entry.files.iter().map(|f| (f.path.clone(), action_name(f.action).to_string())).collect();
        (entry.prompt.clone(), files)
    }

    /// Spinner frame for `now` (one every 80 ms).
    pub fn spinner_frame(&self, now: Instant) -> usize {
        let since = self.busy.map_or(now, |b| b.started);
        (now.duration_since(since).as_millis() / 80) as usize
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

#[cfg(test)]
#[path = "state_tests.rs"]
mod tests;
