//! A UI on a ratatui `TestBackend`: feeds events and keys to a [`UiState`] and draws frames
//! exactly as the real terminal loop does, then shows the scrollback and the screen as text.

use lathe_protocol::PermissionMode;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use lathe_protocol::AgentEvent;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Size;

use super::state::{Action, SessionView, UiState};
use super::terminal::InlineTerminal;
use super::view;

/// A UI of `width` × `height` cells with a fixed clock.
pub struct Screen {
    pub terminal: InlineTerminal<TestBackend>,
    pub state: UiState,
    pub start: Instant,
    pub now: Instant,
}

pub fn session() -> SessionView {
    SessionView {
        session_id: "0193a5c0-1111-7000-8000-000000000001".into(),
        model: "claude-sonnet-4-5".into(),
        provider: "anthropic".into(),
        cwd: "/home/dev/app".into(),
        mode: Some(PermissionMode::Default),
        context_window: Some(200_000),
        mcp_servers: Vec::new(),
        sandbox: "workspace-write, network off, bubblewrap".into(),
    }
}

impl Screen {
    pub fn new(width: u16, height: u16) -> Screen {
        let backend = TestBackend::new(width, height);
        let terminal = InlineTerminal::new(backend, 0).unwrap_or_else(|e| match e {});
        let cwd = std::env::temp_dir();
        let state = UiState::new(width, session(), Vec::new(), cwd);
        let start = Instant::now();
        Screen { terminal, state, start, now: start }
    }

    /// Moves the clock to `ms` milliseconds after the start.
    pub fn at(&mut self, ms: u64) -> &mut Self {
        self.now = self.start + Duration::from_millis(ms);
        self
    }

    pub fn event(&mut self, event: AgentEvent) -> Vec<Action> {
        let actions = self.state.on_event(event, self.now);
        self.draw();
        actions
    }

    pub fn key(&mut self, code: KeyCode) -> Vec<Action> {
        self.key_with(code, KeyModifiers::NONE)
    }

    pub fn key_with(&mut self, code: KeyCode, modifiers: KeyModifiers) -> Vec<Action> {
        let actions = self.state.on_key(KeyEvent::new(code, modifiers), self.now);
        self.draw();
        actions
    }

    pub fn type_text(&mut self, text: &str) {
        for c in text.chars() {
            self.state.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE), self.now);
        }
        self.draw();
    }

    pub fn draw(&mut self) {
        let now = self.now;
        view::draw_frame(&mut self.terminal, &mut self.state, now).unwrap_or_else(|e| match e {});
    }

    pub fn resize(&mut self, width: u16, height: u16) {
        self.terminal.backend_mut().resize(width, height);
        self.terminal.resize(Size::new(width, height)).unwrap_or_else(|e| match e {});
        self.state.resize(width);
        self.draw();
    }

    /// The scrollback, a rule, then the visible screen; trailing spaces cut.
    pub fn text(&self) -> String {
        let backend = self.terminal.backend();
        let mut out = String::new();
        for line in lines(backend.scrollback()) {
            out.push_str(&line);
            out.push('\n');
        }
        out.push_str("════════ screen ════════\n");
        for line in lines(backend.buffer()) {
            out.push_str(&line);
            out.push('\n');
        }
        out
    }

    /// The visible screen only.
    pub fn screen_text(&self) -> String {
        lines(self.terminal.backend().buffer()).join("\n")
    }

    /// Every row ever printed: scrollback then screen.
    pub fn all_text(&self) -> String {
        let backend = self.terminal.backend();
        let mut all = lines(backend.scrollback());
        all.extend(lines(backend.buffer()));
        all.join("\n")
    }
}

impl Screen {
    /// The cell `offset` columns after the start of the first row (scrollback, then screen)
    /// containing `needle` (ASCII rows).
    pub fn cell(&self, needle: &str, offset: usize) -> Option<ratatui::buffer::Cell> {
        let backend = self.terminal.backend();
        for buffer in [backend.scrollback(), backend.buffer()] {
            let width = usize::from(buffer.area.width);
            for row in buffer.content.chunks(width.max(1)) {
                let text: String = row.iter().map(|c| c.symbol()).collect();
                if let Some(at) = text.find(needle) {
                    let column = text[..at].chars().count() + offset;
                    return row.get(column).cloned();
                }
            }
        }
        None
    }
}

fn lines(buffer: &Buffer) -> Vec<String> {
    let width = usize::from(buffer.area.width);
    if width == 0 {
        return Vec::new();
    }
    buffer
        .content
        .chunks(width)
        .map(|row| {
            let mut line = String::new();
            let mut skip = 0;
            for cell in row {
                if skip > 0 {
                    skip -= 1;
                    continue;
                }
                line.push_str(cell.symbol());
                skip = unicode_width::UnicodeWidthStr::width(cell.symbol()).saturating_sub(1);
            }
            line.trim_end().to_string()
        })
        .collect()
}
