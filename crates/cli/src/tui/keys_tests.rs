use super::*;
use crossterm::event::KeyEventState;
use lathe_protocol::PermissionMode;
use lathe_protocol::{AgentEvent, FileRewind, RewindAction, UserTurn};
use pretty_assertions::assert_eq;

fn state() -> UiState {
    UiState::new(60, super::super::test_screen::session(), vec!["earlier".into()], std::env::temp_dir())
}

fn key(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
    KeyEvent { code, modifiers, kind: KeyEventKind::Press, state: KeyEventState::NONE }
}

#[test]
fn shift_enter_and_ctrl_j_insert_newlines_enter_submits() {
    let mut state = state();
    let now = Instant::now();
    state.on_key(key(KeyCode::Char('a'), KeyModifiers::NONE), now);
    state.on_key(key(KeyCode::Enter, KeyModifiers::SHIFT), now);
    state.on_key(key(KeyCode::Char('b'), KeyModifiers::NONE), now);
    state.on_key(key(KeyCode::Char('j'), KeyModifiers::CONTROL), now);
    state.on_key(key(KeyCode::Char('c'), KeyModifiers::NONE), now);
    assert_eq!(state.input.text(), "a\nb\nc");
    let actions = state.on_key(key(KeyCode::Enter, KeyModifiers::NONE), now);
    assert_eq!(actions, vec![Action::Remember("a\nb\nc".into()), Action::Prompt("a\nb\nc".into())]);
}

#[test]
fn a_trailing_backslash_continues_the_line() {
    let mut state = state();
    let now = Instant::now();
    state.input.insert("one\\");
    assert_eq!(state.on_key(key(KeyCode::Enter, KeyModifiers::NONE), now), Vec::new());
    assert_eq!(state.input.text(), "one\n");
}

#[test]
fn bang_runs_a_shell_command() {
    let mut state = state();
    state.input.insert("!ls -la");
    let actions = state.submit(Instant::now());
    assert_eq!(actions, vec![Action::Remember("!ls -la".into()), Action::Shell("ls -la".into())]);
    assert!(state.shell.is_some());
}

#[test]
fn up_recalls_history_and_release_events_are_ignored() {
    let mut state = state();
    let now = Instant::now();
    state.on_key(key(KeyCode::Up, KeyModifiers::NONE), now);
    assert_eq!(state.input.text(), "earlier");
    let mut release = key(KeyCode::Char('x'), KeyModifiers::NONE);
    release.kind = KeyEventKind::Release;
    state.on_key(release, now);
    assert_eq!(state.input.text(), "earlier");
}

#[test]
fn slash_completion_runs_the_chosen_command_on_enter() {
    let mut state = state();
    let now = Instant::now();
    for c in "/he".chars() {
        state.on_key(key(KeyCode::Char(c), KeyModifiers::NONE), now);
    }
    assert!(state.completion.is_some());
    let actions = state.on_key(key(KeyCode::Enter, KeyModifiers::NONE), now);
    assert_eq!(actions, vec![Action::Remember("/help".into())]);
    assert!(state.take_history().iter().any(|row| row.spans.iter().any(|s| s.content.contains("Commands"))));
}

#[test]
fn rewind_goes_through_the_picker_and_a_confirmation_listing_the_files() {
    let mut state = state();
    let now = Instant::now();
    state.input.insert("/rewind");
    assert_eq!(state.submit(now), vec![Action::Remember("/rewind".into()), Action::ListTurns]);
    let file = |path: &str, action| FileRewind { path: path.into(), action };
    state.on_event(
        AgentEvent::UserTurns {
            turns: vec![
                UserTurn {
                    turn: 1,
                    prompt: "create the file".into(),
                    files: vec![file("/w/a.txt", RewindAction::Delete)],
                },
                UserTurn {
                    turn: 2,
                    prompt: "now edit it".into(),
                    files: vec![file("/w/a.txt", RewindAction::Restore)],
                },
            ],
        },
        now,
    );
    state.on_key(key(KeyCode::Up, KeyModifiers::NONE), now);
    assert_eq!(state.on_key(key(KeyCode::Enter, KeyModifiers::NONE), now), Vec::new());
    let Some(Overlay::Rewind(confirm)) = &state.overlay else {
        panic!("no confirmation: {:?}", state.overlay)
    };
    assert_eq!(confirm.files, vec![("/w/a.txt".to_string(), "deleted".to_string())]);
    assert_eq!(state.on_key(key(KeyCode::Char('y'), KeyModifiers::NONE), now), vec![Action::Rewind(1)]);
    assert!(state.overlay.is_none());
    state.on_event(
        AgentEvent::Rewound {
            turn: 1,
            prompt: "create the file".into(),
            files: vec![file("/w/a.txt", RewindAction::Delete)],
        },
        now,
    );
    assert_eq!(state.input.text(), "create the file");
}

