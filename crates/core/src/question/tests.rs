#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use lathe_policy::{PermissionMode, Policy, Verdict};
use lathe_protocol::question::{Question, QuestionAnswer};
use lathe_protocol::{AgentEvent, ResultView};
use lathe_tools::{DynTool, ToolContext, ToolError, ToolOutput};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::*;

fn ctx(dir: &tempfile::TempDir) -> ToolContext {
    let mut ctx = ToolContext::new(dir.path().to_path_buf());
    ctx.call_id = "call_ask".into();
    ctx
}

fn line(output: &ToolOutput) -> String {
    match &output.view {
        Some(ResultView::Line { text }) => text.clone(),
        other => panic!("a one-line view, not {other:?}"),
    }
}

fn database() -> Value {
    json!({"question": "Which database should the service use?", "options": ["PostgreSQL", " SQLite "]})
}

#[test]
fn the_spec_is_short_and_only_the_question_is_required() {
    let tool = AskUser::new(Arc::new(QuestionDesk::headless()));
    let spec = tool.spec();
    assert_eq!(spec.name, ASK_USER);
    let bytes = serde_json::to_string(&spec).unwrap().len();
    assert!(bytes <= 400, "the spec takes {bytes} bytes of JSON: {}", serde_json::to_string(&spec).unwrap());
    let schema = &spec.input_schema;
    assert_eq!(schema["required"], json!(["question"]));
    assert_eq!(schema["properties"]["question"]["type"], "string");
    assert_eq!(schema["properties"]["options"]["items"]["type"], "string");
    assert_eq!(tool.summary(&database()), "Which database should the service use?");
}

#[test]
fn asking_needs_no_permission_in_any_mode_but_runs_in_a_batch_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let tool = AskUser::new(Arc::new(QuestionDesk::headless()));
    let access = DynTool::access(&tool, &database(), &ctx(&dir)).unwrap();
    assert_eq!(access, lathe_tools::Access::Session);
    for mode in [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Plan,
        PermissionMode::DontAsk,
        PermissionMode::Bypass,
        PermissionMode::Auto,
    ] {
        let decision = Policy::with_mode(mode, dir.path()).decide(ASK_USER, &access);
        assert_eq!(decision.verdict, Verdict::Allow, "{mode}");
    }
    assert_eq!(DynTool::effect(&tool, &database()), lathe_tools::Effect::Mutating);
}

#[tokio::test]
async fn headless_the_call_fails_at_once_telling_the_model_to_decide() {
    let dir = tempfile::tempdir().unwrap();
    let tool = AskUser::new(Arc::new(QuestionDesk::headless()));
    let error = tool.call(database(), &ctx(&dir)).await.unwrap_err();
    assert!(matches!(error, ToolError::Failed(_)), "{error:?}");
    let text = error.to_string();
    assert!(text.contains("no user is present"), "{text}");
    assert!(text.contains("Decide yourself and state the assumption you made"), "{text}");
}

#[tokio::test]
async fn bad_questions_are_refused_before_anyone_is_asked() {
    let dir = tempfile::tempdir().unwrap();
    let (events, mut receiver) = mpsc::unbounded_channel();
    let tool = AskUser::new(Arc::new(QuestionDesk::interactive(events)));
    let long_option = "x".repeat(MAX_OPTION_CHARS + 1);
    let long_question = "why? ".repeat(MAX_QUESTION_CHARS / 4);
    let cases = [
        (json!({"question": "  "}), "the question is empty"),
        (json!({"question": long_question}), "the question is 1249 characters, at most 1000"),
        (json!({"question": "Pick", "options": ["a", "b", "c", "d", "e", "f", "g"]}), "7 options, at most 6"),
        (json!({"question": "Pick", "options": ["a", " "]}), "option 2 is empty"),
        (json!({"question": "Pick", "options": ["a\nb"]}), "option 1 has a line break"),
        (json!({"question": "Pick", "options": ["a", long_option]}), "option 2 is 81 characters, at most 80"),
        (
            json!({"question": "Pick", "options": ["SQLite", "Postgres", "SQLite "]}),
            "option 3 repeats option 1",
        ),
    ];
    for (args, expected) in cases {
        let error = DynTool::precheck(&tool, &args, &ctx(&dir)).unwrap_err();
        assert!(error.to_string().starts_with("ask_user: "), "{error}");
        assert!(error.to_string().contains(expected), "`{expected}` in: {error}");
        let error = tool.call(args, &ctx(&dir)).await.unwrap_err();
        assert!(error.to_string().contains(expected), "`{expected}` in: {error}");
    }
    let error = tool.call(json!({"options": ["a"]}), &ctx(&dir)).await.unwrap_err();
    assert!(matches!(error, ToolError::InvalidArguments { .. }), "{error:?}");
    assert!(receiver.try_recv().is_err(), "no question was asked");
    assert!(DynTool::precheck(&tool, &database(), &ctx(&dir)).is_ok());
    assert!(DynTool::precheck(&tool, &json!({"question": "Go on?", "options": null}), &ctx(&dir)).is_ok());
}

