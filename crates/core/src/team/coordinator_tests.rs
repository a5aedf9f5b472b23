#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Coordinator mode on the lead's real tools: writes are refused while it is on, reading stays.

use std::sync::Arc;

use lathe_policy::{PermissionMode, Policy};
use lathe_tools::{ToolContext, ToolRegistry};
use serde_json::json;

use super::coordinator::{dispatches, gate};
use super::lead::{Roles, TeamHub};
use super::spawn::Launch;

#[test]
fn coordinator_mode_leaves_the_lead_only_its_read_only_tools() {
    let dir = tempfile::tempdir().expect("tempdir");
    let roles: Roles = Arc::new(|kind: &str| Err(format!("no agent type {kind}")));
    let policy = Arc::new(Policy::with_mode(PermissionMode::Default, dir.path()));
    let hub = Arc::new(TeamHub::new(
        dir.path().join("home"),
        dir.path().to_path_buf(),
        Launch::default(),
        roles,
        policy,
    ));
    let tools = gate(&ToolRegistry::builtin(), &hub);
    let ctx = ToolContext::new(dir.path().to_path_buf());
    let write = tools.get("write_file").expect("write_file");
    let args = json!({"path": "a.txt", "content": "x\n"});
    assert!(write.precheck(&args, &ctx).is_ok(), "allowed while the mode is off");
    hub.set_coordinator(true);
    let refused = write.precheck(&args, &ctx).expect_err("refused").to_string();
    assert!(refused.contains("coordinator mode is on") && refused.starts_with("write_file"), "{refused}");
    assert!(dispatches(tools.get("read_file").as_deref()) && dispatches(tools.get("grep").as_deref()));
    assert!(!dispatches(tools.get("shell").as_deref()) && !dispatches(tools.get("edit_file").as_deref()));
    hub.set_coordinator(false);
    assert!(write.precheck(&args, &ctx).is_ok(), "allowed again once the mode is off");
}