#[test]
fn enter_on_a_command_typed_in_full_runs_it_not_a_longer_one() {
    let mut state = state();
    let now = Instant::now();
    for c in "/mode".chars() {
        state.on_key(key(KeyCode::Char(c), KeyModifiers::NONE), now);
    }
    assert!(state.completion.is_some(), "the list offers /mode and /model");
    let actions = state.on_key(key(KeyCode::Enter, KeyModifiers::NONE), now);
    assert_eq!(actions, vec![Action::Remember("/mode".into())]);
    let notices = state.take_history();
    assert!(
        notices.iter().any(|row| row.spans.iter().any(|s| s.content.contains("permission mode:"))),
        "{notices:?}"
    );
    assert!(!notices.iter().any(|row| row.spans.iter().any(|s| s.content.contains("model:"))));
    // With an argument typed after the name there is no list, and Enter runs the command.
    for c in "/mode plan".chars() {
        state.on_key(key(KeyCode::Char(c), KeyModifiers::NONE), now);
    }
    let actions = state.on_key(key(KeyCode::Enter, KeyModifiers::NONE), now);
    assert_eq!(actions, vec![Action::Remember("/mode plan".into()), Action::SetMode(PermissionMode::Plan)]);
    // Tab completes the full name and adds the space before its argument.
    for c in "/mode".chars() {
        state.on_key(key(KeyCode::Char(c), KeyModifiers::NONE), now);
    }
    state.on_key(key(KeyCode::Tab, KeyModifiers::NONE), now);
    assert_eq!(state.input.text(), "/mode ");
}

#[test]
fn the_compacting_hint_goes_when_the_compaction_or_the_turn_ends() {
    use lathe_protocol::{CompactionTrigger, RunStats, StopCause};
    let mut state = state();
    let now = Instant::now();
    let compact = |state: &mut UiState| {
        state.input.insert("/compact");
        assert_eq!(state.submit(now), vec![Action::Remember("/compact".into()), Action::Compact(None)]);
        assert_eq!(state.current_notice(now), Some("compacting the conversation…"));
    };
    compact(&mut state);
    state.on_event(
        AgentEvent::Compacted {
            trigger: CompactionTrigger::Manual,
            tokens_before: 9000,
            tokens_after: 1200,
            summarized_items: 12,
            kept_items: 2,
            omitted_rounds: 0,
        },
        now,
    );
    assert_eq!(state.current_notice(now), None);
    compact(&mut state);
    state.on_event(AgentEvent::ContextPruned { results: 3, tokens_before: 9000, tokens_after: 4000 }, now);
    assert_eq!(state.current_notice(now), None);
    compact(&mut state);
    state.on_event(
        AgentEvent::Finished {
            cause: StopCause::Completed,
            stats: RunStats::default(),
            final_text: String::new(),
            report: None,
        },
        now,
    );
    assert_eq!(state.current_notice(now), None);
    // Another hint is left alone.
    state.flash("queued: sent when the current turn ends", now);
    state.on_event(AgentEvent::ContextPruned { results: 1, tokens_before: 10, tokens_after: 5 }, now);
    assert_eq!(state.current_notice(now), Some("queued: sent when the current turn ends"));
}

#[test]
fn mode_command_checks_the_name() {
    let mut state = state();
    let now = Instant::now();
    state.input.insert("/mode bypass");
    assert_eq!(
        state.submit(now),
        vec![Action::Remember("/mode bypass".into()), Action::SetMode(PermissionMode::Bypass)]
    );
    assert_eq!(state.current_notice(now), Some("permission mode: bypass"), "the change is confirmed");
    state.input.insert("/mode yolo");
    assert_eq!(state.submit(now), vec![Action::Remember("/mode yolo".into())]);
}

