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
    let text = out.text_content();
    assert!(text.starts_with("a/file.txt\n[2 symlinked directories not entered: "), "{text}");
    assert!(text.contains("a/up -> ..") && text.ends_with("pass one as path to search inside]\n"), "{text}");
}

#[tokio::test]
async fn a_pattern_naming_an_ignored_path_finds_it() {
    let ws = Workspace::new();
    ws.put(".gitignore", b"dist/\n*.log\n");
    ws.put("dist/bundle.js", b"");
    ws.put("dist/vendor.js", b"");
    ws.put("logs/run.log", b"");
    ws.put("src/app.js", b"");
    assert_eq!(ws.ok("glob", json!({"pattern": "dist/bundle.js"})).await, "dist/bundle.js\n");
    assert_eq!(ws.ok("glob", json!({"pattern": "logs/run.log"})).await, "logs/run.log\n");
    let out = ws.ok("glob", json!({"pattern": "dist/*.js"})).await;
    assert_eq!(out.lines().count(), 2, "{out}");
    assert_eq!(ws.ok("glob", json!({"pattern": "**/*.js"})).await, "src/app.js\n");
    let out = ws.ok("glob", json!({"pattern": "**/bundle.js"})).await;
    assert_eq!(
        out,
        "No files match \"**/bundle.js\" under .. 1 ignored or hidden file would match (dist/bundle.js); \
         pass include_ignored: true to include them.\n"
    );
    let out = ws.ok("glob", json!({"pattern": "**/bundle.js", "include_ignored": true})).await;
    assert_eq!(out, "dist/bundle.js\n");
}

#[tokio::test]
async fn symlinks_to_files_match_and_linked_directories_are_named_not_entered() {
    let ws = Workspace::new();
    ws.put("real/data.txt", b"");
    ws.put("notes.txt", b"");
    std::os::unix::fs::symlink(ws.path("notes.txt"), ws.path("link.txt")).unwrap();
    std::os::unix::fs::symlink(ws.path("real"), ws.path("alias")).unwrap();
    let out = ws.ok("glob", json!({"pattern": "**/*.txt"})).await;
    let mut lines: Vec<&str> = out.lines().collect();
    let note = lines.pop().unwrap();
    lines.sort();
    assert_eq!(lines, vec!["link.txt", "notes.txt", "real/data.txt"]);
    assert!(note.starts_with("[1 symlinked directory not entered: alias -> "), "{note}");
    // Named as the path, the linked directory is searched.
    assert_eq!(ws.ok("glob", json!({"pattern": "*.txt", "path": "alias"})).await, "alias/data.txt\n");
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
