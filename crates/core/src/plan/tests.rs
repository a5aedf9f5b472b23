#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use lathe_policy::{PermissionMode, Policy};
use lathe_protocol::plan::{PlanAnswer, PlanReady};
use lathe_protocol::{AgentEvent, ResultView};
use lathe_tools::{DynTool, ToolContext, ToolError, ToolOutput, ToolRegistry};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio::sync::{mpsc, watch};

use super::*;

struct Fixture {
    _dir: tempfile::TempDir,
    plan_file: std::path::PathBuf,
    ctx: ToolContext,
}

fn fixture(mode: PermissionMode) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let plan_file = dir.path().join("home/plans/session.md");
    let mut ctx = ToolContext::new(dir.path().to_path_buf());
    ctx.policy = Some(Arc::new(Policy::with_mode(mode, dir.path())));
    ctx.call_id = "call_plan".into();
    Fixture { _dir: dir, plan_file, ctx }
}

const PLAN: &str = "# Plan\n1. Swap the operands in src/lib.rs.\n2. Run the tests.";

fn ready(plan_file: &std::path::Path) -> AgentEvent {
    AgentEvent::PlanReady(PlanReady {
        call_id: "call_plan".into(),
        plan: format!("{PLAN}\n"),
        plan_file: Some(plan_file.display().to_string()),
    })
}

fn line(output: &ToolOutput) -> String {
    match &output.view {
        Some(ResultView::Line { text }) => text.clone(),
        other => panic!("a one-line view, not {other:?}"),
    }
}

#[test]
fn exit_plan_mode_is_offered_in_plan_mode_only() {
    let (events, _receiver) = mpsc::unbounded_channel();
    let mut tools = ToolRegistry::builtin();
    tools.register(Arc::new(ExitPlanMode::new(Arc::new(PlanDesk::headless(events)), "p.md".into())));
    let names = |mode| offered(tools.specs(), mode).into_iter().map(|spec| spec.name).collect::<Vec<_>>();
    assert!(names(PermissionMode::Plan).contains(&EXIT_PLAN_MODE.to_string()));
    for mode in [PermissionMode::Default, PermissionMode::AcceptEdits, PermissionMode::Bypass] {
        assert!(!names(mode).contains(&EXIT_PLAN_MODE.to_string()), "{mode}");
        assert_eq!(names(mode).len(), tools.specs().len() - 1);
    }
    let schema = &tools.get(EXIT_PLAN_MODE).unwrap().spec().input_schema;
    assert_eq!(schema["required"], json!(["plan"]));
    assert_eq!(schema["properties"]["plan"]["type"], "string");
}

#[tokio::test]
async fn outside_plan_mode_the_call_is_refused_before_anyone_is_asked() {
    let fixture = fixture(PermissionMode::AcceptEdits);
    let (events, mut receiver) = mpsc::unbounded_channel();
    let tool = ExitPlanMode::new(Arc::new(PlanDesk::headless(events)), fixture.plan_file.clone());
    let error = DynTool::precheck(&tool, &json!({"plan": PLAN}), &fixture.ctx).unwrap_err();
    assert!(error.to_string().contains("not in plan mode (the permission mode is accept-edits)"), "{error}");
    let error = tool.call(json!({"plan": PLAN}), &fixture.ctx).await.unwrap_err();
    assert!(matches!(error, ToolError::Failed(_)), "{error}");
    assert!(receiver.try_recv().is_err(), "no plan was presented");
    assert!(!fixture.plan_file.exists());
}

#[tokio::test]
async fn headless_the_plan_is_saved_announced_and_ends_the_run() {
    let fixture = fixture(PermissionMode::Plan);
    let (events, mut receiver) = mpsc::unbounded_channel();
    let tool = ExitPlanMode::new(Arc::new(PlanDesk::headless(events)), fixture.plan_file.clone());
    assert_eq!(
        DynTool::access(&tool, &json!({"plan": PLAN}), &fixture.ctx).unwrap(),
        lathe_tools::Access::Write(vec![fixture.plan_file.clone()])
    );
    let output = tool.call(json!({"plan": PLAN}), &fixture.ctx).await.unwrap();
    assert!(output.ends_run);
    assert!(!output.is_error);
    assert!(output.text_content().contains("nothing was changed"), "{}", output.text_content());
    assert_eq!(line(&output), "plan presented");
    assert_eq!(std::fs::read_to_string(&fixture.plan_file).unwrap(), format!("{PLAN}\n"));
    assert_eq!(receiver.try_recv().unwrap(), ready(&fixture.plan_file));
}

