//! The UI's model: everything the screen shows, changed only by agent events (`events.rs`),
//! keys and pastes (`keys.rs`) and the results of actions the front end carried out. Rendering
//! (`view.rs`) reads it and never changes it, which is what lets the snapshot tests draw a state
//! without a session.
//!
//! Rows that are finished (a prompt, a committed part of an answer, a tool call with its result)
//! collect in a queue that the terminal drains into its scrollback ([`UiState::take_history`]);
//! what is still changing (the live tail of an answer, running tool calls, the spinner, the input,
//! dialogs, the status line) is drawn in the inline viewport.

use lathe_protocol::PermissionMode;
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use lathe_protocol::{AgentOp, RunStats, ToolCall, UserCommand, UserTurn};
use ratatui::text::Line;

use super::cells::{self, NoticeKind};
use super::completion::Completion;
use super::dialog::PermissionDialog;
use super::extensions::SubagentProgress;
use super::input::InputEditor;
use super::picker::{Picker, RewindConfirm};
use super::plan::PlanDialog;
use super::question::QuestionCard;
use super::stream::{MarkdownStream, Tone};

/// How long a footer notice stays.
pub const NOTICE_TIME: Duration = Duration::from_secs(3);
/// The footer hint while `/compact` runs (taken down when the compaction or the turn ends).
pub const COMPACTING: &str = "compacting the conversation…";
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
    /// The permission mode (`None` until the session has started).
    pub mode: Option<PermissionMode>,
    /// The model's context window in tokens, when known.
    pub context_window: Option<u64>,
    /// One line per MCP server with its status and tool count (`/mcp`, as `lathe mcp list`).
    pub mcp_servers: Vec<String>,
    /// The sandbox commands run in, one line (empty until the session has started).
    pub sandbox: String,
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
    SetMode(PermissionMode),
    /// Switch the model.
    SetModel(String),
    /// Compact the conversation now, with an optional focus for the summary.
    Compact(Option<String>),
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
    /// `/memory …`: list, show or forget long-term memories.
    Memory(Option<String>),
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
    /// The tool's one-line summary of it.
    pub summary: String,
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
    pub(super) history: Vec<Line<'static>>,
    stream: Option<MarkdownStream>,
    pub(super) streamed_text: bool,
    pub(super) calls: HashMap<String, ToolCall>,
    /// Calls running now, in start order.
    pub running: Vec<Running>,
    /// The turn in progress.
    pub busy: Option<Busy>,
    /// The permission dialog, when a call waits for an answer.
    pub dialog: Option<PermissionDialog>,
    /// The plan dialog, when a presented plan waits for the user's choice.
    pub plan: Option<PlanDialog>,
    /// The question card, when a question the model asked waits for the user's answer.
    pub question: Option<QuestionCard>,
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
    pub mode_cycle: Vec<PermissionMode>,
    /// The user turns of the session, as last listed (for the rewind confirmation).
    pub(super) turns: Vec<UserTurn>,
    live: Vec<Line<'static>>,
    /// (stream revision, width, rows) the live rows were prepared for.
    live_key: Option<(usize, usize, usize)>,
    /// Whether the last row handed to the scrollback was blank.
    last_flushed_blank: bool,
    /// The session's `/name` commands besides the built-in ones (custom commands, skills).
    pub user_commands: Vec<UserCommand>,
    /// The goal's state as the session last reported it (`/goal` shows it).
    pub goal: Option<lathe_protocol::goal::GoalOutcome>,
    /// The loop's state as the session last reported it (`/loop` shows it; an ended loop stays
    /// to say why it ended).
    pub looping: Option<lathe_protocol::loops::LoopState>,
    /// A tick was asked for and the session has not yet said how it went.
    pub(super) tick_sent: bool,
    /// What the sub-agent of each running `task` call has done, by the call's id.
    pub(super) subagents: HashMap<String, SubagentProgress>,
    /// The background sub-agents running, in the order they started.
    pub(super) background: Vec<super::extensions::BackgroundRow>,
    /// The session's background jobs (`/jobs`, `/status`); an empty table until a session starts.
    pub jobs: std::sync::Arc<lathe_core::host::JobTable>,
    /// The team the session leads (`--teams`), for `/team` and the status line.
    pub team: Option<std::sync::Arc<lathe_core::team::lead::TeamHub>>,
}

impl UiState {
    /// A fresh UI for a terminal `width` cells wide, recalling `history`.
    pub fn new(width: u16, session: SessionView, history: Vec<String>, cwd: PathBuf) -> Self {
        let mut mode_cycle = vec![PermissionMode::Default, PermissionMode::AcceptEdits, PermissionMode::Plan];
        if let Some(mode) = session.mode.filter(|mode| !mode_cycle.contains(mode)) {
            mode_cycle.push(mode);
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
            plan: None,
            question: None,
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
            user_commands: Vec::new(),
            goal: None,
            looping: None,
            tick_sent: false,
            subagents: HashMap::new(),
            background: Vec::new(),
            jobs: std::sync::Arc::new(lathe_core::host::JobTable::new()),
            team: None,
        }
    }

    /// Forgets the previous session's totals and turn state (a new or resumed session opens).
    pub fn reset_session(&mut self) {
        self.finish_stream();
        self.totals = RunStats::default();
        self.context_tokens = 0;
        self.calls.clear();
        self.running.clear();
        self.subagents.clear();
        self.background.clear();
        self.busy = None;
        self.dialog = None;
        self.plan = None;
        self.question = None;
        self.queued.clear();
        self.turns.clear();
        self.goal = None;
        self.looping = None;
        self.tick_sent = false;
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

    /// Takes the footer hint down early if it is `text` (a hint for something that has ended).
    pub fn end_flash(&mut self, text: &str) {
        if self.notice.as_ref().is_some_and(|(shown, _)| shown == text) {
            self.notice = None;
        }
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

    /// Whether a dialog (a permission prompt, a presented plan, a question) takes the keys.
    pub fn has_dialog(&self) -> bool {
        self.dialog.is_some() || self.plan.is_some() || self.question.is_some()
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

    pub(super) fn finish_stream(&mut self) {
        if let Some(mut stream) = self.stream.take() {
            stream.finish();
            let rows = stream.take_committed();
            self.history.extend(rows);
            self.history.push(Line::default());
        }
        self.live.clear();
        self.live_key = None;
    }

    pub(super) fn stream_delta(&mut self, tone: Tone, text: &str) {
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

    /// Spinner frame for `now` (one every 80 ms).
    pub fn spinner_frame(&self, now: Instant) -> usize {
        let since = self.busy.map_or(now, |b| b.started);
        (now.duration_since(since).as_millis() / 80) as usize
    }
}
