use lathe_protocol::plan::PlanAnswer;
use lathe_protocol::preview::{FileChange, ResultView, ToolPreview};
use lathe_protocol::question::{Question, QuestionAnswer};
use lathe_protocol::{
    AgentEvent, AgentOp, PermissionAnswer, PermissionMode, ToolCall, ToolResult, ToolStatus,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::*;

fn live(workspace: &std::path::Path) -> Live {
    let (ops, _receiver) = tokio::sync::mpsc::unbounded_channel();
    Live::new("s1".into(), ops, workspace.to_path_buf())
}

fn updates(actions: Vec<Action>) -> Vec<Value> {
    actions
        .into_iter()
        .filter_map(|action| match action {
            Action::Update(update) => Some(serde_json::to_value(update).unwrap_or_default()),
            _ => None,
        })
        .collect()
}

fn call(id: &str, name: &str, arguments: Value) -> ToolCall {
    ToolCall { id: id.into(), name: name.into(), arguments, incomplete: None }
}

#[test]
fn an_edit_is_a_tool_call_with_a_diff_of_the_file_before_and_after() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    std::fs::write(dir.path().join("a.txt"), "one\n").unwrap_or_else(|e| panic!("write: {e}"));
    let mut live = live(dir.path());
    let edit = call("e1", "edit_file", json!({"path": "a.txt", "old_string": "one", "new_string": "two"}));
    let started =
        updates(live.event(AgentEvent::ToolCallStarted { call: edit.clone(), summary: "a.txt".into() }));
    let path = dir.path().join("a.txt").display().to_string();
    assert_eq!(
        started,
        [json!({"sessionUpdate": "tool_call", "toolCallId": "e1", "title": "Edit a.txt", "kind": "edit",
                "status": "in_progress", "locations": [{"path": path}],
                "rawInput": {"path": "a.txt", "old_string": "one", "new_string": "two"}})]
    );

    let preview =
        ToolPreview::Diff { path: "a.txt".into(), unified: "-one\n+two\n".into(), change: FileChange::Edit };
    let asked = live.event(AgentEvent::PermissionRequest {
        call: edit,
        reason: "edits a file".into(),
        suggestion: None,
        preview: Some(preview),
    });
    let [Action::Ask(request, asked)] = asked.as_slice() else { panic!("one question: {asked:?}") };
    assert_eq!(asked, &Asked::Permission { call_id: "e1".into() });
    let request = serde_json::to_value(request).unwrap_or_default();
    assert_eq!(
        request["toolCall"]["content"],
        json!([{"type": "diff", "path": path, "oldText": "one\n", "newText": "two\n"}])
    );
    let kinds: Vec<&str> =
        request["options"].as_array().into_iter().flatten().filter_map(|o| o["kind"].as_str()).collect();
    assert_eq!(kinds, ["allow_once", "reject_once"], "no rule to remember, no allow_always");

    std::fs::write(dir.path().join("a.txt"), "two\n").unwrap_or_else(|e| panic!("edit: {e}"));
    let result = ToolResult::text("e1", "Edited a.txt.", false, ToolStatus::Completed);
    let view = Some(ResultView::Diff { path: "a.txt".into(), unified: "-one\n+two\n".into() });
    let done =
        updates(live.event(AgentEvent::ToolResult { result, tool: "edit_file".into(), elapsed_ms: 3, view }));
    assert_eq!(done[0]["status"], "completed");
    assert_eq!(
        done[0]["content"],
        json!([{"type": "diff", "path": path, "oldText": "one\n", "newText": "two\n"}])
    );
    assert_eq!(done[0]["_meta"]["lathe"]["elapsed_ms"], 3);
}