#[tokio::test]
async fn a_blank_plan_is_the_plan_file_the_model_wrote() {
    let fixture = fixture(PermissionMode::Plan);
    let (events, mut receiver) = mpsc::unbounded_channel();
    let tool = ExitPlanMode::new(Arc::new(PlanDesk::headless(events)), fixture.plan_file.clone());
    let error = tool.call(json!({"plan": " "}), &fixture.ctx).await.unwrap_err();
    assert!(error.to_string().contains("the plan is empty"), "{error}");
    std::fs::create_dir_all(fixture.plan_file.parent().unwrap()).unwrap();
    std::fs::write(&fixture.plan_file, format!("{PLAN}\n\n")).unwrap();
    tool.call(json!({"plan": ""}), &fixture.ctx).await.unwrap();
    assert_eq!(receiver.try_recv().unwrap(), ready(&fixture.plan_file));
}

/// Runs one interactive call, answering `answer` after the front end set `mode`.
async fn answered(answer: PlanAnswer, mode: PermissionMode) -> (ToolOutput, Fixture) {
    let fixture = fixture(PermissionMode::Plan);
    let (events, mut receiver) = mpsc::unbounded_channel();
    let (modes, watched) = watch::channel(PermissionMode::Plan);
    let desk = Arc::new(PlanDesk::interactive(events, watched));
    let tool = ExitPlanMode::new(desk.clone(), fixture.plan_file.clone());
    let front_end = async {
        let event = receiver.recv().await.unwrap();
        assert_eq!(event, ready(&fixture.plan_file));
        assert!(!desk.answer("another_call", PlanAnswer::Approve), "only the waiting call is answered");
        modes.send_replace(mode);
        assert!(desk.answer("call_plan", answer));
    };
    let (output, ()) = tokio::join!(tool.call(json!({"plan": PLAN}), &fixture.ctx), front_end);
    (output.unwrap(), fixture)
}

#[tokio::test]
async fn an_approved_plan_tells_the_model_the_mode_the_user_chose() {
    let (output, _fixture) = answered(PlanAnswer::Approve, PermissionMode::AcceptEdits).await;
    let text = output.text_content();
    assert!(
        text.contains("approved the plan and left plan mode: the permission mode is now accept-edits"),
        "{text}"
    );
    assert!(text.contains("Carry out the plan now"), "{text}");
    assert!(!output.ends_run && !output.is_error);
    assert_eq!(line(&output), "plan approved · accept-edits");

    let (output, _fixture) = answered(PlanAnswer::Approve, PermissionMode::Default).await;
    assert!(output.text_content().contains("now default (each edit"), "{}", output.text_content());
}

#[tokio::test]
async fn keep_planning_carries_the_feedback_and_stays_in_plan_mode() {
    let answer = PlanAnswer::KeepPlanning { feedback: "also update the README".into() };
    let (output, fixture) = answered(answer, PermissionMode::Plan).await;
    let text = output.text_content();
    assert!(text.contains("keep planning: the session stays in plan mode and nothing was changed"), "{text}");
    assert!(text.contains("Their feedback: also update the README"), "{text}");
    assert_eq!(line(&output), "keep planning: also update the README");
    assert!(!output.ends_run);
    assert_eq!(fixture.ctx.policy.as_ref().map(|policy| policy.mode()), Some(PermissionMode::Plan));
}

#[tokio::test]
async fn a_cancelled_turn_answers_the_waiting_plan_as_interrupted() {
    let fixture = fixture(PermissionMode::Plan);
    let (events, mut receiver) = mpsc::unbounded_channel();
    let (_modes, watched) = watch::channel(PermissionMode::Plan);
    let desk = Arc::new(PlanDesk::interactive(events, watched));
    let tool = ExitPlanMode::new(desk.clone(), fixture.plan_file.clone());
    let cancel = fixture.ctx.cancel.clone();
    let front_end = async {
        receiver.recv().await.unwrap();
        cancel.cancel();
    };
    let (output, ()) = tokio::join!(tool.call(json!({"plan": PLAN}), &fixture.ctx), front_end);
    assert!(matches!(output, Err(ToolError::Cancelled)), "{output:?}");
    assert!(!desk.answer("call_plan", PlanAnswer::Approve), "nothing waits any more");
}
