use super::*;
use crossterm::event::{KeyEventKind, KeyEventState};
use lathe_protocol::AgentEvent;
use lathe_protocol::plan::PlanReady;
use pretty_assertions::assert_eq;

fn state() -> UiState {
    let mut state = UiState::new(70, super::super::test_screen::session(), Vec::new(), std::env::temp_dir());
    state.start_turn(Instant::now());
    state
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent { code, modifiers: KeyModifiers::NONE, kind: KeyEventKind::Press, state: KeyEventState::NONE }
}

fn present(state: &mut UiState) {
    let ready = PlanReady {
        call_id: "call_plan".into(),
        plan: "# Fix\n1. Swap the operands.\n2. Run the tests.".into(),
        plan_file: Some("/home/u/.lathe/plans/s.md".into()),
    };
    state.on_event(AgentEvent::PlanReady(ready), Instant::now());
}

fn text(rows: &[Line<'static>]) -> String {
    rows.iter()
        .map(|row| row.spans.iter().map(|span| span.content.as_ref()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_presented_plan_goes_to_the_transcript_and_opens_the_dialog() {
    let mut state = state();
    present(&mut state);
    let transcript = text(&state.take_history());
    assert!(transcript.contains("● Plan"), "{transcript}");
    assert!(transcript.contains("1. Swap the operands."), "{transcript}");
    let Some(dialog) = state.plan.as_ref() else { panic!("the plan dialog is open") };
    let (rows, cursor) = dialog.rows(70, 20);
    let shown = text(&rows);
    for line in [
        "Plan ready. Run it?",
        "saved to /home/u/.lathe/plans/s.md",
        "› 1 run it, edits accepted",
        "  2 run it, ask per edit",
        "  3 keep planning (with feedback)",
    ] {
        assert!(shown.contains(line), "`{line}` in:\n{shown}");
    }
    assert_eq!(cursor, None);
    let (rows, _) = dialog.rows(70, 4);
    assert!(text(&rows).contains("3 keep planning"), "the choices stay when space is short");
}

#[test]
fn running_the_plan_leaves_plan_mode_explicitly_then_approves() {
    let mut state = state();
    state.session.mode = Some(PermissionMode::Plan);
    present(&mut state);
    let actions = state.on_key(key(KeyCode::Char('1')), Instant::now());
    assert_eq!(
        actions,
        vec![
            Action::SetMode(PermissionMode::AcceptEdits),
            Action::Op(AgentOp::PlanAnswer { call_id: "call_plan".into(), answer: PlanAnswer::Approve }),
        ]
    );
    assert_eq!(state.session.mode, Some(PermissionMode::AcceptEdits));
    assert!(state.plan.is_none());

    present(&mut state);
    state.on_key(key(KeyCode::Down), Instant::now());
    let actions = state.on_key(key(KeyCode::Enter), Instant::now());
    assert_eq!(actions.first(), Some(&Action::SetMode(PermissionMode::Default)));
}

#[test]
fn keep_planning_takes_a_line_of_feedback_and_keeps_the_mode() {
    let mut state = state();
    state.session.mode = Some(PermissionMode::Plan);
    present(&mut state);
    assert_eq!(state.on_key(key(KeyCode::Char('3')), Instant::now()), Vec::new());
    for c in "add testz".chars() {
        state.on_key(key(KeyCode::Char(c)), Instant::now());
    }
    state.on_key(key(KeyCode::Backspace), Instant::now());
    state.on_paste("s\nfirst", Instant::now());
    let (rows, cursor) = state.plan.as_ref().map(|plan| plan.rows(70, 20)).unwrap_or_default();
    assert!(text(&rows).contains("› add tests first"), "{}", text(&rows));
    assert!(cursor.is_some());
    let actions = state.on_key(key(KeyCode::Enter), Instant::now());
    let answer = PlanAnswer::KeepPlanning { feedback: "add tests first".into() };
    assert_eq!(actions, vec![Action::Op(AgentOp::PlanAnswer { call_id: "call_plan".into(), answer })]);
    assert_eq!(state.session.mode, Some(PermissionMode::Plan));
}

#[test]
fn esc_on_the_feedback_line_goes_back_and_esc_keeps_planning() {
    let mut dialog = PlanDialog::new("call_plan".into(), None);
    assert_eq!(dialog.key(key(KeyCode::Char('3'))), None);
    assert_eq!(dialog.key(key(KeyCode::Esc)), None);
    assert_eq!(dialog.feedback, None);
    assert_eq!(dialog.key(key(KeyCode::Esc)), Some(PlanChoice::KeepPlanning(String::new())));
}

#[test]
fn slash_plan_switches_to_plan_mode_and_sends_the_task() {
    let mut state = UiState::new(70, super::super::test_screen::session(), Vec::new(), std::env::temp_dir());
    state.input.insert("/plan");
    let actions = state.submit(Instant::now());
    assert_eq!(actions, vec![Action::Remember("/plan".into()), Action::SetMode(PermissionMode::Plan)]);
    assert_eq!(state.session.mode, Some(PermissionMode::Plan));
    assert!(!state.is_busy());

    state.input.insert("/plan swap the operands");
    let actions = state.submit(Instant::now());
    assert_eq!(
        actions,
        vec![
            Action::Remember("/plan swap the operands".into()),
            Action::SetMode(PermissionMode::Plan),
            Action::Prompt("swap the operands".into()),
        ]
    );
    assert!(state.is_busy());
}

#[test]
fn plan_dialog_on_screen() {
    let mut screen = super::super::test_screen::Screen::new(70, 16);
    screen.state.session.mode = Some(PermissionMode::Plan);
    screen.state.show_prompt("swap the operands");
    screen.state.start_turn(screen.now);
    screen.event(AgentEvent::PlanReady(PlanReady {
        call_id: "call_plan".into(),
        plan: "# Swap the operands\n\n1. In `src/lib.rs`, change `a + b` to `b + a`.\n2. Run the tests."
            .into(),
        plan_file: Some("/home/dev/.lathe/plans/0193a5c0.md".into()),
    }));
    insta::assert_snapshot!("plan_dialog", screen.text());
    screen.key(KeyCode::Char('3'));
    screen.type_text("also update the README");
    insta::assert_snapshot!("plan_feedback", screen.screen_text());
}
