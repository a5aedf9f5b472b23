#![allow(clippy::unwrap_used, clippy::expect_used)]

use lathe_protocol::{FileChange, ResultView, ToolPreview};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::test_support::Workspace;

fn preview(ws: &Workspace, tool: &str, args: Value) -> Option<ToolPreview> {
    crate::ToolRegistry::builtin().get(tool).unwrap().preview(&args, &ws.ctx)
}

/// Marks `rel` as read in this session, as a `read_file` call would (an edit or overwrite of a
/// file never read fails its precheck, and has no preview).
fn seen(ws: &Workspace, rel: &str) {
    let path = ws.path(rel);
    let mtime = std::fs::metadata(&path).ok().and_then(|m| m.modified().ok());
    ws.ctx.files.record(&path, &ws.bytes(rel), mtime);
}

fn diff_of(preview: Option<ToolPreview>) -> (String, String, FileChange) {
    match preview {
        Some(ToolPreview::Diff { path, unified, change }) => (path, unified, change),
        other => panic!("expected a diff preview, got {other:?}"),
    }
}

#[test]
fn an_edit_previews_the_diff_of_the_file_on_disk() {
    let ws = Workspace::new();
    ws.put("src/lib.rs", "fn a() {}\n\nfn add(x: i32) -> i32 {\n    x + 1\n}\n");
    seen(&ws, "src/lib.rs");
    let args = json!({"path": "src/lib.rs", "old_string": "x + 1", "new_string": "x + 2"});
    let (path, unified, change) = diff_of(preview(&ws, "edit_file", args));
    assert_eq!((path.as_str(), change), ("src/lib.rs", FileChange::Edit));
    assert_eq!(
        unified,
        "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,5 +1,5 @@\n fn a() {}\n \n fn add(x: i32) -> i32 {\n-    x + 1\n+    x + 2\n }\n"
    );
    assert_eq!(
        ws.bytes("src/lib.rs"),
        b"fn a() {}\n\nfn add(x: i32) -> i32 {\n    x + 1\n}\n",
        "nothing written"
    );
}

#[test]
fn an_edit_of_a_crlf_file_previews_without_carriage_returns_and_honours_replace_all() {
    let ws = Workspace::new();
    ws.put("a.txt", b"one\r\ntwo\r\none\r\n");
    seen(&ws, "a.txt");
    let args = json!({"path": "a.txt", "old_string": "one", "new_string": "1", "replace_all": true});
    let (_, unified, _) = diff_of(preview(&ws, "edit_file", args));
    assert!(!unified.contains('\r'), "{unified:?}");
    assert_eq!(unified.matches("\n+1").count(), 2, "{unified}");
}

#[test]
fn an_edit_that_would_fail_has_no_preview() {
    let ws = Workspace::new();
    ws.put("a.txt", "hello\n");
    ws.put("blob.bin", b"\x00\x01\x02\xff\xfe");
    let missing = json!({"path": "nope.txt", "old_string": "a", "new_string": "b"});
    let not_there = json!({"path": "a.txt", "old_string": "bye", "new_string": "b"});
    let binary = json!({"path": "blob.bin", "old_string": "a", "new_string": "b"});
    let invalid = json!({"path": "a.txt"});
    for args in [missing, not_there, binary, invalid] {
        assert_eq!(preview(&ws, "edit_file", args.clone()), None, "{args}");
    }
}

#[test]
fn a_write_previews_against_the_existing_file_or_as_all_additions() {
    let ws = Workspace::new();
    ws.put("notes.txt", "first\nsecond\n");
    seen(&ws, "notes.txt");
    let (path, unified, change) =
        diff_of(preview(&ws, "write_file", json!({"path": "notes.txt", "content": "first\n2nd\n"})));
    assert_eq!((path.as_str(), change), ("notes.txt", FileChange::Write));
    assert_eq!(unified, "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,2 @@\n first\n-second\n+2nd\n");

    let (_, unified, _) =
        diff_of(preview(&ws, "write_file", json!({"path": "new/file.txt", "content": "a\nb\n"})));
    assert_eq!(unified, "--- a/new/file.txt\n+++ b/new/file.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n");
    assert!(!ws.path("new").exists(), "a preview creates nothing");
}

#[test]
fn a_command_previews_itself_and_its_directory() {
    let ws = Workspace::new();
    std::fs::create_dir_all(ws.path("sub")).unwrap();
    let root = ws.ctx.workspace.display().to_string();
    assert_eq!(
        preview(&ws, "shell", json!({"command": "cargo test"})),
        Some(ToolPreview::Command { command: "cargo test".into(), cwd: root.clone() })
    );
    assert_eq!(
        preview(&ws, "shell", json!({"command": "ls", "workdir": "sub"})),
        Some(ToolPreview::Command { command: "ls".into(), cwd: format!("{root}/sub") })
    );
    assert_eq!(preview(&ws, "read_file", json!({"path": "x"})), None, "reads need no preview");
}

#[tokio::test]
async fn results_carry_their_view() {
    let ws = Workspace::new();
    let created = ws.call("write_file", json!({"path": "n.txt", "content": "a\nb\n"})).await.unwrap();
    assert_eq!(
        created.view,
        Some(ResultView::Diff {
            path: "n.txt".into(),
            unified: "--- a/n.txt\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n".into()
        })
    );
    let read = ws.call("read_file", json!({"path": "n.txt"})).await.unwrap();
    assert_eq!(read.view, Some(ResultView::Line { text: "read 2 lines".into() }));
    let edited =
        ws.call("edit_file", json!({"path": "n.txt", "old_string": "b", "new_string": "c"})).await.unwrap();
    let Some(ResultView::Diff { unified, .. }) = &edited.view else { panic!("{:?}", edited.view) };
    assert!(edited.text_content().contains(unified.as_str()), "the view is the diff the model sees");
    let shell = ws.call("shell", json!({"command": "true"})).await.unwrap();
    assert_eq!(shell.view, None);
}

#[test]
fn summaries_show_what_a_person_needs() {
    let registry = crate::ToolRegistry::builtin();
    let summary = |tool: &str, args: Value| registry.get(tool).unwrap().summary(&args);
    assert_eq!(summary("read_file", json!({"path": "a.rs", "offset": 10, "limit": 50})), "a.rs:10-59");
    assert_eq!(summary("read_file", json!({"path": "a.rs", "offset": 10})), "a.rs:10-");
    assert_eq!(summary("read_file", json!({"path": "a.rs", "limit": 5})), "a.rs:1-5");
    assert_eq!(summary("todo_write", json!({"items": [{}, {}]})), "2 items");
    assert_eq!(summary("list_dir", json!({})), "");
    assert_eq!(summary("edit_file", json!({"path": "a.rs", "old_string": "x"})), "a.rs");
    assert_eq!(summary("shell", json!({"command": "cargo test\n&& echo ok"})), "cargo test …");
    assert_eq!(summary("grep", json!({"pattern": "fn main", "path": "src"})), "fn main in src");
    assert_eq!(crate::summarize_args(&json!({"q": 1})), "{\"q\":1}");
    let long = summary("shell", json!({"command": "x".repeat(200)}));
    assert_eq!((long.chars().count(), long.ends_with('…')), (120, true));
}
