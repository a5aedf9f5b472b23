use super::*;
use pretty_assertions::assert_eq;

fn command(name: &str, kind: UserCommandKind) -> UserCommand {
    UserCommand { name: name.into(), description: format!("{name} things"), argument_hint: None, kind }
}

#[test]
fn skills_listing_names_only_skills() {
    let commands =
        [command("greet", UserCommandKind::Command), command("release-notes", UserCommandKind::Skill)];
    assert_eq!(
        skills_text(&commands),
        "Skills (1; /<name> runs one, the model loads them by itself):\n/release-notes — release-notes things"
    );
    assert!(skills_text(&commands[..1]).starts_with("No skills."));
}

mod screen {
    use crossterm::event::KeyCode;
    use lathe_protocol::{
        AgentEvent, Content, Receipt, RunStats, StopCause, ToolCall, ToolResult, ToolStatus, UserCommand,
        UserCommandKind,
    };
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use crate::tui::state::Action;
    use crate::tui::test_screen::Screen;

    fn call(id: &str, name: &str, arguments: serde_json::Value) -> ToolCall {
        ToolCall { id: id.into(), name: name.into(), arguments, incomplete: None }
    }

    fn commands(screen: &mut Screen) {
        let command = |name: &str, description: &str, hint: Option<&str>, kind| UserCommand {
            name: name.into(),
            description: description.into(),
            argument_hint: hint.map(str::to_string),
            kind,
        };
        screen.event(AgentEvent::Commands {
            commands: vec![
                command("greet", "Say hello", Some("[name]"), UserCommandKind::Command),
                command(
                    "release-notes",
                    "Writes release notes from git history",
                    None,
                    UserCommandKind::Skill,
                ),
            ],
        });
    }

    #[test]
    fn custom_commands_and_skills_are_sent_to_the_session_and_completed() {
        let mut screen = Screen::new(72, 12);
        commands(&mut screen);
        screen.type_text("/gr");
        let labels: Vec<String> = screen
            .state
            .completion
            .as_ref()
            .map(|c| c.candidates.iter().map(|c| c.label.clone()).collect())
            .unwrap_or_default();
        assert_eq!(labels, vec!["/greet".to_string()]);
        assert!(screen.screen_text().contains("/greet  [name] — Say hello"), "{}", screen.screen_text());
        screen.key(KeyCode::Tab);
        assert_eq!(screen.state.input.text(), "/greet ");
        screen.type_text("Bob");
        let actions = screen.key(KeyCode::Enter);
        assert_eq!(actions, vec![Action::Remember("/greet Bob".into()), Action::Prompt("/greet Bob".into())]);
        screen.event(AgentEvent::Finished {
            cause: StopCause::Completed,
            stats: RunStats::default(),
            final_text: String::new(),
            report: None,
        });

        screen.type_text("/release-notes v2");
        let actions = screen.key(KeyCode::Enter);
        assert_eq!(
            actions,
            vec![Action::Remember("/release-notes v2".into()), Action::Prompt("/release-notes v2".into())]
        );
        screen.event(AgentEvent::Finished {
            cause: StopCause::Completed,
            stats: RunStats::default(),
            final_text: String::new(),
            report: None,
        });

        screen.type_text("/skills");
        let actions = screen.key(KeyCode::Enter);
        assert_eq!(actions, vec![Action::Remember("/skills".into())]);
        let text = screen.all_text();
        assert!(text.contains("/release-notes — Writes release notes from git history"), "{text}");
        assert!(!text.contains("/greet — Say hello"), "{text}");

        screen.type_text("/help");
        screen.key(KeyCode::Enter);
        let text = screen.all_text();
        assert!(text.contains("Custom commands"), "{text}");
        assert!(text.contains("/greet [name]  Say hello"), "{text}");

        screen.type_text("/nosuch thing");
        let actions = screen.key(KeyCode::Enter);
        assert_eq!(
            actions,
            vec![Action::Remember("/nosuch thing".into())],
            "unknown names never reach the model"
        );
    }

    #[test]
    fn sub_agent_progress_shows_under_its_task_call() {
        let mut screen = Screen::new(72, 12);
        screen.type_text("look around");
        screen.key(KeyCode::Enter);
        screen.event(AgentEvent::TurnStarted { turn: 1 });
        let task = call(
            "t1",
            "task",
            json!({"description": "find the parser", "prompt": "find it", "subagent_type": "explore"}),
        );
        screen
            .at(10)
            .event(AgentEvent::ToolCallStarted { call: task, summary: "explore: find the parser".into() });
        let sub = |event| AgentEvent::Subagent {
            parent_call_id: "t1".into(),
            agent_id: "explore-1".into(),
            subagent_type: "explore".into(),
            event: Box::new(event),
        };
        screen.at(20).event(sub(AgentEvent::ToolCallStarted {
            call: call("s1", "grep", json!({"pattern": "fn parse"})),
            summary: "fn parse".into(),
        }));
        screen.at(30).event(sub(AgentEvent::ToolCallStarted {
            call: call("s2", "read_file", json!({"path": "src/parser.rs"})),
            summary: "src/parser.rs".into(),
        }));
        screen.at(500).draw();
        let live = screen.screen_text();
        let rows: Vec<&str> = live.lines().collect();
        let task_row = rows.iter().position(|row| row.contains("task")).unwrap_or_else(|| panic!("{live}"));
        assert!(rows[task_row + 1].contains("↳ explore · 2 tool calls · read_file src/parser.rs"), "{live}");
        screen.at(900).event(AgentEvent::ToolResult {
            result: ToolResult {
                call_id: "t1".into(),
                content: vec![Content::text("The parser is in src/parser.rs")],
                is_error: false,
                status: ToolStatus::Completed,
                receipt: Some(Receipt::default()),
            },
            tool: "task".into(),
            elapsed_ms: 890,
            view: None,
        });
        let text = screen.all_text();
        let rows: Vec<&str> = text.lines().collect();
        let done = rows
            .iter()
            .position(|row| row.contains("task") && row.contains('✓'))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(rows[done + 1].contains("↳ explore · 2 tool calls"), "{text}");
        assert!(!rows[done + 1].contains("read_file"), "{text}");
        assert!(screen.state.subagents.is_empty());
    }

    #[test]
    fn status_lists_running_background_sub_agents_and_an_end_is_announced() {
        let mut screen = Screen::new(100, 30);
        let background = |status: &str| AgentEvent::BackgroundAgent {
            agent_id: "general-call_b".into(),
            subagent_type: "general".into(),
            description: "scan the logs".into(),
            status: status.into(),
        };
        screen.at(10).event(background("running"));
        // Its calls draw no live row: the call that started it has returned.
        screen.at(20).event(AgentEvent::Subagent {
            parent_call_id: "call_b".into(),
            agent_id: "general-call_b".into(),
            subagent_type: "general".into(),
            event: Box::new(AgentEvent::ToolCallStarted {
                call: call("s1", "grep", json!({"pattern": "ERROR"})),
                summary: "ERROR".into(),
            }),
        });
        assert!(screen.state.subagents.is_empty());
        screen.type_text("/status");
        screen.at(30).key(KeyCode::Enter);
        let text = screen.all_text();
        assert!(
            text.contains("background sub-agent general-call_b (general: scan the logs) running"),
            "{text}"
        );
        screen.at(40).event(background("completed"));
        assert!(screen.state.background.is_empty());
        let text = screen.all_text();
        assert!(
            text.contains("general-call_b (general: scan the logs) completed; its report goes to the"),
            "{text}"
        );
    }
}
