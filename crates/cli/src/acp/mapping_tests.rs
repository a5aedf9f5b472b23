use std::path::Path;

use agent_client_protocol::v1::schema as acp;
use lathe_protocol::{Content, PermissionMode, StopCause, StopReason};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::*;

/// A value as it goes on the wire.
macro_rules! wire {
    ($value:expr) => {
        serde_json::to_value($value).unwrap_or_default()
    };
}

#[test]
fn tools_get_acp_kinds_and_titles() {
    assert_eq!(wire!(&tool_kind("read_file")), json!("read"));
    assert_eq!(wire!(&tool_kind("edit_file")), json!("edit"));
    assert_eq!(wire!(&tool_kind("shell")), json!("execute"));
    assert_eq!(wire!(&tool_kind("grep")), json!("search"));
    assert_eq!(wire!(&tool_kind("web_fetch")), json!("fetch"));
    assert_eq!(wire!(&tool_kind("exit_plan_mode")), json!("switch_mode"));
    assert_eq!(wire!(&tool_kind("mcp__github__search")), json!("other"));
    assert_eq!(tool_title("shell", "cargo test"), "cargo test");
    assert_eq!(tool_title("edit_file", "src/a.rs"), "Edit src/a.rs");
    assert_eq!(tool_title("mcp__s__t", ""), "mcp__s__t");
}

#[test]
fn a_path_argument_is_a_location_in_the_workspace() {
    let workspace = Path::new("/ws");
    let locations = tool_locations(&json!({"path": "src/a.rs", "offset": 40}), workspace);
    assert_eq!(wire!(&locations), json!([{"path": "/ws/src/a.rs", "line": 40}]));
    let locations = tool_locations(&json!({"path": "/etc/hosts"}), workspace);
    assert_eq!(wire!(&locations), json!([{"path": "/etc/hosts"}]));
    assert!(tool_locations(&json!({"command": "ls"}), workspace).is_empty());
}

#[test]
fn stop_causes_map_to_acp_stop_reasons() {
    let reason = |cause: StopCause, last, cancelled| stop_reason(&cause, last, cancelled).map(|r| wire!(r));
    assert_eq!(reason(StopCause::Completed, Some(StopReason::EndTurn), false), Ok(json!("end_turn")));
    assert_eq!(reason(StopCause::Completed, Some(StopReason::MaxTokens), false), Ok(json!("max_tokens")));
    assert_eq!(reason(StopCause::MaxTurns { max_turns: 3 }, None, false), Ok(json!("max_turn_requests")));
    assert_eq!(
        reason(StopCause::Budget { detail: "cost".into() }, None, false),
        Ok(json!("max_turn_requests"))
    );
    assert_eq!(
        reason(StopCause::ContextExhausted { detail: "x".into() }, None, false),
        Ok(json!("max_tokens"))
    );
    assert_eq!(reason(StopCause::Refused, None, false), Ok(json!("refusal")));
    assert_eq!(reason(StopCause::Cancelled, None, false), Ok(json!("cancelled")));
    // A cancel the client sent ends the turn `cancelled`, whatever the run's own end was.
    assert_eq!(reason(StopCause::Completed, None, true), Ok(json!("cancelled")));
    let error = StopCause::Error { kind: "auth".into(), message: "bad key".into() };
    assert_eq!(reason(error, None, false), Err("auth: bad key".to_string()));
}

