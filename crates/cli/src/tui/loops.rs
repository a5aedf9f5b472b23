//! `/loop` in the terminal UI. `/loop 5m PROMPT` runs PROMPT now and every 5 minutes (intervals
//! as people write them: `90s`, `5m`, `1h`; the session refuses one outside 1 minute to 24 hours),
//! `/loop PROMPT` lets the model pace it (`schedule_wakeup`; a tick without that call ends it),
//! `/loop stop` and Esc end it, `/loop` alone shows its state. The session keeps the loop (in the
//! ledger) and runs each tick; the UI says when one is due: [`UiState::due_tick`] sends
//! [`AgentOp::LoopTick`] — its own kind of input, never a key, so it cannot answer a permission
//! dialog — only when no turn runs and no dialog, picker, `!command` or queued prompt is open; a
//! tick due meanwhile waits.

use std::time::{Duration, Instant};

use lathe_protocol::AgentOp;
use lathe_protocol::loops::{LoopSpec, LoopState, Pacing, describe_ms};

use super::cells::NoticeKind;
use super::state::{Action, UiState};

/// What `/loop ARGUMENT` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoopCommand {
    /// `/loop`: show the state.
    Status,
    /// `/loop stop`.
    Stop,
    /// `/loop [interval] PROMPT`.
    Start(LoopSpec),
}

/// The form `/loop` takes, for error messages.
const USAGE: &str = "/loop 5m PROMPT runs PROMPT every 5 minutes (90s, 5m, 1h; from 1 minute to 24 hours); \
                     /loop PROMPT lets the model pace it";

/// Parses an interval as people write it (`90s`, `5m`, `1h`, `1h 30m`).
pub fn parse_interval(text: &str) -> Result<Duration, String> {
    humantime::parse_duration(text)
        .map_err(|error| format!("`{text}` is not an interval ({error}); write it as 90s, 5m or 1h"))
}

impl LoopCommand {
    /// Parses the argument of `/loop`: nothing, `stop`, or a prompt with an interval in front (a
    /// first word that starts with a digit is the interval and must parse) or without one
    /// (self-paced).
    pub fn parse(argument: Option<&str>) -> Result<LoopCommand, String> {
        let Some(argument) = argument.map(str::trim).filter(|argument| !argument.is_empty()) else {
            return Ok(LoopCommand::Status);
        };
        if argument == "stop" {
            return Ok(LoopCommand::Stop);
        }
        let (first, rest) = argument.split_once(char::is_whitespace).unwrap_or((argument, ""));
        if !first.starts_with(|c: char| c.is_ascii_digit()) {
            return Ok(LoopCommand::Start(LoopSpec::new(argument, Pacing::SelfPaced)));
        }
        let interval = parse_interval(first).map_err(|error| format!("loop not started: {error}"))?;
        let prompt = rest.trim();
        if prompt.is_empty() {
            return Err(format!("loop not started: no prompt after the interval; {USAGE}"));
        }
        let interval_ms = u64::try_from(interval.as_millis()).unwrap_or(u64::MAX);
        Ok(LoopCommand::Start(LoopSpec::new(prompt, Pacing::Every { interval_ms })))
    }
}

/// Now, in ms since the Unix epoch (the clock a loop's due times are on).
pub fn wall_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| u64::try_from(since.as_millis()).unwrap_or(u64::MAX))
}

/// `14:05:09` (local time) for a time in ms since the Unix epoch.
fn clock(ms: u64) -> String {
    use chrono::TimeZone;
    match chrono::Local.timestamp_millis_opt(i64::try_from(ms).unwrap_or(0)) {
        chrono::LocalResult::Single(time) | chrono::LocalResult::Ambiguous(time, _) => {
            time.format("%H:%M:%S").to_string()
        }
        chrono::LocalResult::None => String::new(),
    }
}

