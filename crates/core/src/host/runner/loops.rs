//! The loop ops of the session task ([`lathe_protocol::loops`]): start, stop, and run a tick when
//! the front end asks for one. Order of a tick: end the loop if a cap is reached (ticks, age) →
//! offer `schedule_wakeup` for a self-paced loop → run the prompt as a normal turn
//! ([`TurnKind::Tick`], under the session's cost budget) → record the tick with the time the next
//! one is due (a fixed interval after the tick, or the delay the model asked for) → end the loop
//! when the budget ran out, the tick cap is reached or a self-paced tick asked for no wakeup. Each
//! change is a ledger item and an [`AgentEvent::Loop`]. A resumed interactive session takes up the
//! loop its ledger holds as running.

use std::sync::Arc;

use lathe_protocol::loops::{LoopSpec, LoopStart, LoopState, LoopTick, MIN_INTERVAL_MS, Pacing};
use lathe_protocol::{AgentEvent, LedgerItem, Meta, StopCause, UserMessage};

use super::{Flow, Runner, TurnKind};
use crate::clock::now_ms;
use crate::wakeup::ScheduleWakeup;

impl Runner {
    /// The shortest interval and wakeup delay (`[loop] min_interval_ms`, default one minute).
    fn min_interval_ms(&self) -> u64 {
        self.config.layer.r#loop.min_interval_ms.unwrap_or(MIN_INTERVAL_MS)
    }

    /// Takes up the loop a resumed session's ledger holds as running (interactive sessions only:
    /// print mode runs no loop).
    pub(super) fn restore_loop(&mut self) {
        let Some(state) = LoopState::from_ledger(self.agent.ledger()) else { return };
        if self.approver.is_none() {
            self.warn(format!(
                "the session has a running loop (\"{}\"); it runs in the terminal UI only",
                state.spec.prompt
            ));
            return;
        }
        let _ = self.events.send(AgentEvent::Loop { state: state.clone() });
        self.looping = Some(state);
    }

    /// Starts a loop, unless its spec has a problem or one already runs.
    pub(super) fn start_loop(&mut self, spec: LoopSpec) {
        if let Some(problem) = spec.problem(self.min_interval_ms()) {
            self.warn(format!("loop not started: {problem}"));
            return;
        }
        if self.looping.is_some() {
            self.warn(
                "loop not started: a loop is already running (/loop shows it, /loop stop ends it)".into(),
            );
            return;
        }
        let state = LoopState::start(spec.clone(), now_ms());
        self.agent
            .append(LedgerItem::Meta(Meta::LoopStart(LoopStart { spec, started_ms: state.started_ms })));
        self.agent.sync();
        let _ = self.events.send(AgentEvent::Loop { state: state.clone() });
        self.looping = Some(state);
    }

    /// Ends the running loop for `reason`.
    pub(super) fn stop_loop(&mut self, reason: &str) {
        match self.looping.take() {
            Some(state) => self.end_loop(state, reason.to_string()),
            None => self.warn("loop: no loop is running".into()),
        }
    }

    fn end_loop(&mut self, mut state: LoopState, reason: String) {
        self.agent.append(LedgerItem::Meta(Meta::LoopEnd { reason: reason.clone() }));
        self.agent.sync();
        state.ended = Some(reason);
        let _ = self.events.send(AgentEvent::Loop { state });
    }

    /// Runs the loop's next tick (see the module docs for the order).
    pub(super) async fn loop_tick(&mut self) -> Flow {
        let Some(state) = self.looping.take() else {
            self.warn("loop: no loop is running".into());
            return Flow::Continue;
        };
        if let Some(reason) = state.cap_reached(now_ms()) {
            self.end_loop(state, reason);
            return Flow::Continue;
        }
        let wakeup = match state.spec.pacing {
            Pacing::SelfPaced => Some(ScheduleWakeup::new(self.min_interval_ms())),
            Pacing::Every { .. } => None,
        };
        let saved = wakeup.as_ref().map(|tool| {
            let mut tools = self.agent.tools().clone();
            tools.register(Arc::new(tool.clone()));
            self.agent.replace_tools(tools)
        });
        let (flow, cause) = self.turn(UserMessage::text(state.spec.prompt.clone()), TurnKind::Tick).await;
        if let Some(tools) = saved {
            self.agent.replace_tools(tools);
        }
        let mut state = state;
        state.ticks += 1;
        let now = now_ms();
        let (next_ms, reason, done) = match (state.spec.pacing, wakeup.and_then(|tool| tool.take())) {
            (Pacing::Every { interval_ms }, _) => (now.saturating_add(interval_ms), None, None),
            (Pacing::SelfPaced, Some(wakeup)) => {
                (now.saturating_add(wakeup.delay_ms), Some(wakeup.reason), None)
            }
            (Pacing::SelfPaced, None) => (now, None, Some("done: the tick scheduled no wakeup".to_string())),
        };
        state.next_ms = next_ms;
        self.agent.append(LedgerItem::Meta(Meta::LoopTick(LoopTick {
            tick: state.ticks,
            at_ms: now,
            next_ms,
            reason,
        })));
        let end = if let StopCause::Budget { detail } = &cause {
            Some(format!("the session's cost budget ran out ({detail})"))
        } else if state.ticks >= state.spec.max_ticks {
            state.cap_reached(now)
        } else {
            done
        };
        match end {
            Some(reason) => self.end_loop(state, reason),
            None => {
                self.agent.sync();
                let _ = self.events.send(AgentEvent::Loop { state: state.clone() });
                self.looping = Some(state);
            }
        }
        flow
    }
}
