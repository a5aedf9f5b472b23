#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, SystemTime};

use crate::test_support::Workspace;
use pretty_assertions::assert_eq;
use serde_json::json;

fn set_mtime(path: &std::path::Path, secs_ago: u64) {
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(secs_ago)).unwrap();
}

#[tokio::test]
async fn glob_lists_matches_newest_first_respecting_gitignore() {
    let ws = Workspace::new();
    ws.put(".gitignore", b"ignored/\n");
    ws.put("old.py", b"");
    ws.put("pkg/new.py", b"");
    ws.put("pkg/mid.py", b"");
    ws.put("pkg/readme.md", b"");
    ws.put("ignored/skip.py", b"");
    set_mtime(&ws.path("old.py"), 300);
    set_mtime(&ws.path("pkg/mid.py"), 200);
    set_mtime(&ws.path("pkg/new.py"), 100);
    let out = ws.ok("glob", json!({"pattern": "**/*.py"})).await;
    assert_eq!(out, "pkg/new.py\npkg/mid.py\nold.py\n");
    let out = ws.ok("glob", json!({"pattern": "*.py"})).await;
    assert_eq!(out, "old.py\n", "`*` does not cross directories");
    let out = ws.ok("glob", json!({"pattern": "*.md", "path": "pkg"})).await;
    assert_eq!(out, "pkg/readme.md\n", "paths are relative to the workspace");
    let out = ws.ok("glob", json!({"pattern": "**/*.rs"})).await;
    assert!(out.starts_with("No files match"), "{out}");
}

#[tokio::test]
async fn a_pattern_naming_a_dot_file_finds_it() {
    let ws = Workspace::new();
    ws.put(".gitignore", b"*.log\n");
    let out = ws.ok("glob", json!({"pattern": ".gitignore"})).await;
    assert_eq!(out, ".gitignore\n");
}

#[tokio::test]
async fn a_symlink_loop_does_not_hang_glob() {
    let ws = Workspace::new();
    ws.put("a/file.txt", b"");
    std::os::unix::fs::symlink(ws.path("a"), ws.path("a/loop")).unwrap();
    std::os::unix::fs::symlink("..", ws.path("a/up")).unwrap();
    let out = tokio::time::timeout(Duration::from_secs(10), ws.call("glob", json!({"pattern": "**/*.txt"})))
        .await
        .expect("glob finished")
        .unwrap();
    assert_eq!(out.text_content(), "a/file.txt\n");
}

#[tokio::test]
async fn at_most_200_paths_are_listed() {
    let ws = Workspace::new();
    for i in 0..230 {
        ws.put(&format!("f/{i:03}.txt"), b"");
    }
    let out = ws.ok("glob", json!({"pattern": "f/*.txt"})).await;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 201);
    assert!(lines[200].starts_with("[30 more files not shown"), "{}", lines[200]);
}

#[tokio::test]
async fn an_invalid_pattern_is_an_error() {
    let ws = Workspace::new();
    let err = ws.fails("glob", json!({"pattern": "src/[a-"})).await;
    assert!(err.contains("invalid pattern"), "{err}");
}
