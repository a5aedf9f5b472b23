//! The files the model has read in a conversation, for the edit grammar
//! ([`crate::grammar::EditTarget`]).
//!
//! A file counts as read when a `read_file`, `write_file` or `edit_file` call on it got a result
//! that is not an error (the tools' stale-edit check accepts edits of exactly those files). Its
//! content is read from disk now, so the grammar follows every change made since.

use std::path::Path;

use lathe_protocol::{LedgerItem, ModelRequest};

use crate::grammar::{EditTarget, MAX_FILE_BYTES};

/// Tools whose successful call means the file's current content is known to the tools.
const READING_TOOLS: [&str; 3] = ["read_file", "write_file", "edit_file"];

/// Files the grammar describes at most (the most recently used ones).
pub const MAX_TARGETS: usize = 8;

/// The files `request`'s conversation has read, most recent last, resolved against `workspace`;
/// unreadable, non-UTF-8 or larger-than-[`MAX_FILE_BYTES`] files are left out.
pub fn edit_targets(request: &ModelRequest, workspace: &Path) -> Vec<EditTarget> {
    let mut calls = std::collections::HashMap::new();
    let mut paths: Vec<String> = Vec::new();
    for item in &request.messages {
        match item {
            LedgerItem::Assistant(message) => {
                for call in message.tool_calls() {
                    if READING_TOOLS.contains(&call.name.as_str())
                        && let Some(path) = call.arguments.get("path").and_then(|path| path.as_str())
                    {
                        calls.insert(call.id.clone(), path.to_string());
                    }
                }
            }
            LedgerItem::ToolResult(result) if !result.is_error => {
                if let Some(path) = calls.get(&result.call_id) {
                    paths.retain(|seen| seen != path);
                    paths.push(path.clone());
                }
            }
            LedgerItem::ToolResult(_)
            | LedgerItem::User(_)
            | LedgerItem::Compaction(_)
            | LedgerItem::Meta(_) => {}
        }
    }
    let avoid = failed_anchors(request);
    let mut targets: Vec<EditTarget> = paths
        .into_iter()
        .filter_map(|path| {
            let full = workspace.join(&path);
            let meta = std::fs::metadata(&full).ok()?;
            if !meta.is_file() || meta.len() > MAX_FILE_BYTES as u64 {
                return None;
            }
            let content = std::fs::read_to_string(&full).ok()?;
            let avoid = avoid.get(&path).cloned().unwrap_or_default();
            Some(EditTarget { path, content, avoid })
        })
        .collect();
    let excess = targets.len().saturating_sub(MAX_TARGETS);
    targets.drain(..excess);
    targets
}

