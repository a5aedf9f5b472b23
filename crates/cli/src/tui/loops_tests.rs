#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use lathe_protocol::loops::{LoopSpec, LoopState, Pacing};
use lathe_protocol::{AgentEvent, AgentOp};
use pretty_assertions::assert_eq;

use super::*;

fn every(prompt: &str, interval_ms: u64) -> LoopCommand {
    LoopCommand::Start(LoopSpec::new(prompt, Pacing::Every { interval_ms }))
}

fn state() -> UiState {
    UiState::new(200, super::super::test_screen::session(), Vec::new(), std::env::temp_dir())
}

fn text(state: &mut UiState) -> String {
    state
        .take_history()
        .iter()
        .map(|row| row.spans.iter().map(|s| s.content.to_string()).collect::<String>() + "\n")
        .collect()
}

#[test]
fn intervals_parse_as_people_write_them() {
    assert_eq!(parse_interval("90s"), Ok(Duration::from_secs(90)));
    assert_eq!(parse_interval("5m"), Ok(Duration::from_secs(300)));
    assert_eq!(parse_interval("1h"), Ok(Duration::from_secs(3600)));
    assert_eq!(parse_interval("1h30m"), Ok(Duration::from_secs(5400)));
    assert_eq!(parse_interval("2s"), Ok(Duration::from_secs(2)));
    let error = parse_interval("5x").unwrap_err();
    assert!(
        error.starts_with("`5x` is not an interval") && error.ends_with("write it as 90s, 5m or 1h"),
        "{error}"
    );
    assert!(parse_interval("5").is_err(), "a number needs its unit");
}

#[test]
fn loop_arguments_are_status_stop_a_paced_prompt_or_a_self_paced_one() {
    assert_eq!(LoopCommand::parse(None), Ok(LoopCommand::Status));
    assert_eq!(LoopCommand::parse(Some("stop")), Ok(LoopCommand::Stop));
    assert_eq!(LoopCommand::parse(Some("5m check the deploy")), Ok(every("check the deploy", 300_000)));
    assert_eq!(LoopCommand::parse(Some("1h  tidy up ")), Ok(every("tidy up", 3_600_000)));
    assert_eq!(
        LoopCommand::parse(Some("watch the CI run until it ends")),
        Ok(LoopCommand::Start(LoopSpec::new("watch the CI run until it ends", Pacing::SelfPaced)))
    );
    assert_eq!(
        LoopCommand::parse(Some("stop the server")),
        Ok(LoopCommand::Start(LoopSpec::new("stop the server", Pacing::SelfPaced)))
    );
    let error = LoopCommand::parse(Some("5x check")).unwrap_err();
    assert!(error.starts_with("loop not started: `5x` is not an interval"), "{error}");
    let error = LoopCommand::parse(Some("5m")).unwrap_err();
    assert!(error.contains("no prompt after the interval"), "{error}");
}

#[test]
fn an_unparsable_interval_starts_nothing_and_says_why() {
    let mut state = state();
    state.input.insert("/loop 10 parsecs check");
    let actions = state.submit(Instant::now());
    assert_eq!(actions, vec![Action::Remember("/loop 10 parsecs check".into())]);
    assert!(text(&mut state).contains("loop not started: `10` is not an interval"));
    assert_eq!(state.looping, None);
}

#[test]
fn a_tick_waits_for_the_dialog_the_turn_and_its_due_time_and_goes_once() {
    let mut state = state();
    state.input.insert("/loop 5m check the deploy");
    let actions = state.submit(Instant::now());
    let spec = LoopSpec::new("check the deploy", Pacing::Every { interval_ms: 300_000 });
    assert_eq!(actions.last(), Some(&Action::Op(AgentOp::StartLoop { spec: spec.clone() })));
    assert_eq!(state.due_tick(u64::MAX), Vec::new(), "nothing runs before the session starts the loop");
    state.on_event(AgentEvent::Loop { state: LoopState::start(spec.clone(), 1_000) }, Instant::now());
    assert_eq!(state.due_tick(999), Vec::new(), "not due yet");
    state.start_turn(Instant::now());
    assert_eq!(state.due_tick(1_000), Vec::new(), "a turn runs");
    state.busy = None;
    state.queued.push_back("a prompt typed meanwhile".into());
    assert_eq!(state.due_tick(1_000), Vec::new(), "a queued prompt goes first");
    state.queued.clear();
    assert_eq!(state.due_tick(1_000), vec![Action::Op(AgentOp::LoopTick)]);
    assert!(text(&mut state).contains("loop tick 1 of 100"));
    assert_eq!(state.due_tick(2_000), Vec::new(), "one tick at a time");
    let mut after = LoopState::start(spec, 1_000);
    after.ticks = 1;
    after.next_ms = 301_000;
    state.on_event(AgentEvent::Loop { state: after }, Instant::now());
    assert_eq!(state.due_tick(300_999), Vec::new());
    assert_eq!(state.due_tick(301_000), vec![Action::Op(AgentOp::LoopTick)]);
}

#[test]
fn esc_stops_the_loop_and_interrupts_a_running_tick() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let mut state = state();
    let spec = LoopSpec::new("check", Pacing::Every { interval_ms: 60_000 });
    state.on_event(AgentEvent::Loop { state: LoopState::start(spec.clone(), 0) }, Instant::now());
    let esc = KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE);
    assert_eq!(state.on_key(esc, Instant::now()), vec![Action::Op(AgentOp::StopLoop)]);
    state.start_turn(Instant::now());
    assert_eq!(
        state.on_key(esc, Instant::now()),
        vec![Action::Op(AgentOp::Cancel), Action::Op(AgentOp::StopLoop)]
    );
    let mut ended = LoopState::start(spec, 0);
    ended.ended = Some("stopped by the user".into());
    state.on_event(AgentEvent::Loop { state: ended }, Instant::now());
    assert_eq!(state.on_key(esc, Instant::now()), vec![Action::Op(AgentOp::Cancel)]);
    state.busy = None;
    text(&mut state);
    state.input.insert("/loop");
    state.submit(Instant::now());
    assert!(text(&mut state).contains("ended after 0 ticks: stopped by the user"));
}
