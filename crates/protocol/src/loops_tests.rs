#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;

use super::*;

fn every(ms: u64) -> LoopSpec {
    LoopSpec::new("check the deploy", Pacing::Every { interval_ms: ms })
}

#[test]
fn an_interval_outside_one_minute_to_a_day_is_refused_with_the_bounds() {
    assert_eq!(every(60_000).problem(MIN_INTERVAL_MS), None);
    assert_eq!(every(MAX_INTERVAL_MS).problem(MIN_INTERVAL_MS), None);
    assert_eq!(
        every(30_000).problem(MIN_INTERVAL_MS).as_deref(),
        Some("an interval of 30 s is under the minimum of 1 min")
    );
    assert_eq!(
        every(MAX_INTERVAL_MS + 1000).problem(MIN_INTERVAL_MS).as_deref(),
        Some("an interval of 1 d is over the maximum of 1 d")
    );
    // The test knob lowers the minimum.
    assert_eq!(every(1_000).problem(500), None);
    assert_eq!(
        LoopSpec::new(" ", Pacing::SelfPaced).problem(MIN_INTERVAL_MS).as_deref(),
        Some("the loop's prompt is empty")
    );
}

#[test]
fn a_wakeup_is_clamped_to_a_minute_and_an_hour() {
    assert_eq!(clamp_wakeup_ms(5, MIN_INTERVAL_MS), 60_000);
    assert_eq!(clamp_wakeup_ms(600, MIN_INTERVAL_MS), 600_000);
    assert_eq!(clamp_wakeup_ms(86_400, MIN_INTERVAL_MS), MAX_WAKEUP_MS);
    assert_eq!(clamp_wakeup_ms(u64::MAX, MIN_INTERVAL_MS), MAX_WAKEUP_MS);
    assert_eq!(clamp_wakeup_ms(0, 1_000), 1_000);
}

#[test]
fn the_ledger_gives_the_running_loop_with_its_ticks_and_next_due_time() {
    let start = LedgerItem::Meta(Meta::LoopStart(LoopStart { spec: every(60_000), started_ms: 1_000 }));
    let tick = |tick, next_ms| {
        LedgerItem::Meta(Meta::LoopTick(LoopTick { tick, at_ms: next_ms - 60_000, next_ms, reason: None }))
    };
    assert_eq!(LoopState::from_ledger(&[]), None);
    let state = LoopState::from_ledger(std::slice::from_ref(&start)).unwrap();
    assert_eq!((state.ticks, state.next_ms), (0, 1_000), "the first tick is due at once");
    let state = LoopState::from_ledger(&[start.clone(), tick(1, 70_000), tick(2, 140_000)]).unwrap();
    assert_eq!((state.ticks, state.next_ms, state.ended), (2, 140_000, None));
    let ended = LedgerItem::Meta(Meta::LoopEnd { reason: "stopped".into() });
    assert_eq!(LoopState::from_ledger(&[start.clone(), tick(1, 70_000), ended.clone()]), None);
    // A loop started after an ended one is the running one.
    assert_eq!(LoopState::from_ledger(&[start.clone(), ended, start]).unwrap().ticks, 0);
}

#[test]
fn a_loop_ends_at_its_tick_cap_or_its_age() {
    let mut state = LoopState::start(every(60_000), 0);
    assert_eq!(state.cap_reached(1), None);
    assert_eq!(state.cap_reached(MAX_AGE_MS).as_deref(), Some("the loop is 7 d old, its limit"));
    state.ticks = DEFAULT_MAX_TICKS;
    assert_eq!(state.cap_reached(1).as_deref(), Some("all 100 ticks ran"));
}

#[test]
fn durations_read_as_people_write_them() {
    assert_eq!(describe_ms(500), "500 ms");
    assert_eq!(describe_ms(30_000), "30 s");
    assert_eq!(describe_ms(90_000), "90 s");
    assert_eq!(describe_ms(300_000), "5 min");
    assert_eq!(describe_ms(5_400_000), "1 h 30 min");
}