#[test]
fn mcp_command_lists_each_server_with_its_status_and_tool_count() {
    use lathe_core::mcp::{Scope, ServerReport, ServerStatus, SkipReason};
    let text = |state: &mut UiState| -> String {
        let rows = state.take_history();
        rows.iter()
            .map(|row| row.spans.iter().map(|s| s.content.to_string()).collect::<String>() + "\n")
            .collect()
    };
    let mut state = UiState::new(120, super::super::test_screen::session(), Vec::new(), std::env::temp_dir());
    let now = Instant::now();
    state.input.insert("/mcp");
    assert_eq!(state.submit(now), vec![Action::Remember("/mcp".into())]);
    assert!(text(&mut state).contains("no MCP servers configured"));

    let report =
        |name: &str, scope, transport, status| ServerReport { name: name.into(), scope, transport, status };
    state.session.mcp_servers = crate::mcp::lines(&[
        report("everything", Scope::User, "stdio", ServerStatus::Connected { tools: 11 }),
        report("web", Scope::Flag, "http", ServerStatus::Failed("connection refused".into())),
        report("repo", Scope::Project, "stdio", ServerStatus::Skipped(SkipReason::NeedsApproval)),
    ]);
    state.input.insert("/mcp");
    state.submit(now);
    let shown = text(&mut state);
    assert!(shown.contains("everything           stdio  user     connected · 11 tools"), "{shown}");
    assert!(shown.contains("web                  http   flag     failed · connection refused"), "{shown}");
    assert!(shown.contains("repo                 stdio  project  needs approval"), "{shown}");
    state.input.insert("/mcp now");
    state.submit(now);
    assert!(text(&mut state).contains("/mcp takes no argument"));
}

#[test]
fn report_asks_the_session_and_shows_its_answer_as_a_notice() {
    let mut state = state();
    let now = Instant::now();
    state.input.insert("/report");
    assert_eq!(state.submit(now), vec![Action::Remember("/report".into()), Action::Op(AgentOp::Report)]);
    let report = lathe_protocol::RunReport {
        files: vec![lathe_protocol::FileChanged { path: "app.py".into(), added: 2, removed: 1 }],
        claims: vec![lathe_protocol::Claim {
            sentence: "Fixed.".into(),
            reason: "no test ran after the last change to app.py".into(),
        }],
        ..lathe_protocol::RunReport::default()
    };
    state.on_event(AgentEvent::Report { report }, now);
    let shown: String = state
        .take_history()
        .iter()
        .map(|row| row.spans.iter().map(|span| span.content.as_ref()).collect::<String>() + "\n")
        .collect();
    assert!(shown.contains("1 file changed (+2 −1): app.py (+2 −1)"), "{shown}");
    assert!(shown.contains("claim without evidence: \"Fixed.\""), "{shown}");
    state.on_event(AgentEvent::Report { report: lathe_protocol::RunReport::default() }, now);
    let shown: String = state
        .take_history()
        .iter()
        .flat_map(|row| row.spans.iter().map(|span| span.content.to_string()))
        .collect();
    assert!(shown.contains("report: nothing yet"), "{shown}");
}

#[test]
fn goal_sets_the_goal_then_sends_the_prompt_and_shows_its_status() {
    let text = |state: &mut UiState| -> String {
        let rows = state.take_history();
        rows.iter()
            .map(|row| row.spans.iter().map(|s| s.content.to_string()).collect::<String>() + "\n")
            .collect()
    };
    let mut state = UiState::new(200, super::super::test_screen::session(), Vec::new(), std::env::temp_dir());
    let now = Instant::now();
    state.input.insert("/goal tests pass --check \"make test\"");
    let actions = state.submit(now);
    let goal = lathe_protocol::goal::GoalSpec::new("tests pass", Some("make test".into()));
    assert_eq!(
        actions,
        vec![
            Action::Remember("/goal tests pass --check \"make test\"".into()),
            Action::Op(AgentOp::SetGoal { goal }),
            Action::Prompt("Work toward this goal: tests pass".into()),
        ]
    );
    state.busy = None;
    state.input.insert(&format!("/goal {}", "x".repeat(4_001)));
    state.submit(now);
    assert!(text(&mut state).contains("goal not set: the goal condition is 4001 characters"));
    state.input.insert("/goal");
    state.submit(now);
    assert!(text(&mut state).contains("no goal; /goal CONDITION"));
}
