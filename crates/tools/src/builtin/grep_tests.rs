#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::test_support::Workspace;
use pretty_assertions::assert_eq;
use serde_json::json;

fn project() -> Workspace {
    let ws = Workspace::new();
    ws.put(".gitignore", b"target/\n*.log\n");
    ws.put("src/lib.rs", b"pub fn alpha() {}\n\npub fn beta() {}\nfn gamma() {}\n");
    ws.put("src/main.rs", b"fn main() {\n    alpha();\n}\n");
    ws.put("target/debug/gen.rs", b"pub fn alpha_generated() {}\n");
    ws.put("build.log", b"alpha in a log\n");
    ws.put(".hidden/notes.rs", b"fn alpha_hidden() {}\n");
    ws.put("blob.bin", b"alpha\0binary");
    ws
}

#[tokio::test]
async fn content_mode_lists_path_line_and_text_respecting_gitignore() {
    let ws = project();
    let out = ws.ok("grep", json!({"pattern": "alpha"})).await;
    assert_eq!(out, "src/lib.rs:1:pub fn alpha() {}\nsrc/main.rs:2:    alpha();\n");
}

#[tokio::test]
async fn files_and_count_modes() {
    let ws = project();
    let out = ws.ok("grep", json!({"pattern": "fn", "output_mode": "files"})).await;
    assert_eq!(out, "src/lib.rs\nsrc/main.rs\n");
    let out = ws.ok("grep", json!({"pattern": "fn", "output_mode": "count"})).await;
    assert_eq!(out, "src/lib.rs:3\nsrc/main.rs:1\n");
}

#[tokio::test]
async fn context_case_and_glob_options() {
    let ws = project();
    let out = ws.ok("grep", json!({"pattern": "BETA", "case_insensitive": true, "context": 1})).await;
    assert_eq!(out, "src/lib.rs-2-\nsrc/lib.rs:3:pub fn beta() {}\nsrc/lib.rs-4-fn gamma() {}\n");
    let out = ws.ok("grep", json!({"pattern": "fn", "glob": "main.*"})).await;
    assert_eq!(out, "src/main.rs:1:fn main() {\n");
    let out = ws.ok("grep", json!({"pattern": "nothing matches this"})).await;
    assert_eq!(out, "No matches for \"nothing matches this\" in ..");
}

#[tokio::test]
async fn an_explicitly_named_ignored_file_is_searched() {
    let ws = project();
    let out = ws.ok("grep", json!({"pattern": "alpha", "path": "build.log"})).await;
    assert_eq!(out, "build.log:1:alpha in a log\n");
}

#[tokio::test]
async fn results_are_capped_at_100_and_the_rest_is_counted() {
    let ws = Workspace::new();
    let text: String = (0..250).map(|i| format!("hit {i}\n")).collect();
    ws.put("many.txt", text);
    let out = ws.ok("grep", json!({"pattern": "hit"})).await;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 101);
    assert_eq!(lines[99], "many.txt:100:hit 99");
    assert!(lines[100].starts_with("[150 more matching lines not shown"), "{}", lines[100]);
}

#[tokio::test]
async fn an_invalid_regex_is_an_error_naming_it() {
    let ws = project();
    let err = ws.fails("grep", json!({"pattern": "fn (("})).await;
    assert!(err.contains("invalid regex") && err.contains("fn (("), "{err}");
}