#[test]
fn prompt_blocks_become_a_user_message() {
    let blocks: Vec<acp::ContentBlock> = serde_json::from_value(json!([
        {"type": "text", "text": "fix it"},
        {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
        {"type": "resource", "resource": {"uri": "file:///ws/a.rs", "text": "fn main() {}"}},
        {"type": "resource_link", "uri": "file:///ws/b.rs", "name": "b.rs"},
    ]))
    .unwrap_or_else(|e| panic!("blocks: {e}"));
    assert_eq!(
        prompt_content(&blocks),
        vec![
            Content::text("fix it"),
            Content::Image { media_type: "image/png".into(), data: "iVBORw0KGgo=".into() },
            Content::text("<context ref=\"file:///ws/a.rs\">\nfn main() {}\n</context>"),
            Content::text("[@b.rs](file:///ws/b.rs)"),
        ]
    );
}

#[test]
fn blank_text_is_no_prompt() {
    let blocks: Vec<acp::ContentBlock> = serde_json::from_value(json!([
        {"type": "text", "text": ""}, {"type": "text", "text": " \n\t"},
    ]))
    .unwrap_or_else(|e| panic!("blocks: {e}"));
    assert_eq!(prompt_content(&blocks), Vec::<Content>::new());
    let blocks: Vec<acp::ContentBlock> = serde_json::from_value(json!([
        {"type": "text", "text": "  "}, {"type": "text", "text": "look"},
    ]))
    .unwrap_or_else(|e| panic!("blocks: {e}"));
    assert_eq!(prompt_content(&blocks), vec![Content::text("look")]);
}

#[test]
fn permission_modes_are_session_modes() {
    let modes = wire!(&session_modes(PermissionMode::AcceptEdits));
    assert_eq!(modes["currentModeId"], json!("accept-edits"));
    let ids: Vec<&str> =
        modes["availableModes"].as_array().into_iter().flatten().filter_map(|m| m["id"].as_str()).collect();
    assert_eq!(ids, ["default", "accept-edits", "plan", "auto", "dont-ask", "bypass"]);
    for id in ids {
        assert!(id.parse::<PermissionMode>().is_ok(), "{id} parses back");
    }
}

#[test]
fn the_todo_list_is_a_plan() {
    let items = json!([{"content": "read", "status": "completed"}, {"content": "fix", "status": "in_progress"},
                       {"content": "test", "status": "pending"}]);
    assert_eq!(
        wire!(&plan(&items)),
        json!({"entries": [
            {"content": "read", "priority": "medium", "status": "completed"},
            {"content": "fix", "priority": "medium", "status": "in_progress"},
            {"content": "test", "priority": "medium", "status": "pending"},
        ]})
    );
}

#[test]
fn client_mcp_servers_become_an_inline_mcp_config() {
    let servers: Vec<acp::McpServer> = serde_json::from_value(json!([
        {"name": "fs", "command": "/usr/bin/mcp-fs", "args": ["/ws"], "env": [{"name": "LEVEL", "value": "debug"}]},
        {"type": "http", "name": "api", "url": "http://127.0.0.1:9/mcp", "headers": [{"name": "X-Key", "value": "k"}]},
    ]))
    .unwrap_or_else(|e| panic!("servers: {e}"));
    let config: Value = serde_json::from_str(&mcp_config(&servers).unwrap_or_default())
        .unwrap_or_else(|e| panic!("json: {e}"));
    assert_eq!(
        config,
        json!({"mcpServers": {
            "fs": {"command": "/usr/bin/mcp-fs", "args": ["/ws"], "env": {"LEVEL": "debug"}},
            "api": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"X-Key": "k"}},
        }})
    );
    assert_eq!(mcp_config(&[]), None);
}

#[test]
fn an_edit_s_new_text_comes_from_its_arguments() {
    let edit = json!({"path": "a", "old_string": "one", "new_string": "two"});
    assert_eq!(edited_text("edit_file", &edit, Some("one one")), Some("two one".into()));
    let all = json!({"path": "a", "old_string": "one", "new_string": "two", "replace_all": true});
    assert_eq!(edited_text("edit_file", &all, Some("one one")), Some("two two".into()));
    assert_eq!(edited_text("edit_file", &edit, Some("nothing")), None);
    assert_eq!(edited_text("write_file", &json!({"path": "a", "content": "x\n"}), None), Some("x\n".into()));
}
