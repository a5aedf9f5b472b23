//! `/rewind` through the session host: files snapshotted before each change, restored to the
//! state before the chosen user turn, and the conversation cut there — also after a resume.

use lathe_core::host::{Interaction, SessionChoice};
use lathe_protocol::{AgentEvent, AgentOp, FileRewind, RewindAction};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::host::{call, is_finished, next, say, sent_text, setup, until};

#[tokio::test]
async fn rewinding_to_turn_one_restores_exact_bytes_and_removes_created_files() {
    let edited_before: &[u8] = b"\xef\xbb\xbfline one\r\nline two\r\nno final newline";
    let kept_before: &[u8] = b"keep me\n";
    let env = setup(json!([
        // Turn 1: edit a.txt.
        {"tool_calls": [call("r1", "read_file", json!({"path": "a.txt"}))]},
        {"tool_calls": [call("e1", "edit_file", json!({"path": "a.txt", "old_string": "line two", "new_string": "LINE 2"}))]},
        {"text": "edited"},
        // Turn 2: create new/b.txt, edit c.txt.
        {"tool_calls": [call("w2", "write_file", json!({"path": "new/b.txt", "content": "created\n"})),
                        call("r2", "read_file", json!({"path": "c.txt"}))]},
        {"tool_calls": [call("e2", "edit_file", json!({"path": "c.txt", "old_string": "keep", "new_string": "changed"}))]},
        {"text": "created"},
        // Turn 3: delete a.txt and c.txt with a command.
        {"tool_calls": [call("s3", "shell", json!({"command": "rm a.txt c.txt"}))]},
        {"text": "deleted"},
        // After the rewind.
        {"text": "fresh start"},
        {"text": "after resume"}
    ]))
    .await;
    let a = env.workspace.join("a.txt");
    let b = env.workspace.join("new/b.txt");
    let c = env.workspace.join("c.txt");
    std::fs::write(&a, edited_before).expect("a");
    std::fs::write(&c, kept_before).expect("c");

    let mut session = env.start("bypass", SessionChoice::New, Interaction::Interactive).await;
    for prompt in ["edit a", "create b", "delete a and c"] {
        say(&session, prompt);
        until(&mut session, is_finished).await;
    }
    assert!(!a.exists() && !c.exists());
    assert_eq!(std::fs::read_to_string(&b).expect("b"), "created\n");

    session.ops.send(AgentOp::ListTurns).expect("op");
    let events = until(&mut session, |event| matches!(event, AgentEvent::UserTurns { .. })).await;
    let Some(AgentEvent::UserTurns { turns }) = events.last() else { panic!("turns") };
    let prompts: Vec<&str> = turns.iter().map(|turn| turn.prompt.as_str()).collect();
    assert_eq!(prompts, ["edit a", "create b", "delete a and c"]);
    let file = |path: &std::path::Path, action| FileRewind { path: path.display().to_string(), action };
    let expected = vec![
        file(&a, RewindAction::Recreate),
        file(&b, RewindAction::Delete),
        file(&c, RewindAction::Recreate),
    ];
    assert_eq!(turns[0].files, expected);
    // Turn 3's command deleted files saved in earlier turns only: rewinding to it changes nothing
    // that can be restored (shell changes are not snapshotted).
    assert_eq!(turns[2].files, Vec::new());

    session.ops.send(AgentOp::Rewind { turn: 1 }).expect("op");
    let events = until(&mut session, |event| matches!(event, AgentEvent::Rewound { .. })).await;
    let Some(AgentEvent::Rewound { turn, prompt, files }) = events.last() else { panic!("rewound") };
    assert_eq!((*turn, prompt.as_str()), (1, "edit a"));
    assert_eq!(files, &expected);
    assert_eq!(std::fs::read(&a).expect("a restored"), edited_before);
    assert_eq!(std::fs::read(&c).expect("c restored"), kept_before);
    assert!(!b.exists(), "the created file is removed");

    say(&session, "start over");
    until(&mut session, is_finished).await;
    let sent = sent_text(&env.server.requests()[8]);
    assert!(sent.contains("start over"), "{sent}");
    for gone in ["edit a", "create b", "delete a and c", "LINE 2"] {
        assert!(!sent.contains(gone), "{gone} is still sent: {sent}");
    }
    session.ops.send(AgentOp::Quit).expect("quit");
    while session.events.recv().await.is_some() {}

    // A resumed session sees the same, rewound conversation.
    let mut resumed = env.start("bypass", SessionChoice::Continue, Interaction::Headless).await;
    let AgentEvent::SessionStarted { resumed_turns, .. } = next(&mut resumed).await else { panic!("first") };
    assert_eq!(resumed_turns, 1);
    say(&resumed, "and now");
    until(&mut resumed, is_finished).await;
    let sent = sent_text(&env.server.requests()[9]);
    assert!(
        sent.contains("start over") && sent.contains("fresh start") && sent.contains("and now"),
        "{sent}"
    );
    assert!(!sent.contains("edit a") && !sent.contains("LINE 2"), "{sent}");
}

#[tokio::test]
async fn rewind_is_refused_for_a_turn_that_does_not_exist() {
    let env = setup(json!([{"text": "hi"}])).await;
    let mut session = env.start("default", SessionChoice::New, Interaction::Interactive).await;
    next(&mut session).await;
    say(&session, "hello");
    until(&mut session, is_finished).await;
    session.ops.send(AgentOp::Rewind { turn: 4 }).expect("op");
    let AgentEvent::Warning { message } = next(&mut session).await else { panic!("warning") };
    assert!(message.contains("no user turn 4"), "{message}");
}

#[tokio::test]
async fn rewinding_past_a_memory_write_restores_the_memory_file_and_its_index() {
    let env = setup(json!([
        {"tool_calls": [call("m1", "memory", json!({"command": "create", "path": "/memories/user/editor.md", "file_text": "Use tabs."}))]},
        {"text": "saved"},
        {"tool_calls": [call("m2", "memory", json!({"command": "str_replace", "path": "/memories/user/editor.md", "old_str": "tabs", "new_str": "spaces"}))]},
        {"text": "updated"},
        {"text": "after the rewind"}
    ]))
    .await;
    let entry = env.home.join("memory/editor.md");
    let index = env.home.join("memory/MEMORY.md");
    let mut session = env.start("bypass", SessionChoice::New, Interaction::Interactive).await;
    say(&session, "remember tabs");
    until(&mut session, is_finished).await;
    let first = std::fs::read_to_string(&entry).expect("entry written");
    assert!(first.contains("Use tabs."), "{first}");
    let first_index = std::fs::read_to_string(&index).expect("index written");
    say(&session, "no, spaces");
    until(&mut session, is_finished).await;
    assert!(std::fs::read_to_string(&entry).expect("entry").contains("Use spaces."));

    // Rewinding to turn 2 restores the entry as turn 1 left it.
    session.ops.send(AgentOp::Rewind { turn: 2 }).expect("op");
    until(&mut session, |event| matches!(event, AgentEvent::Rewound { .. })).await;
    assert_eq!(std::fs::read_to_string(&entry).expect("restored"), first);
    assert_eq!(std::fs::read_to_string(&index).expect("index"), first_index);
    // Rewinding to turn 1 removes what turn 1 created.
    session.ops.send(AgentOp::Rewind { turn: 1 }).expect("op");
    until(&mut session, |event| matches!(event, AgentEvent::Rewound { .. })).await;
    assert!(!entry.exists(), "the entry created in turn 1 is gone");
    session.ops.send(AgentOp::Quit).expect("quit");
    while session.events.recv().await.is_some() {}
}
