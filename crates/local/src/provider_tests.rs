#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

#[cfg(not(feature = "llama"))]
#[test]
fn new_without_the_llama_feature_says_how_to_build() {
    let err = LocalProvider::new(LocalConfig::default()).unwrap_err();
    assert!(matches!(err, ProviderError::Config { .. }));
    assert!(err.to_string().contains("build with --features local"), "{err}");
}

#[cfg(feature = "llama")]
#[test]
fn new_reports_a_missing_model_file() {
    let config = LocalConfig { model_path: Some("/nonexistent/m.gguf".into()), ..LocalConfig::default() };
    let err = LocalProvider::new(config).unwrap_err();
    assert!(err.to_string().contains("not found"), "{err}");
}

#[test]
fn a_question_that_names_no_change_is_read_only() {
    let asks = |text: &str| {
        asks_a_question(&ModelRequest {
            messages: vec![LedgerItem::User(lathe_protocol::UserMessage::text(text))],
            ..ModelRequest::default()
        })
    };
    assert!(asks("Which file defines the function parse_date?"));
    assert!(asks("How many rows does people.csv have?  "));
    assert!(asks("Which line of app.py defines the function main? Answer with the line number."));
    assert!(!asks("Explain `x?` in lib.rs."), "a `?` inside a word ends no sentence");
    assert!(!asks("Can you fix the off-by-one in series.py?"));
    assert!(!asks("Why does it fail? Make the test pass."));
    assert!(!asks("Rename x to result in geometry.py."));
}

#[test]
fn a_real_call_is_required_before_acting_after_a_failure_and_after_lathe_asks_to_go_on() {
    use lathe_protocol::{ToolResult, ToolStatus, UserMessage};
    let with =
        |items: Vec<LedgerItem>| must_act(&ModelRequest { messages: items, ..ModelRequest::default() });
    let task = || LedgerItem::User(UserMessage::text("Fix the typo in greet.py."));
    let ids = std::cell::Cell::new(0);
    // A call of `name` and its result, with a call id of their own.
    let call = |name: &str, is_error: bool| {
        ids.set(ids.get() + 1);
        let id = format!("c{}", ids.get());
        let status = if is_error { ToolStatus::Failed } else { ToolStatus::Completed };
        [
            LedgerItem::Assistant(lathe_protocol::AssistantMessage {
                content: vec![lathe_protocol::Content::ToolCall(lathe_protocol::ToolCall {
                    id: id.clone(),
                    name: name.into(),
                    arguments: serde_json::json!({}),
                    incomplete: None,
                })],
                stop: lathe_protocol::StopReason::ToolUse,
                usage: lathe_protocol::Usage::default(),
                model: "m".into(),
            }),
            LedgerItem::ToolResult(ToolResult::text(&id, "…", is_error, status)),
        ]
    };
    let turn = |calls: &[(&str, bool)]| {
        let mut items = vec![task()];
        for (name, is_error) in calls {
            items.extend(call(name, *is_error));
        }
        items
    };
    assert!(with(turn(&[])), "nothing looked at yet");
    assert!(!with(turn(&[("read_file", false)])), "a result to answer from");
    assert!(with(turn(&[("edit_file", true)])), "the last edit failed");
    assert!(!with(turn(&[("read_file", true)])), "a failed read may be answered from");
    assert!(with(turn(&[("edit_file", true), ("read_file", false)])), "the failed edit was not redone");
    assert!(!with(turn(&[("edit_file", true), ("edit_file", false)])), "a later edit succeeded");
    let mut denied = turn(&[("read_file", false)]);
    denied.push(call("edit_file", true)[0].clone());
    let id = format!("c{}", ids.get());
    denied.push(LedgerItem::ToolResult(ToolResult::text(&id, "denied", true, ToolStatus::Denied)));
    assert!(!with(denied), "a denied change may be answered (\"you declined\")");
    let gave_up = vec![("edit_file", true); MAX_FAILED_CHANGES];
    assert!(!with(turn(&gave_up)), "after that many failures in a row it may say it could not");
    let mut asked = turn(&[("read_file", false)]);
    asked.push(LedgerItem::User(UserMessage::injected("Before you finish: …")));
    assert!(with(asked), "Lathe asks it to go on");
}

#[tokio::test]
async fn a_stream_whose_sender_vanishes_ends_with_an_error() {
    let (sender, receiver) = mpsc::unbounded_channel();
    sender.send(ModelEvent::TextDelta { text: "a".into() }).unwrap();
    drop(sender);
    let events: Vec<ModelEvent> = terminated(receiver).collect().await;
    assert_eq!(events.len(), 2);
    assert!(matches!(&events[1], ModelEvent::Error { error: ProviderError::IncompleteStream { .. } }));
}
