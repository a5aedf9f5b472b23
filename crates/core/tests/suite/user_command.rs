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
async fn a_command_runs_beside_the_turns_and_cancel_kills_it_and_everything_it_started() {
    let env = setup(json!([{"text": "meanwhile"}, {"text": "ok"}])).await;
    let mut session = env.start("default", SessionChoice::New, Interaction::Headless).await;
    let marker = env.workspace.join("never.txt");
    let command = format!("sleep 30 & sleep 30; touch {}", marker.display());
    session.ops.send(AgentOp::RunCommand { command }).expect("op");
    // A prompt sent while the command runs is answered at once, without the command's output.
    say(&session, "during");
    let events = until(&mut session, is_finished).await;
    assert!(!events.iter().any(finished_command), "{events:?}");
    let sent = sent_text(&env.server.requests()[0]);
    assert!(sent.contains("during") && !sent.contains("I ran a shell command"), "{sent}");
    // With no turn running, a cancel kills the command.
    session.ops.send(AgentOp::Cancel).expect("cancel");
    let events = tokio::time::timeout(Duration::from_secs(10), until(&mut session, finished_command))
        .await
        .expect("the command ends soon after the cancel");
    assert!(matches!(events.last(), Some(AgentEvent::CommandFinished { exit_code: None, .. })), "{events:?}");
    say(&session, "after");
    until(&mut session, is_finished).await;
    let sent = sent_text(&env.server.requests()[1]);
    assert!(sent.contains("(killed)") && sent.contains("after"), "{sent}");
    assert!(!marker.exists());
}

#[tokio::test]
async fn the_end_of_the_session_kills_a_running_command_and_reports_it() {
    let env = setup(json!([])).await;
    let mut session = env.start("default", SessionChoice::New, Interaction::Headless).await;
    let marker = env.workspace.join("never.txt");
    let command = format!("sleep 30; touch {}", marker.display());
    session.ops.send(AgentOp::RunCommand { command }).expect("op");
    session.ops.send(AgentOp::Quit).expect("quit");
    let mut events = Vec::new();
    let closed = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(event) = session.events.recv().await {
            events.push(event);
        }
    });
    closed.await.expect("the session closes soon after the quit");
    assert!(
        events.iter().any(|event| matches!(event, AgentEvent::CommandFinished { exit_code: None, .. })),
        "{events:?}"
    );
    assert!(!marker.exists());
}
