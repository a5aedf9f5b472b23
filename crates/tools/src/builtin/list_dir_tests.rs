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
    assert_eq!(
        out,
        "./\n  Cargo.toml\n  src/\n    deep/\n    lib.rs\n[2 ignored or hidden entries not shown: .gitignore, \
         target/; pass include_ignored: true to include them]\n"
    );
    let out = ws.ok("list_dir", json!({"path": "src", "depth": 1})).await;
    assert_eq!(out, "src/\n  deep/\n  lib.rs\n");
    let out = ws.ok("list_dir", json!({"path": ".", "depth": 1, "include_ignored": true})).await;
    assert_eq!(out, "./\n  .gitignore\n  Cargo.toml\n  src/\n  target/\n");
}

#[tokio::test]
async fn list_dir_shows_symlinks_with_their_targets_without_entering_them() {
    let ws = Workspace::new();
    ws.put("real/inside.txt", b"");
    ws.put("file.txt", b"");
    std::os::unix::fs::symlink("real", ws.path("alias")).unwrap();
    std::os::unix::fs::symlink("file.txt", ws.path("link.txt")).unwrap();
    std::os::unix::fs::symlink("gone.txt", ws.path("broken")).unwrap();
    let out = ws.ok("list_dir", json!({"path": "."})).await;
    assert_eq!(
        out,
        "./\n  alias/ -> real (symlink, not entered)\n  broken -> gone.txt (broken symlink)\n  file.txt\n  \
         link.txt -> file.txt\n  real/\n    inside.txt\n"
    );
}

#[tokio::test]
async fn an_ignored_directory_named_as_the_path_is_listed() {
    let ws = Workspace::new();
    ws.put(".gitignore", b"dist/\n");
    ws.put("dist/bundle.js", b"");
    assert_eq!(ws.ok("list_dir", json!({"path": "dist"})).await, "dist/\n  bundle.js\n");
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

#[tokio::test]
async fn links_to_the_directory_itself_or_an_ancestor_are_not_entered_at_any_depth() {
    let ws = Workspace::new();
    ws.put("a/b/file.txt", b"");
    std::os::unix::fs::symlink(".", ws.path("a/self")).unwrap();
    std::os::unix::fs::symlink("..", ws.path("a/b/up")).unwrap();
    std::os::unix::fs::symlink(ws.path("a"), ws.path("a/b/abs")).unwrap();
    for path in [".", "a", "a/self", "a/b/up"] {
        let out = ws.ok("list_dir", json!({"path": path, "depth": 6})).await;
        assert!(out.lines().count() < 12, "{path}: {out}");
        assert_eq!(out.matches("file.txt").count(), 1, "{path}: {out}");
        let entered = out.lines().skip(1).any(|line| line.ends_with("self/") || line.ends_with("up/"));
        assert!(!entered, "{path}: {out}");
    }
}
