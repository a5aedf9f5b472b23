//! The repository's state (branch, changes, recent commits): gathered by git in the background from
//! the session's start. An interactive session sends it before the first user message; print mode's
//! first request does not wait for git, and the state follows the first response, once.

use std::path::Path;

use lathe_core::host::{Interaction, SessionChoice};
use lathe_protocol::AgentEvent;
use serde_json::json;

use super::host::{call, is_finished, say, sent_text, setup, until};

const STATE: &str = "Repository state at the start of this session";

fn git(dir: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?}");
}

fn repository(workspace: &Path) {
    git(workspace, &["init", "-q", "-b", "trunk"]);
    std::fs::write(workspace.join("a.txt"), "a\n").expect("a.txt");
    git(workspace, &["add", "-A"]);
    git(workspace, &["commit", "-qm", "the first commit"]);
    std::fs::write(workspace.join("new.txt"), "n\n").expect("new.txt");
}

fn finished(events: &[AgentEvent]) -> bool {
    events.iter().any(|event| matches!(event, AgentEvent::Finished { .. }))
}

#[tokio::test]
async fn print_mode_sends_the_repository_state_after_the_first_response_and_only_once() {
    let turns = json!([
        {"tool_calls": [call("c1", "read_file", json!({"path": "a.txt"}))]},
        {"tool_calls": [call("c2", "read_file", json!({"path": "new.txt"}))]},
        {"text": "Read both."},
    ]);
    let env = setup(turns).await;
    repository(&env.workspace);
    let mut session = env.start("default", SessionChoice::New, Interaction::Headless).await;
    say(&session, "read the files");
    assert!(finished(&until(&mut session, is_finished).await));
    let requests = env.server.requests();
    assert_eq!(requests.len(), 3);
    assert!(
        !sent_text(&requests[0]).contains(STATE),
        "the first request waited for git: {}",
        sent_text(&requests[0])
    );
    // The second request ends with it, after the first call's result (the prefix is unchanged).
    let second = &requests[1].body["messages"];
    let last = second.as_array().and_then(|messages| messages.last()).expect("messages").to_string();
    assert!(last.contains(STATE) && last.contains("Git branch: trunk"), "{last}");
    assert!(last.contains("?? new.txt") && last.contains("the first commit"), "{last}");
    assert!(last.contains("tool_result"), "it joins the call's result message: {last}");
    let third = sent_text(&requests[2]);
    assert_eq!(third.matches(STATE).count(), 1, "sent once: {third}");
}

#[tokio::test]
async fn an_interactive_session_sends_the_repository_state_before_the_first_user_message() {
    let env = setup(json!([{"text": "Hello."}, {"text": "Again."}])).await;
    repository(&env.workspace);
    let mut session = env.start("default", SessionChoice::New, Interaction::Interactive).await;
    say(&session, "hi");
    until(&mut session, is_finished).await;
    say(&session, "hi again");
    until(&mut session, is_finished).await;
    let requests = env.server.requests();
    let first = sent_text(&requests[0]);
    let (state, prompt) =
        (first.find(STATE).expect("state in the first request"), first.find("hi").expect("hi"));
    assert!(state < prompt, "before the user's message: {first}");
    assert!(first.contains("Git branch: trunk") && first.contains("?? new.txt"), "{first}");
    assert_eq!(sent_text(&requests[1]).matches(STATE).count(), 1, "sent once");
}

#[tokio::test]
async fn a_one_request_print_run_outside_a_repository_sends_no_state() {
    let env = setup(json!([{"text": "Hello."}])).await;
    let mut session = env.start("default", SessionChoice::New, Interaction::Headless).await;
    say(&session, "hi");
    assert!(finished(&until(&mut session, is_finished).await));
    assert!(!sent_text(&env.server.requests()[0]).contains(STATE));
}
