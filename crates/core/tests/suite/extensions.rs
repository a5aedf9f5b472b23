//! Custom commands and skills in a session: the commands event a front end gets at start, and a
//! command's `allowed-tools` holding for its own turn only.

use lathe_core::host::{Interaction, SessionChoice};
use lathe_protocol::{AgentEvent, UserCommand, UserCommandKind};
use serde_json::json;

use super::host::{is_finished, say, setup, until};

fn write(path: &std::path::Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
    std::fs::write(path, text).expect("write");
}

fn tool_names(body: &serde_json::Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| tools.iter().filter_map(|t| t["name"].as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

#[tokio::test]
async fn the_session_lists_its_commands_and_skills_and_allowed_tools_last_one_turn() {
    let env = setup(json!([{"text": "Audited."}, {"text": "Hi."}])).await;
    write(
        &env.workspace.join(".claude/commands/audit.md"),
        "---\ndescription: Audit code\nargument-hint: <path>\nallowed-tools: [Read, Grep]\n---\nAudit $1.\n",
    );
    write(
        &env.workspace.join(".lathe/skills/release-notes/SKILL.md"),
        "---\nname: release-notes\ndescription: Writes release notes\n---\nSteps.\n",
    );
    let mut session = env.start("default", SessionChoice::New, Interaction::Headless).await;
    let events = until(&mut session, |event| matches!(event, AgentEvent::Commands { .. })).await;
    let Some(AgentEvent::Commands { commands }) = events.last() else { panic!("commands") };
    assert_eq!(
        commands,
        &vec![
            UserCommand {
                name: "audit".into(),
                description: "Audit code".into(),
                argument_hint: Some("<path>".into()),
                kind: UserCommandKind::Command,
            },
            UserCommand {
                name: "release-notes".into(),
                description: "Writes release notes".into(),
                argument_hint: None,
                kind: UserCommandKind::Skill,
            },
        ]
    );

    say(&session, "/audit src/lib.rs");
    until(&mut session, is_finished).await;
    say(&session, "hello");
    until(&mut session, is_finished).await;
    let requests = env.server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(tool_names(&requests[0].body), ["read_file", "grep"]);
    let all = tool_names(&requests[1].body);
    for name in ["read_file", "write_file", "edit_file", "shell", "skill", "task"] {
        assert!(all.iter().any(|tool| tool == name), "{name} is back after the command's turn: {all:?}");
    }
}

#[tokio::test]
async fn a_skill_loaded_by_the_model_restricts_tools_until_the_turn_ends() {
    let env = setup(json!([
        {"tool_calls": [{"id": "s1", "name": "skill", "arguments": {"name": "inspect"}}]},
        {"tool_calls": [{"id": "w1", "name": "write_file", "arguments": {"path": "a.txt", "content": "a"}}]},
        {"text": "Could not write."},
        {"tool_calls": [{"id": "w2", "name": "write_file", "arguments": {"path": "b.txt", "content": "b"}}]},
        {"text": "Wrote b."}
    ]))
    .await;
    write(
        &env.workspace.join(".lathe/skills/inspect/SKILL.md"),
        "---\nname: inspect\ndescription: Inspects\nallowed-tools: Read\n---\nLook only.\n",
    );
    let mut session = env.start("bypass", SessionChoice::New, Interaction::Headless).await;
    say(&session, "inspect");
    until(&mut session, is_finished).await;
    assert!(!env.workspace.join("a.txt").exists(), "refused while the skill is in force");
    say(&session, "now write b");
    until(&mut session, is_finished).await;
    assert_eq!(std::fs::read_to_string(env.workspace.join("b.txt")).expect("b.txt"), "b");
}
