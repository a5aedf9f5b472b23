//! The UI's event loop: terminal input, session events, a running `!command` and signals come
//! in; the state changes; the actions it asks for go to the session (as `AgentOp`s) or are carried
//! out here (history file, `!command`, switching sessions); then a frame is drawn.
//!
//! After each batch, a loop's tick that is due is sent ([`UiState::due_tick`]; the loop wakes at
//! least once a second when idle).
//!
//! Frames are drawn after a batch of inputs (all events already queued are applied first), and at
//! least every 80 ms while something animates. Quitting sends `AgentOp::Quit` and waits for the
//! session's event stream to close (the session file is synced by then), at most
//! [`QUIT_GRACE`]; SIGTERM and SIGHUP quit the same way with status 143 and 129.

use std::io::{BufWriter, Stdout};
use std::time::{Duration, Instant};

use crossterm::event::{Event, EventStream, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
use futures::StreamExt;
use lathe_core::host::{Flags, Interaction, SessionBuilder, SessionChoice, SessionHandle, StartError};
use lathe_protocol::{AgentEvent, AgentOp, Content};
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Size;
use tokio::signal::unix::{SignalKind, signal};

use super::cells::NoticeKind;
use super::history::PromptHistory;
use super::picker::SessionRow;
use super::state::{Action, SessionView, UiState};
use super::terminal::InlineTerminal;
use super::view;

/// How long quitting waits for the session to close its event stream.
pub const QUIT_GRACE: Duration = Duration::from_secs(5);
/// Redraw interval while the spinner turns.
const TICK: Duration = Duration::from_millis(80);
/// Time spent applying queued session events before a frame is drawn.
const BATCH_BUDGET: Duration = Duration::from_millis(8);
/// Most terminal events taken as one burst ([`super::burst`]).
const MAX_BURST_EVENTS: usize = 4096;

type Backend = CrosstermBackend<BufWriter<Stdout>>;

/// The running UI.
pub struct App {
    terminal: InlineTerminal<Backend>,
    state: UiState,
    flags: Flags,
    session: Option<SessionHandle>,
    history: PromptHistory,
    history_warned: bool,
    /// The session to open once the current one has closed (or now, when there is none).
    switch: Option<SessionChoice>,
    /// The id of the last session opened.
    last_session: Option<String>,
    quitting: Option<(u8, Instant)>,
    exit: Option<u8>,
}

impl App {
    /// A UI drawing on `terminal` for sessions built from `flags`.
    pub fn new(terminal: InlineTerminal<Backend>, flags: Flags, home: &std::path::Path) -> App {
        let history = PromptHistory::in_home(home);
        let (recalled, warning) = match history.load() {
            Ok(prompts) => (prompts, None),
            Err(error) => {
                (Vec::new(), Some(format!("prompt history {}: {error}", home.join("history").display())))
            }
        };
        let width = terminal.screen().width;
        let cwd = flags.dir.clone().or_else(|| std::env::current_dir().ok()).unwrap_or_default();
        let mut state = UiState::new(width, SessionView::default(), recalled, cwd);
        if let Some(warning) = warning {
            state.push_notice(NoticeKind::Warning, &warning);
        }
        App {
            terminal,
            state,
            flags,
            session: None,
            history,
            history_warned: false,
            switch: None,
            last_session: None,
            quitting: None,
            exit: None,
        }
    }

    /// Shows the session picker before any session is open (`--resume` without an id); leaving
    /// it without a choice ends the UI.
    pub fn pick_session(&mut self, rows: Vec<SessionRow>) {
        self.state.open_sessions(rows);
    }

    /// Shows a notice in the transcript.
    pub fn notice(&mut self, kind: NoticeKind, text: &str) {
        self.state.push_notice(kind, text);
    }

    /// Prints the last rows (how to resume the session) and clears the viewport, leaving the
    /// transcript in the terminal and the cursor under it.
    pub fn finish(&mut self) {
        if let Some(id) = &self.last_session {
            let text = format!("Resume this session with: lathe --resume {id}");
            self.state.push_notice(NoticeKind::Info, &text);
        }
        let rows = self.state.take_history();
        let _ = self.terminal.insert_rows(&rows);
        let _ = self.terminal.clear();
    }

    /// Starts the session the flags name; errors are shown and end the UI with status 2 (status 1
    /// for a session that cannot be found or read).
    pub async fn start(&mut self, choice: SessionChoice) {
        let mut flags = self.flags.clone();
        flags.session = choice;
        match SessionBuilder::new(flags).interaction(Interaction::Interactive).start().await {
            Ok(handle) => {
                self.state.reset_session();
                self.state.session.mcp_servers = crate::mcp::lines(&handle.info.mcp_servers);
                self.state.jobs = handle.jobs.clone();
                self.state.team = handle.team.clone();
                self.last_session = Some(handle.info.id.clone());
                self.session = Some(handle);
            }
            Err(error) => {
                self.state.push_notice(NoticeKind::Error, &error.to_string());
                if self.session.is_none() {
                    self.exit = Some(match error {
                        StartError::Session(_) => crate::args::EXIT_FAILED,
                        StartError::Usage(_) | StartError::Config(_) => crate::args::EXIT_USAGE,
                    });
                }
            }
        }
    }

    /// Submits `prompt` (from the command line) as if typed, when the session started.
    pub fn submit_first(&mut self, prompt: Option<&str>) {
        if let Some(prompt) = prompt.filter(|p| !p.trim().is_empty())
            && self.session.is_some()
        {
            self.state.input.set_text(prompt);
            let actions = self.state.submit(Instant::now());
            self.perform(actions);
        }
    }

    /// Puts `text` in the editor.
    pub fn set_input(&mut self, text: &str) {
        self.state.input.set_text(text);
    }

    /// Runs until the user quits; returns the exit status.
    pub async fn run(&mut self) -> u8 {
        let mut input = EventStream::new();
        let (Ok(mut term), Ok(mut hup)) = (signal(SignalKind::terminate()), signal(SignalKind::hangup()))
        else {
            return crate::args::EXIT_FAILED;
        };
        self.draw();
        loop {
            if let Some(code) = self.exit {
                self.draw();
                return code;
            }
            if let Some((code, since)) = self.quitting
                && since.elapsed() > QUIT_GRACE
            {
                self.exit = Some(code);
                continue;
            }
            if self.session.is_none() && self.quitting.is_none() {
                match self.switch.take() {
                    Some(choice) => self.start(choice).await,
                    // The picker shown before any session was left without a choice.
                    None if self.state.overlay.is_none() => self.exit = Some(crate::args::EXIT_OK),
                    None => {}
                }
                if self.exit.is_some() {
                    continue;
                }
            }
            let animating = self.state.is_busy() || self.state.shell.is_some() || self.state.notice.is_some();
            let tick = if animating || self.quitting.is_some() { TICK } else { Duration::from_secs(1) };
            let batch = tokio::select! {
                event = input.next() => {
                    let batch = Instant::now();
                    // The keys the same read brought (a paste without bracketed paste is one
                    // burst). Any other event (a resize, a bracketed paste) ends the burst and
                    // is applied after it, then drawn as before.
                    let mut burst = Vec::new();
                    let mut next = event;
                    loop {
                        match next {
                            Some(Ok(key @ Event::Key(_))) => burst.push(key),
                            Some(Ok(other)) => {
                                self.keys(&mut burst);
                                self.on_terminal(other);
                                break;
                            }
                            Some(Err(_)) | None => {
                                self.quit(crate::args::EXIT_FAILED);
                                break;
                            }
                        }
                        if burst.len() >= MAX_BURST_EVENTS {
                            break;
                        }
                        // Polled with this task's waker (not a no-op one, as `now_or_never` would
                        // give): crossterm wakes the waker it was last polled with when input comes.
                        match futures::poll!(input.next()) {
                            std::task::Poll::Ready(more) => next = more,
                            std::task::Poll::Pending => break,
                        }
                    }
                    self.keys(&mut burst);
                    batch
                }
                event = next_event(&mut self.session) => {
                    let batch = Instant::now();
                    match event {
                        Some(event) => {
                            self.on_event(event);
                            // Apply what is already queued, within a budget that keeps frames
                            // coming during a flood of deltas.
                            while batch.elapsed() < BATCH_BUDGET
                                && let Some(event) = self.session.as_mut().and_then(|s| s.events.try_recv().ok())
                            {
                                self.on_event(event);
                            }
                        }
                        None => self.session_closed().await,
                    }
                    batch
                }
                // SIGINT from outside (the terminal sends Ctrl+C as a key in raw mode).
                _ = tokio::signal::ctrl_c() => {
                    self.on_terminal(Event::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)));
                    Instant::now()
                }
                _ = term.recv() => {
                    self.quit(143);
                    Instant::now()
                }
                _ = hup.recv() => {
                    self.quit(129);
                    Instant::now()
                }
                _ = tokio::time::sleep(tick) => Instant::now(),
            };
            // A loop's tick that is due (and may run now) goes out before the frame shows it.
            let due = self.state.due_tick(super::loops::wall_ms());
            self.perform(due);
            self.draw();
            // Frame time: applying the batch of inputs plus drawing (bench/tui.py reads these).
            tracing::debug!(target: "lathe::tui::frame", frame_us = batch.elapsed().as_micros() as u64, "frame");
        }
    }

    fn draw(&mut self) {
        // Terminals that know synchronized output show the frame at once (no flicker while the
        // viewport is cleared and drawn again); others ignore the two sequences.
        let _ = crossterm::queue!(self.terminal.backend_mut(), BeginSynchronizedUpdate);
        let drawn = view::draw_frame(&mut self.terminal, &mut self.state, Instant::now());
        let _ = crossterm::execute!(self.terminal.backend_mut(), EndSynchronizedUpdate);
        if drawn.is_err() {
            // The terminal is gone (hung up): nothing more can be shown.
            self.quit(129);
        }
    }

    fn on_terminal(&mut self, event: Event) {
        let now = Instant::now();
        let actions = match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => {
                if self.quitting.is_some()
                    && key.code == KeyCode::Char('c')
                    && key.modifiers.contains(KeyModifiers::CONTROL)
                {
                    // A second Ctrl+C while the session winds down: leave now.
                    self.exit = self.quitting.map(|(code, _)| code);
                    return;
                }
                // Servers still starting when the session began settle later: `/mcp` shows them
                // as they are now.
                if let Some(session) = &self.session {
                    self.state.session.mcp_servers = crate::mcp::lines(&session.mcp.reports());
                }
                self.state.on_key(key, now)
            }
            Event::Paste(text) => {
                self.state.on_paste(&text, now);
                Vec::new()
            }
            Event::Resize(width, height) => {
                let _ = self.terminal.resize(Size::new(width, height));
                self.state.resize(width);
                Vec::new()
            }
            Event::Key(_) | Event::FocusGained | Event::FocusLost | Event::Mouse(_) => Vec::new(),
        };
        self.perform(actions);
    }

    /// Applies a burst of key events ([`super::burst`]) and empties it.
    fn keys(&mut self, burst: &mut Vec<Event>) {
        super::burst::line_breaks_inside(burst);
        for event in burst.drain(..) {
            self.on_terminal(event);
        }
    }

    fn on_event(&mut self, event: AgentEvent) {
        let actions = self.state.on_event(event, Instant::now());
        self.perform(actions);
    }

    fn perform(&mut self, actions: Vec<Action>) {
        for action in actions {
            self.act(action);
        }
    }

    fn send(&mut self, op: AgentOp) {
        let sent = self.session.as_ref().is_some_and(|session| session.ops.send(op).is_ok());
        if !sent {
            self.state.push_notice(NoticeKind::Error, "the session has ended; /quit and start lathe again");
        }
    }

    fn act(&mut self, action: Action) {
        match action {
            Action::Op(op) => self.send(op),
            Action::Prompt(text) => {
                self.send(AgentOp::UserInput { content: vec![Content::text(text)] });
            }
            Action::Remember(text) => {
                if let Err(error) = self.history.append(&text)
                    && !self.history_warned
                {
                    self.history_warned = true;
                    self.state
                        .push_notice(NoticeKind::Warning, &format!("prompt history not saved: {error}"));
                }
            }
            Action::Shell(command) => self.send(AgentOp::RunCommand { command }),
            Action::CancelShell => self.send(AgentOp::Cancel),
            Action::SetMode(mode) => self.send(AgentOp::SetMode { mode }),
            Action::SetModel(model) => self.send(AgentOp::SetModel { model, provider: None }),
            Action::Compact(focus) => self.send(AgentOp::Compact { focus }),
            Action::ListSessions => match lathe_core::host::list_sessions(&self.flags, None) {
                Ok(list) => self.state.open_sessions(session_rows(list)),
                Err(error) => self.state.push_notice(NoticeKind::Error, &error.to_string()),
            },
            Action::ResumeSession(id) => match self.find_session(&id) {
                Ok(id) => self.switch_to(SessionChoice::Resume(id)),
                Err(message) => self.state.push_notice(NoticeKind::Warning, &message),
            },
            Action::NewSession => self.switch_to(SessionChoice::New),
            Action::Memory(argument) => {
                let shown = lathe_core::memory::manage::locate(&self.flags, None)
                    .map_err(|error| error.to_string())
                    .and_then(|(_, roots)| {
                        lathe_core::memory::manage::slash(&roots, argument.as_deref())
                            .map_err(|error| error.to_string())
                    });
                match shown {
                    Ok(text) => self.state.push_notice(NoticeKind::Info, text.trim_end()),
                    Err(message) => self.state.push_notice(NoticeKind::Error, &message),
                }
            }
            Action::ListTurns => self.send(AgentOp::ListTurns),
            Action::Rewind(turn) => self.send(AgentOp::Rewind { turn }),
            Action::Quit => self.quit(crate::args::EXIT_OK),
        }
    }

    /// The full id of this directory's session whose id is `id` or starts with it.
    fn find_session(&self, id: &str) -> Result<String, String> {
        let list = lathe_core::host::list_sessions(&self.flags, None).map_err(|e| e.to_string())?;
        let matching: Vec<String> = list.into_iter().map(|s| s.id).filter(|s| s.starts_with(id)).collect();
        match matching.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(format!("no session {id} in this directory; /resume without an id lists them")),
            _ => Err(format!("{} sessions start with {id}; type more of the id", matching.len())),
        }
    }

    /// Closes the current session (if any) and opens `choice` once it has closed.
    fn switch_to(&mut self, choice: SessionChoice) {
        self.switch = Some(choice);
        if let Some(session) = &self.session {
            let _ = session.ops.send(AgentOp::Quit);
        }
    }

    fn quit(&mut self, code: u8) {
        if self.quitting.is_some() {
            return;
        }
        match &self.session {
            Some(session) if session.ops.send(AgentOp::Quit).is_ok() => {
                self.quitting = Some((code, Instant::now()))
            }
            _ => self.exit = Some(code),
        }
    }

    async fn session_closed(&mut self) {
        let Some(session) = self.session.take() else { return };
        let _ = session.task.await;
        if let Some((code, _)) = self.quitting {
            self.exit = Some(code);
        } else if self.switch.is_some() {
            // The loop opens the next session.
        } else {
            self.state
                .push_notice(NoticeKind::Error, "the session ended unexpectedly; see the log (LATHE_LOG)");
            self.exit = Some(crate::args::EXIT_FAILED);
        }
    }
}

async fn next_event(session: &mut Option<SessionHandle>) -> Option<AgentEvent> {
    match session {
        Some(session) => session.events.recv().await,
        None => std::future::pending().await,
    }
}

/// The picker's rows for the session list.
pub fn session_rows(list: Vec<lathe_core::session::SessionSummary>) -> Vec<SessionRow> {
    list.into_iter()
        .map(|summary| SessionRow {
            id: summary.id,
            title: if summary.first_prompt.is_empty() { "(no prompt)".into() } else { summary.first_prompt },
            when: super::format_time(summary.updated_ms),
            turns: summary.turns,
            cost_usd: summary.cost_usd,
        })
        .collect()
}
