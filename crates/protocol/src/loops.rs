//! Loops (`/loop <interval> <prompt>` in the terminal UI): one prompt sent again and again, each
//! time as a normal user turn (a *tick*), either at a fixed interval or when the model asks for
//! the next one with the `schedule_wakeup` tool (a *self-paced* loop, which ends when a tick makes
//! no such call). A loop ends at its tick cap, its age cap, the session's cost budget or when the
//! user stops it. The loop, each tick and its end are ledger items ([`crate::Meta::LoopStart`],
//! [`crate::Meta::LoopTick`], [`crate::Meta::LoopEnd`]), so [`LoopState::from_ledger`] finds a
//! loop a killed session left running; front ends get [`LoopState`] in
//! [`crate::AgentEvent::Loop`] and ask for each tick with [`crate::AgentOp::LoopTick`] — a tick is
//! its own kind of input and never passes through what answers a permission prompt.

use serde::{Deserialize, Serialize};

use crate::ledger::LedgerItem;
use crate::meta::Meta;

/// Shortest interval of a loop, in ms (1 minute); the user config's `[loop] min_interval_ms`
/// lowers it (a test knob).
pub const MIN_INTERVAL_MS: u64 = 60_000;
/// Longest interval of a loop, in ms (24 hours).
pub const MAX_INTERVAL_MS: u64 = 24 * 60 * 60 * 1000;
/// Longest delay `schedule_wakeup` may ask for, in ms (1 hour); shorter ones are raised to the
/// minimum interval.
pub const MAX_WAKEUP_MS: u64 = 60 * 60 * 1000;
/// Ticks a loop runs at most unless told otherwise.
pub const DEFAULT_MAX_TICKS: u32 = 100;
/// Age at which a loop ends, in ms (7 days).
pub const MAX_AGE_MS: u64 = 7 * 24 * 60 * 60 * 1000;
/// The name of the tool a self-paced loop's tick schedules the next tick with.
pub const SCHEDULE_WAKEUP: &str = "schedule_wakeup";

/// When the next tick comes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pacing {
    /// Every `interval_ms` after the end of the previous tick.
    Every {
        /// The interval, in ms.
        interval_ms: u64,
    },
    /// When the model asks (`schedule_wakeup`); a tick without that call ends the loop.
    SelfPaced,
}

/// What the user asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoopSpec {
    /// The prompt each tick sends.
    pub prompt: String,
    /// When the next tick comes.
    pub pacing: Pacing,
    /// Ticks before the loop ends.
    pub max_ticks: u32,
    /// Age at which the loop ends, in ms.
    pub max_age_ms: u64,
}

impl LoopSpec {
    /// A loop of `prompt` with `pacing` and the default caps.
    pub fn new(prompt: impl Into<String>, pacing: Pacing) -> LoopSpec {
        LoopSpec { prompt: prompt.into(), pacing, max_ticks: DEFAULT_MAX_TICKS, max_age_ms: MAX_AGE_MS }
    }

    /// Why the loop cannot start, if it cannot: an empty prompt, no ticks, or an interval outside
    /// `min_interval_ms` ..= [`MAX_INTERVAL_MS`].
    pub fn problem(&self, min_interval_ms: u64) -> Option<String> {
        if self.prompt.trim().is_empty() {
            return Some("the loop's prompt is empty".into());
        }
        if self.max_ticks == 0 {
            return Some("the loop needs at least 1 tick".into());
        }
        match self.pacing {
            Pacing::Every { interval_ms } if interval_ms < min_interval_ms => Some(format!(
                "an interval of {} is under the minimum of {}",
                describe_ms(interval_ms),
                describe_ms(min_interval_ms)
            )),
            Pacing::Every { interval_ms } if interval_ms > MAX_INTERVAL_MS => Some(format!(
                "an interval of {} is over the maximum of {}",
                describe_ms(interval_ms),
                describe_ms(MAX_INTERVAL_MS)
            )),
            Pacing::Every { .. } | Pacing::SelfPaced => None,
        }
    }
}

