//! The live status line of headless text mode: while the model works or a tool runs, one line on
//! stderr (only when stderr is a terminal) says what is happening, for how long, and how much the
//! model has written: `⠹ model writing · 12 s · ~140 tokens` / `⠹ shell cargo test · 3 s`.
//!
//! The line is redrawn in place (`\r` + erase line) on a timer and on events, and erased before
//! anything else is printed, so it never ends up in the output.

use std::io::Write;
use std::time::Instant;

use lathe_protocol::AgentEvent;

/// Spinner frames, one per redraw.
const FRAMES: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/// Characters per token for the estimate shown (the usual ~4 for English and code).
const CHARS_PER_TOKEN: u64 = 4;

/// What is happening now.
#[derive(Debug, Clone, PartialEq)]
enum Phase {
    /// Nothing to show (before the run, between events that need no line).
    Idle,
    /// Waiting for or streaming a model response.
    Model { since: Instant, chars: u64 },
    /// A tool call is running.
    Tool { since: Instant, label: String },
}

/// The status line. Disabled (every method a no-op) when stderr is not a terminal.
#[derive(Debug)]
pub struct StatusLine {
    enabled: bool,
    phase: Phase,
    frame: usize,
    /// Whether the line is on the screen now.
    shown: bool,
}

impl StatusLine {
    /// A status line drawn only when `enabled` (text mode with stderr on a terminal).
    pub fn new(enabled: bool) -> StatusLine {
        StatusLine { enabled, phase: Phase::Idle, frame: 0, shown: false }
    }

    /// Whether the line is drawn at all (the caller only needs a timer then).
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Follows `event`: a turn starts the model phase, streamed output counts, a call starts the
    /// tool phase, its result goes back to the model phase, the end of the run hides the line.
    pub fn observe(&mut self, event: &AgentEvent) {
        let now = Instant::now();
        if let AgentEvent::OutputProgress { chars } = event {
            match &mut self.phase {
                Phase::Model { chars: shown, .. } => *shown = *chars,
                Phase::Idle | Phase::Tool { .. } => self.phase = Phase::Model { since: now, chars: *chars },
            }
        } else if let AgentEvent::ToolCallStarted { call, summary } = event {
            let label = format!("{} {}", call.name, crate::print::cut(summary, 60));
            self.phase = Phase::Tool { since: now, label };
        } else if matches!(event, AgentEvent::TurnStarted { .. } | AgentEvent::ToolResult { .. }) {
            self.phase = Phase::Model { since: now, chars: 0 };
        } else if matches!(event, AgentEvent::Finished { .. }) {
            self.phase = Phase::Idle;
        }
    }

    /// The line's text for the current phase, `None` when idle.
    fn text(&self, now: Instant) -> Option<String> {
        let spinner = FRAMES[self.frame % FRAMES.len()];
        match &self.phase {
            Phase::Idle => None,
            Phase::Model { since, chars: 0 } => {
                let seconds = now.duration_since(*since).as_secs();
                Some(format!("{spinner} waiting for the model · {seconds} s"))
            }
            Phase::Model { since, chars } => {
                let seconds = now.duration_since(*since).as_secs();
                let tokens = chars.div_ceil(CHARS_PER_TOKEN);
                Some(format!("{spinner} model writing · {seconds} s · ~{tokens} tokens"))
            }
            Phase::Tool { since, label } => {
                let seconds = now.duration_since(*since).as_secs();
                Some(format!("{spinner} {label} · {seconds} s"))
            }
        }
    }

    /// Redraws the line (advancing the spinner).
    pub fn draw(&mut self) {
        if !self.enabled {
            return;
        }
        self.frame += 1;
        let mut err = std::io::stderr().lock();
        match self.text(Instant::now()) {
            Some(text) => {
                let _ = write!(err, "\r\x1b[2K{text}");
                self.shown = true;
            }
            None if self.shown => {
                let _ = write!(err, "\r\x1b[2K");
                self.shown = false;
            }
            None => {}
        }
        let _ = err.flush();
    }

    /// Erases the line so other output can be printed.
    pub fn clear(&mut self) {
        if self.enabled && self.shown {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
            self.shown = false;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use lathe_protocol::ToolCall;
    use serde_json::json;

    #[test]
    fn phases_follow_the_events() {
        let mut line = StatusLine::new(false);
        let now = Instant::now();
        assert_eq!(line.text(now), None);
        line.observe(&AgentEvent::TurnStarted { turn: 1 });
        let text = line.text(Instant::now()).unwrap();
        assert!(text.ends_with("waiting for the model · 0 s"), "{text}");
        line.observe(&AgentEvent::OutputProgress { chars: 41 });
        let text = line.text(Instant::now()).unwrap();
        assert!(text.ends_with("model writing · 0 s · ~11 tokens"), "{text}");
        let call = ToolCall {
            id: "c".into(),
            name: "shell".into(),
            arguments: json!({"command": "cargo test"}),
            incomplete: None,
        };
        line.observe(&AgentEvent::ToolCallStarted { call, summary: "cargo test".into() });
        let text = line.text(Instant::now()).unwrap();
        assert!(text.contains("shell cargo test · 0 s"), "{text}");
    }
}
