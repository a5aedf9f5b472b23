//! The user's own commands (`AgentOp::RunCommand`, a `!command` at the prompt) run by the session
//! host: their output comes back as an event and reaches the model with the next prompt.

use std::time::Duration;

use lathe_core::host::{Interaction, SessionChoice};
use lathe_protocol::{AgentEvent, AgentOp};
use serde_json::json;

use super::host::{is_finished, say, sent_text, setup, until};

fn finished_command(event: &AgentEvent) -> bool {
    matches!(event, AgentEvent::CommandFinished { .. })
}

#[tokio::test]
async fn a_command_runs_in_the_workspace_and_its_output_goes_to_the_model_with_the_next_prompt() {
    let env = setup(json!([{"text": "noted"}])).await;
    let mut session = env.start("default", SessionChoice::New, Interaction::Headless).await;
    let command = "pwd; echo made > made.txt; echo oops >&2; exit 3";
    session.ops.send(AgentOp::RunCommand { command: command.into() }).expect("op");
    let events = until(&mut session, finished_command).await;
    let Some(AgentEvent::CommandFinished { command: ran, output, exit_code, .. }) = events.last() else {
        panic!("no CommandFinished: {events:?}");
    };
    assert_eq!(ran, command);
    assert_eq!(*exit_code, Some(3));
    let workspace = env.workspace.canonicalize().expect("canonical");
    assert_eq!(output, &format!("{}\noops\n", workspace.display()));
    assert_eq!(std::fs::read_to_string(workspace.join("made.txt")).expect("made"), "made\n");
    assert!(env.server.requests().is_empty(), "a command alone sends nothing to the model");

    say(&session, "what happened?");
    until(&mut session, is_finished).await;
    let sent = sent_text(&env.server.requests()[0]);
    assert!(sent.contains("I ran a shell command myself") && sent.contains("(exit code 3)"), "{sent}");
    assert!(sent.contains("oops") && sent.contains("what happened?"), "{sent}");
}

#[tokio::test]
async fn cancel_kills_a_running_command_and_everything_it_started() {
    let env = setup(json!([{"text": "ok"}])).await;
    let mut session = env.start("default", SessionChoice::New, Interaction::Headless).await;
    let marker = env.workspace.join("never.txt");
    let command = format!("sleep 30 & sleep 30; touch {}", marker.display());
    session.ops.send(AgentOp::RunCommand { command }).expect("op");
    // The prompt sent meanwhile waits for the command; the cancel (taken after the command
    // started: ops are taken in order) kills it.
    say(&session, "after");
    session.ops.send(AgentOp::Cancel).expect("cancel");
    let events = tokio::time::timeout(Duration::from_secs(10), until(&mut session, finished_command))
        .await
        .expect("the command ends soon after the cancel");
    assert!(
        matches!(events.last(), Some(AgentEvent::CommandFinished { exit_code: None, .. })),
        "{events:?}"
    );
    until(&mut session, is_finished).await;
    let sent = sent_text(&env.server.requests()[0]);
    assert!(sent.contains("(killed)") && sent.contains("after"), "{sent}");
    assert!(!marker.exists());
}
