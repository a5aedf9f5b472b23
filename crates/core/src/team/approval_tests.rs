#![allow(clippy::unwrap_used, clippy::expect_used)]
//! A teammate's permission prompt through real mailbox files: the lead's side sees one open
//! request, its answer reaches the waiting call (an answer to another request does not), an
//! answered request is no longer open, and a lead that never answers is a denial.

use std::time::Duration;

use lathe_protocol::{PermissionAnswer, ToolCall, ToolPreview};
use serde_json::json;

use super::approval::{Answered, MailApprover, answer_message, is_reply, lead_prompt};
use super::mailbox::{LEAD, Mailbox, Message, post};
use crate::exec::Approver;

fn call() -> ToolCall {
    ToolCall {
        id: "c1".into(),
        name: "shell".into(),
        arguments: json!({"command": "rm -rf build"}),
        incomplete: None,
    }
}

/// Waits (at most 10 s) for the lead's mailbox to hold an approval request; returns its messages.
async fn lead_mail(inbox: &std::path::Path) -> Vec<Message> {
    let lead = Mailbox::open(inbox, LEAD).expect("lead mailbox");
    for _ in 0..500 {
        let messages = lead.unread().expect("unread").messages;
        if !messages.is_empty() {
            return messages;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("no approval request reached the lead");
}

#[tokio::test]
async fn the_leads_answer_reaches_the_waiting_call_and_closes_the_request() {
    let dir = tempfile::tempdir().expect("tempdir");
    let inbox = dir.path().join("inbox");
    let approver = MailApprover::new(inbox.clone(), "alpha".into());
    let preview = ToolPreview::Command { command: "rm -rf build".into(), cwd: "/ws".into() };
    let asking = {
        let call = call();
        let preview = preview.clone();
        tokio::spawn(async move {
            approver.ask(&call, "a destructive command", Some("Bash(rm:*)"), Some(&preview)).await
        })
    };
    let messages = lead_mail(&inbox).await;
    let answered = Answered::default();
    assert!(answered.any_open(&messages));
    let open = answered.open(&messages);
    assert_eq!(open.len(), 1);
    let (message, request) = &open[0];
    assert_eq!(message.from, "alpha");
    assert_eq!(request.tool, "shell");
    assert_eq!(request.arguments, json!({"command": "rm -rf build"}));
    assert_eq!(request.suggestion.as_deref(), Some("Bash(rm:*)"));
    assert_eq!(request.preview.as_ref(), Some(&preview));
    let (shown, reason) = lead_prompt(message, request);
    assert_eq!((shown.name.as_str(), &shown.arguments), ("shell", &request.arguments));
    assert_eq!(reason, "the teammate `alpha` asks: a destructive command");

    // An answer to another request is not this call's.
    let other = Message::new("alpha", super::mailbox::Kind::Approval, "{}");
    post(&inbox, "alpha", &answer_message(&other, PermissionAnswer::AllowAlways)).expect("post");
    // What is tested is that nothing happens: the call has had 100 ms to take the wrong answer.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!asking.is_finished(), "an answer to another request settled the call");

    let answer = answer_message(message, PermissionAnswer::Deny { feedback: Some("not now".into()) });
    assert!(is_reply(&answer));
    post(&inbox, "alpha", &answer).expect("post");
    let got = tokio::time::timeout(Duration::from_secs(10), asking).await.expect("answered").expect("task");
    assert_eq!(got, PermissionAnswer::Deny { feedback: Some("not now".into()) });
    answered.insert(&message.id);
    assert!(!answered.any_open(&messages));
    assert!(answered.open(&messages).is_empty());
}

#[tokio::test]
async fn a_lead_that_never_answers_is_a_denial_that_says_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let inbox = dir.path().join("inbox");
    let approver = MailApprover::new(inbox.clone(), "alpha".into()).waiting(Duration::from_millis(200));
    let answer = approver.ask(&call(), "a destructive command", None, None).await;
    let PermissionAnswer::Deny { feedback: Some(feedback) } = answer else { panic!("{answer:?}") };
    assert!(feedback.contains("the lead did not answer"), "{feedback}");
    assert_eq!(lead_mail(&inbox).await.len(), 1, "the request was posted");
}

#[tokio::test]
async fn a_shutdown_while_the_call_waits_is_a_denial() {
    let dir = tempfile::tempdir().expect("tempdir");
    let inbox = dir.path().join("inbox");
    let approver = MailApprover::new(inbox.clone(), "alpha".into());
    let asking =
        tokio::spawn(async move { approver.ask(&call(), "a destructive command", None, None).await });
    lead_mail(&inbox).await;
    post(&inbox, "alpha", &Message::new(LEAD, super::mailbox::Kind::Shutdown, "shutdown")).expect("post");
    let answer = tokio::time::timeout(Duration::from_secs(10), asking).await.expect("ended").expect("task");
    let PermissionAnswer::Deny { feedback: Some(feedback) } = answer else { panic!("{answer:?}") };
    assert!(feedback.contains("shut down"), "{feedback}");
}