/// The ledger record of a loop's start ([`crate::Meta::LoopStart`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoopStart {
    /// What the user asked for.
    pub spec: LoopSpec,
    /// Milliseconds since the Unix epoch.
    pub started_ms: u64,
}

/// The ledger record of one tick's end ([`crate::Meta::LoopTick`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoopTick {
    /// 1-based tick.
    pub tick: u32,
    /// When the tick ended, in ms since the Unix epoch.
    pub at_ms: u64,
    /// When the next tick is due, in ms since the Unix epoch.
    pub next_ms: u64,
    /// The model's reason for the delay it asked for (self-paced loops).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A loop as front ends show it, and as the session keeps it between ticks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoopState {
    /// What the user asked for.
    pub spec: LoopSpec,
    /// When the loop started, in ms since the Unix epoch.
    pub started_ms: u64,
    /// Ticks run so far.
    pub ticks: u32,
    /// When the next tick is due, in ms since the Unix epoch.
    pub next_ms: u64,
    /// Why the loop ended; `None` while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<String>,
}

impl LoopState {
    /// A loop that starts at `started_ms`, its first tick due at once.
    pub fn start(spec: LoopSpec, started_ms: u64) -> LoopState {
        LoopState { spec, started_ms, ticks: 0, next_ms: started_ms, ended: None }
    }

    /// The loop the ledger holds as running: its last start with no end after it, with the ticks
    /// it ran and the time its next tick is due.
    pub fn from_ledger(items: &[LedgerItem]) -> Option<LoopState> {
        let at = items.iter().rposition(|item| matches!(item, LedgerItem::Meta(Meta::LoopStart(_))))?;
        let LedgerItem::Meta(Meta::LoopStart(start)) = &items[at] else { return None };
        let mut state = LoopState::start(start.spec.clone(), start.started_ms);
        for item in &items[at + 1..] {
            match item {
                LedgerItem::Meta(Meta::LoopEnd { .. }) => return None,
                LedgerItem::Meta(Meta::LoopTick(tick)) => {
                    state.ticks = tick.tick;
                    state.next_ms = tick.next_ms;
                }
                _ => {}
            }
        }
        Some(state)
    }

    /// Why the loop must end before its next tick at `now_ms`, if it must: its tick cap or its
    /// age cap.
    pub fn cap_reached(&self, now_ms: u64) -> Option<String> {
        if self.ticks >= self.spec.max_ticks {
            return Some(format!("all {} ticks ran", self.spec.max_ticks));
        }
        if now_ms.saturating_sub(self.started_ms) >= self.spec.max_age_ms {
            return Some(format!("the loop is {} old, its limit", describe_ms(self.spec.max_age_ms)));
        }
        None
    }
}

/// The delay a `schedule_wakeup` call asked for, clamped to `min_interval_ms` ..=
/// [`MAX_WAKEUP_MS`] (normally 60 s to 1 h).
pub fn clamp_wakeup_ms(delay_seconds: u64, min_interval_ms: u64) -> u64 {
    delay_seconds.saturating_mul(1000).clamp(min_interval_ms.min(MAX_WAKEUP_MS), MAX_WAKEUP_MS)
}

/// A duration in ms the way messages show it: `90 s`, `5 min`, `1 h 30 min`, `7 d`, `500 ms`.
pub fn describe_ms(ms: u64) -> String {
    if ms < 1000 {
        return format!("{ms} ms");
    }
    let seconds = ms / 1000;
    if seconds < 120 && !seconds.is_multiple_of(60) || seconds < 60 {
        return format!("{seconds} s");
    }
    let (days, hours, minutes) = (seconds / 86_400, seconds % 86_400 / 3600, seconds % 3600 / 60);
    let parts: Vec<String> = [(days, "d"), (hours, "h"), (minutes, "min")]
        .into_iter()
        .filter(|(count, _)| *count > 0)
        .map(|(count, unit)| format!("{count} {unit}"))
        .collect();
    parts.join(" ")
}

#[cfg(test)]
#[path = "loops_tests.rs"]
mod tests;
