use serde_json::json;

use crate::agent::{AgentEvent, RunStats, StopCause};
use crate::ledger::{ToolCall, ToolResult, ToolStatus};
use crate::preview::{FileChange, ResultView, ToolPreview};

fn call() -> ToolCall {
    ToolCall {
        id: "c1".into(),
        name: "shell".into(),
        arguments: json!({"command": "make"}),
        incomplete: None,
    }
}

#[test]
fn deltas_are_the_streamed_pieces_only() {
    let deltas = [
        AgentEvent::TextDelta { text: "a".into() },
        AgentEvent::ThinkingDelta { text: "b".into() },
        AgentEvent::OutputProgress { chars: 3 },
    ];
    assert!(deltas.iter().all(AgentEvent::is_stream_delta));
    let others = [
        AgentEvent::TurnStarted { turn: 1 },
        AgentEvent::ToolCallStarted { call: call(), summary: "make".into() },
        AgentEvent::Warning { message: "w".into() },
        AgentEvent::Finished {
            cause: StopCause::Completed,
            stats: RunStats::default(),
            final_text: String::new(),
            report: None,
        },
    ];
    assert!(!others.iter().any(AgentEvent::is_stream_delta));
}

#[test]
fn only_a_permission_request_waits_for_an_answer() {
    let request =
        AgentEvent::PermissionRequest { call: call(), reason: "r".into(), suggestion: None, preview: None };
    assert!(request.needs_answer());
    assert!(!AgentEvent::ToolCallStarted { call: call(), summary: String::new() }.needs_answer());
    assert!(!AgentEvent::TextDelta { text: String::new() }.needs_answer());
    let wrapped = AgentEvent::Subagent {
        parent_call_id: "t1".into(),
        agent_id: "explore-1".into(),
        subagent_type: "explore".into(),
        event: Box::new(request),
    };
    assert!(!wrapped.needs_answer(), "a wrapped request is not answered through the wrapper");
}

#[test]
fn previews_and_views_round_trip_and_stay_optional() {
    let preview = ToolPreview::Diff {
        path: "src/lib.rs".into(),
        unified: "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1 +1 @@\n-a\n+b\n".into(),
        change: FileChange::Edit,
    };
    let request = AgentEvent::PermissionRequest {
        call: call(),
        reason: "edits a file".into(),
        suggestion: None,
        preview: Some(preview),
    };
    let text = serde_json::to_string(&request).unwrap_or_default();
    assert!(text.contains(r#""preview":{"kind":"diff","path":"src/lib.rs""#), "{text}");
    assert!(text.contains(r#""change":"edit""#), "{text}");
    assert_eq!(serde_json::from_str::<AgentEvent>(&text).ok(), Some(request));

    let command = ToolPreview::Command { command: "make".into(), cwd: "/w".into() };
    let value = serde_json::to_value(&command).unwrap_or_default();
    assert_eq!(value, json!({"kind": "command", "command": "make", "cwd": "/w"}));

    // Events written before these fields existed still read, with the fields empty.
    let old = json!({"type": "tool_call_started", "call": {"id": "c1", "name": "shell", "arguments": {}}});
    let read: AgentEvent = serde_json::from_value(old).unwrap_or(AgentEvent::TurnStarted { turn: 0 });
    assert!(matches!(read, AgentEvent::ToolCallStarted { summary, .. } if summary.is_empty()));
    let result = AgentEvent::ToolResult {
        result: ToolResult::text("c1", "ok", false, ToolStatus::Completed),
        tool: "read_file".into(),
        elapsed_ms: 3,
        view: None,
    };
    let value = serde_json::to_value(&result).unwrap_or_default();
    assert!(value.get("view").is_none(), "{value}");
    let viewed = AgentEvent::ToolResult {
        result: ToolResult::text("c1", "ok", false, ToolStatus::Completed),
        tool: "read_file".into(),
        elapsed_ms: 3,
        view: Some(ResultView::Line { text: "read 2 lines".into() }),
    };
    let value = serde_json::to_value(&viewed).unwrap_or_default();
    assert_eq!(value["view"], json!({"kind": "line", "text": "read 2 lines"}));
}