/// For each path, the first lines of the `old_string`s of this user turn's `edit_file` calls on it
/// that failed (status `Failed`) since the last one that succeeded.
fn failed_anchors(request: &ModelRequest) -> std::collections::HashMap<String, Vec<String>> {
    let mut edits = std::collections::HashMap::new();
    let mut failed: std::collections::HashMap<String, Vec<String>> = std::collections::HashMap::new();
    for item in &request.messages {
        match item {
            LedgerItem::User(message) if message.origin == lathe_protocol::UserOrigin::User => failed.clear(),
            LedgerItem::Assistant(message) => {
                for call in message.tool_calls().filter(|call| call.name == "edit_file") {
                    let text = |key: &str| call.arguments.get(key).and_then(|value| value.as_str());
                    if let (Some(path), Some(old)) = (text("path"), text("old_string")) {
                        let first = old.split('\n').next().unwrap_or_default();
                        edits.insert(call.id.clone(), (path.to_string(), first.to_string()));
                    }
                }
            }
            LedgerItem::ToolResult(result) => {
                if let Some((path, first)) = edits.remove(&result.call_id) {
                    match result.status {
                        lathe_protocol::ToolStatus::Failed => failed.entry(path).or_default().push(first),
                        // Denied or interrupted: nothing about the anchor was learnt.
                        lathe_protocol::ToolStatus::Denied | lathe_protocol::ToolStatus::Interrupted => {}
                        lathe_protocol::ToolStatus::Completed => {
                            failed.remove(&path);
                        }
                    }
                }
            }
            LedgerItem::User(_) | LedgerItem::Compaction(_) | LedgerItem::Meta(_) => {}
        }
    }
    failed
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use lathe_protocol::{AssistantMessage, Content, ToolCall, ToolResult, ToolStatus};
    use serde_json::json;

    fn call(id: &str, name: &str, path: &str) -> LedgerItem {
        LedgerItem::Assistant(AssistantMessage {
            content: vec![Content::ToolCall(ToolCall {
                id: id.into(),
                name: name.into(),
                arguments: json!({"path": path}),
                incomplete: None,
            })],
            stop: lathe_protocol::StopReason::ToolUse,
            usage: lathe_protocol::Usage::default(),
            model: "local".into(),
        })
    }

    fn result(id: &str, is_error: bool) -> LedgerItem {
        let status = if is_error { ToolStatus::Failed } else { ToolStatus::Completed };
        LedgerItem::ToolResult(ToolResult::text(id, "x", is_error, status))
    }

    #[test]
    fn read_files_are_targets_with_their_current_content() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.py"), "a = 1\n").unwrap();
        std::fs::write(dir.path().join("b.py"), "b = 2\n").unwrap();
        std::fs::create_dir(dir.path().join("pkg")).unwrap();
        let request = ModelRequest {
            messages: vec![
                call("1", "read_file", "a.py"),
                result("1", false),
                call("2", "read_file", "b.py"),
                result("2", true),
                call("3", "read_file", "pkg"),
                result("3", false),
                call("4", "shell", "a.py"),
                result("4", false),
            ],
            ..ModelRequest::default()
        };
        std::fs::write(dir.path().join("a.py"), "a = 3\n").unwrap();
        let targets = edit_targets(&request, dir.path());
        assert_eq!(
            targets,
            vec![EditTarget { path: "a.py".into(), content: "a = 3\n".into(), avoid: vec![] }]
        );
    }

    #[test]
    fn the_anchors_of_failed_edits_are_avoided_until_an_edit_of_the_file_succeeds() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.py"), "x = 1\ny = 2\n").unwrap();
        let edit = |id: &str, old: &str| {
            LedgerItem::Assistant(AssistantMessage {
                content: vec![Content::ToolCall(ToolCall {
                    id: id.into(),
                    name: "edit_file".into(),
                    arguments: json!({"path": "a.py", "old_string": old, "new_string": "z"}),
                    incomplete: None,
                })],
                stop: lathe_protocol::StopReason::ToolUse,
                usage: lathe_protocol::Usage::default(),
                model: "local".into(),
            })
        };
        let mut messages = vec![
            call("1", "read_file", "a.py"),
            result("1", false),
            edit("2", "x = 1\ny = 2"),
            result("2", true),
        ];
        let avoid = |messages: &[LedgerItem]| {
            let request = ModelRequest { messages: messages.to_vec(), ..ModelRequest::default() };
            edit_targets(&request, dir.path()).pop().unwrap().avoid
        };
        assert_eq!(avoid(&messages), vec!["x = 1".to_string()]);
        messages.extend([edit("3", "y = 2"), result("3", false)]);
        assert_eq!(avoid(&messages), Vec::<String>::new(), "an edit of the file succeeded since");
        messages.extend([edit("4", "y = 2"), result("4", true)]);
        assert_eq!(avoid(&messages), vec!["y = 2".to_string()]);
        messages.push(LedgerItem::User(lathe_protocol::UserMessage::text("Now something else.")));
        assert_eq!(avoid(&messages), Vec::<String>::new(), "a new user turn starts afresh");
    }
}