/// Runs one interactive call of `args`, the front end answering `answer`.
async fn answered(args: Value, expected: Question, answer: QuestionAnswer) -> ToolOutput {
    let dir = tempfile::tempdir().unwrap();
    let (events, mut receiver) = mpsc::unbounded_channel();
    let desk = Arc::new(QuestionDesk::interactive(events));
    let tool = AskUser::new(desk.clone());
    let ctx = ctx(&dir);
    let front_end = async {
        assert_eq!(receiver.recv().await.unwrap(), AgentEvent::Question(expected));
        let other = QuestionAnswer::Answered { text: "no".into() };
        assert!(!desk.answer("another_call", other), "only the waiting call is answered");
        assert!(desk.answer("call_ask", answer));
    };
    let (output, ()) = tokio::join!(tool.call(args, &ctx), front_end);
    assert!(!desk.answer("call_ask", QuestionAnswer::Declined), "nothing waits any more");
    output.unwrap()
}

#[tokio::test]
async fn the_answer_is_the_result_the_model_reads() {
    let expected = Question {
        call_id: "call_ask".into(),
        question: "Which database should the service use?".into(),
        options: vec!["PostgreSQL".into(), "SQLite".into()],
    };
    let answer = QuestionAnswer::Answered { text: "SQLite".into() };
    let output = answered(database(), expected, answer).await;
    assert_eq!(output.text_content(), "The user answered: SQLite");
    assert_eq!(line(&output), "answered: SQLite");
    assert!(!output.is_error && !output.ends_run);

    let expected =
        Question { call_id: "call_ask".into(), question: "Name the crate?".into(), options: vec![] };
    let answer = QuestionAnswer::Answered { text: "  lathe-ask\n".into() };
    let output = answered(json!({"question": " Name the crate?"}), expected, answer).await;
    assert_eq!(output.text_content(), "The user answered: lathe-ask");
}

#[tokio::test]
async fn a_declined_question_tells_the_model_to_decide() {
    let expected = Question { call_id: "call_ask".into(), question: "Go on?".into(), options: vec![] };
    let output = answered(json!({"question": "Go on?"}), expected.clone(), QuestionAnswer::Declined).await;
    assert_eq!(
        output.text_content(),
        "The user declined to answer. Decide yourself and state the assumption you made."
    );
    assert_eq!(line(&output), "declined to answer");
    assert!(!output.is_error);
    let blank = QuestionAnswer::Answered { text: " ".into() };
    let output = answered(json!({"question": "Go on?"}), expected, blank).await;
    assert_eq!(line(&output), "declined to answer");
}

#[tokio::test]
async fn a_cancelled_turn_or_a_vanished_front_end_interrupts_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let (events, mut receiver) = mpsc::unbounded_channel();
    let desk = Arc::new(QuestionDesk::interactive(events));
    let tool = AskUser::new(desk.clone());
    let first = ctx(&dir);
    let front_end = async {
        receiver.recv().await.unwrap();
        first.cancel.cancel();
    };
    let (output, ()) = tokio::join!(tool.call(database(), &first), front_end);
    assert!(matches!(output, Err(ToolError::Cancelled)), "{output:?}");
    assert!(!desk.answer("call_ask", QuestionAnswer::Declined), "nothing waits any more");

    drop(receiver);
    let output = tool.call(database(), &ctx(&dir)).await;
    assert!(matches!(output, Err(ToolError::Cancelled)), "{output:?}");
    assert!(!desk.answer("call_ask", QuestionAnswer::Declined), "nothing waits any more");
}