#[test]
fn a_failed_call_is_failed_with_its_output() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let mut live = live(dir.path());
    let result = ToolResult::text("c1", "error: denied", true, ToolStatus::Denied);
    let done = updates(live.event(AgentEvent::ToolResult {
        result,
        tool: "shell".into(),
        elapsed_ms: 0,
        view: None,
    }));
    assert_eq!(done[0]["status"], "failed");
    assert_eq!(
        done[0]["content"],
        json!([{"type": "content", "content": {"type": "text", "text": "error: denied"}}])
    );
    assert_eq!(done[0]["_meta"]["lathe"]["status"], "denied");
}

#[test]
fn answers_become_ops() {
    let permission = Asked::Permission { call_id: "c".into() };
    assert_eq!(
        answer(&permission, Some(ALLOW_ALWAYS)),
        [AgentOp::Permission { call_id: "c".into(), answer: PermissionAnswer::AllowAlways }]
    );
    assert_eq!(
        answer(&permission, None),
        [AgentOp::Permission { call_id: "c".into(), answer: PermissionAnswer::Deny { feedback: None } }]
    );
    let plan = Asked::Plan { call_id: "p".into() };
    assert_eq!(
        answer(&plan, Some(ALLOW_ALWAYS)),
        [
            AgentOp::SetMode { mode: PermissionMode::AcceptEdits },
            AgentOp::PlanAnswer { call_id: "p".into(), answer: PlanAnswer::Approve },
        ]
    );
    let question = Asked::Question { call_id: "q".into(), options: vec!["red".into(), "blue".into()] };
    assert_eq!(
        answer(&question, Some("answer_1")),
        [AgentOp::QuestionAnswer {
            call_id: "q".into(),
            answer: QuestionAnswer::Answered { text: "blue".into() }
        }]
    );
    assert_eq!(
        answer(&question, Some("decline")),
        [AgentOp::QuestionAnswer { call_id: "q".into(), answer: QuestionAnswer::Declined }]
    );
}

#[test]
fn a_question_offers_its_options() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let live = live(dir.path());
    let asked =
        live.question(Question { call_id: "q".into(), question: "Which?".into(), options: vec!["a".into()] });
    let Action::Ask(request, _) = asked else { panic!("a question") };
    let request = serde_json::to_value(request).unwrap_or_default();
    let ids: Vec<&str> =
        request["options"].as_array().into_iter().flatten().filter_map(|o| o["optionId"].as_str()).collect();
    assert_eq!(ids, ["answer_0", "decline"]);
}

#[test]
fn mode_changes_and_todos_are_updates() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let mut live = live(dir.path());
    let mode = updates(live.event(AgentEvent::ModeChanged { mode: PermissionMode::Plan }));
    assert_eq!(mode, [json!({"sessionUpdate": "current_mode_update", "currentModeId": "plan"})]);
    assert_eq!(live.mode, PermissionMode::Plan);
    let todos =
        updates(live.event(AgentEvent::Todos { items: json!([{"content": "x", "status": "pending"}]) }));
    assert_eq!(todos[0]["sessionUpdate"], "plan");
}

#[test]
fn warnings_go_with_the_next_answer_once() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let mut live = live(dir.path());
    assert!(updates(live.event(AgentEvent::Warning { message: "config: odd key".into() })).is_empty());
    live.begin_turn();
    let stats = lathe_protocol::RunStats::default();
    let first = live
        .finished(&lathe_protocol::StopCause::Completed, &stats, None)
        .map(|r| serde_json::to_value(r).unwrap_or_default());
    assert_eq!(
        first.as_ref().map(|r| r["_meta"]["lathe"]["warnings"].clone()),
        Ok(json!(["config: odd key"]))
    );
    assert_eq!(first.map(|r| r["stopReason"].clone()), Ok(json!("end_turn")));
    let second = live
        .finished(&lathe_protocol::StopCause::Completed, &stats, None)
        .map(|r| serde_json::to_value(r).unwrap_or_default());
    assert_eq!(second.map(|r| r["_meta"]["lathe"]["warnings"].clone()), Ok(json!([])));
}