/// How a loop is paced, in words.
fn pacing(state: &LoopState) -> String {
    match state.spec.pacing {
        Pacing::Every { interval_ms } => format!("every {}", describe_ms(interval_ms)),
        Pacing::SelfPaced => "paced by the model".to_string(),
    }
}

impl UiState {
    /// Whether a loop runs.
    pub(super) fn loop_running(&self) -> bool {
        self.looping.as_ref().is_some_and(|state| state.ended.is_none())
    }

    /// Esc ends a running loop (and, while a turn runs, interrupts it too).
    pub(super) fn stop_loop_on_escape(&mut self, now: Instant) -> Vec<Action> {
        if !self.loop_running() {
            return Vec::new();
        }
        self.flash("loop stopped", now);
        vec![Action::Op(AgentOp::StopLoop)]
    }

    /// Carries out `/loop ARGUMENT`.
    pub(super) fn loop_command(&mut self, argument: Option<&str>, now: Instant) -> Vec<Action> {
        let command = match LoopCommand::parse(argument) {
            Ok(command) => command,
            Err(message) => {
                self.push_notice(NoticeKind::Warning, &message);
                return Vec::new();
            }
        };
        match command {
            LoopCommand::Status => {
                let text = match &self.looping {
                    Some(state) if state.ended.is_none() => format!(
                        "loop: \"{}\" {} · {} of {} ticks run · next at {} · /loop stop or esc ends it",
                        state.spec.prompt,
                        pacing(state),
                        state.ticks,
                        state.spec.max_ticks,
                        clock(state.next_ms)
                    ),
                    Some(state) => format!(
                        "loop: \"{}\" ended after {} ticks: {}",
                        state.spec.prompt,
                        state.ticks,
                        state.ended.as_deref().unwrap_or_default()
                    ),
                    None => format!("no loop; {USAGE}"),
                };
                self.push_notice(NoticeKind::Info, &text);
                Vec::new()
            }
            LoopCommand::Stop if !self.loop_running() => {
                self.push_notice(NoticeKind::Warning, "no loop is running");
                Vec::new()
            }
            LoopCommand::Stop => {
                self.flash("loop stopped", now);
                vec![Action::Op(AgentOp::StopLoop)]
            }
            LoopCommand::Start(spec) => vec![Action::Op(AgentOp::StartLoop { spec })],
        }
    }

    /// The tick to run at `now_ms`, when one is due and nothing else is going on (see the module
    /// docs); shows its prompt.
    pub fn due_tick(&mut self, now_ms: u64) -> Vec<Action> {
        let Some(state) = self.looping.as_ref().filter(|state| state.ended.is_none()) else {
            return Vec::new();
        };
        let waiting = self.tick_sent
            || self.is_busy()
            || self.dialog.is_some()
            || self.overlay.is_some()
            || self.shell.is_some()
            || !self.queued.is_empty();
        if waiting || now_ms < state.next_ms {
            return Vec::new();
        }
        let prompt = state.spec.prompt.clone();
        let text = format!("loop tick {} of {}", state.ticks + 1, state.spec.max_ticks);
        self.tick_sent = true;
        self.push_notice(NoticeKind::Info, &text);
        self.show_prompt(&prompt);
        vec![Action::Op(AgentOp::LoopTick)]
    }

    /// Shows the loop's state as the session reported it.
    pub(super) fn loop_event(&mut self, state: LoopState) {
        self.tick_sent = false;
        let text = match (&state.ended, state.ticks) {
            (Some(reason), ticks) => format!("loop ended after {ticks} ticks: {reason}"),
            (None, 0) => format!(
                "loop: \"{}\" {}; the first tick is due at {} (/loop stop or esc ends it)",
                state.spec.prompt,
                pacing(&state),
                clock(state.next_ms)
            ),
            (None, ticks) => format!("loop: tick {ticks} done; the next is due at {}", clock(state.next_ms)),
        };
        self.push_notice(NoticeKind::Info, &text);
        self.looping = Some(state);
    }
}

#[cfg(test)]
#[path = "loops_tests.rs"]
mod tests;
