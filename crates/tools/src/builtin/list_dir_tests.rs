#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::test_support::Workspace;
use pretty_assertions::assert_eq;
use serde_json::json;

#[tokio::test]
async fn list_dir_shows_a_tree_to_depth_two_skipping_ignored_entries() {
    let ws = Workspace::new();
    ws.put(".gitignore", b"target/\n");
    ws.put("Cargo.toml", b"");
    ws.put("src/lib.rs", b"");
    ws.put("src/deep/er/x.rs", b"");
    ws.put("target/out", b"");
    let out = ws.ok("list_dir", json!({"path": "."})).await;
    assert_eq!(out, "./\n  Cargo.toml\n  src/\n    deep/\n    lib.rs\n");
    let out = ws.ok("list_dir", json!({"path": "src", "depth": 1})).await;
    assert_eq!(out, "src/\n  deep/\n  lib.rs\n");
}

#[tokio::test]
async fn list_dir_is_capped_with_a_note() {
    let ws = Workspace::new();
    for i in 0..520 {
        ws.put(&format!("many/{i:03}"), b"");
    }
    let out = ws.ok("list_dir", json!({"path": "many"})).await;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 502);
    assert!(lines[501].starts_with("[20 more entries not shown"), "{}", lines[501]);
}

#[tokio::test]
async fn list_dir_of_a_file_or_missing_path_is_an_error() {
    let ws = Workspace::new();
    ws.put("f.txt", b"");
    let err = ws.fails("list_dir", json!({"path": "f.txt"})).await;
    assert!(err.contains("not a directory"), "{err}");
    let err = ws.fails("list_dir", json!({"path": "missing"})).await;
    assert!(err.contains("does not exist"), "{err}");
}
