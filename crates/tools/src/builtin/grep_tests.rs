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
    assert_eq!(
        out,
        "No matches for \"nothing matches this\" in .. Files ignored by .gitignore and hidden files were not \
         searched; pass include_ignored: true to include them."
    );
}

#[tokio::test]
async fn include_ignored_searches_ignored_and_hidden_files() {
    let ws = project();
    let out =
        ws.ok("grep", json!({"pattern": "alpha", "output_mode": "files", "include_ignored": true})).await;
    assert_eq!(out, ".hidden/notes.rs\nbuild.log\nsrc/lib.rs\nsrc/main.rs\ntarget/debug/gen.rs\n");
}

#[tokio::test]
async fn symlinked_files_are_searched_and_linked_directories_named() {
    let ws = Workspace::new();
    ws.put("real/a.txt", b"needle in real\n");
    ws.put("b.txt", b"needle in b\n");
    std::os::unix::fs::symlink("b.txt", ws.path("link.txt")).unwrap();
    std::os::unix::fs::symlink("real", ws.path("alias")).unwrap();
    let out = ws.ok("grep", json!({"pattern": "needle"})).await;
    assert_eq!(
        out,
        "b.txt:1:needle in b\nlink.txt:1:needle in b\nreal/a.txt:1:needle in real\n[1 symlinked directory not \
         entered: alias -> real; pass one as path to search inside]\n"
    );
}

#[tokio::test]
async fn a_match_in_a_very_long_line_is_shown_in_a_window_with_its_column() {
    let ws = Workspace::new();
    let mut line = "a".repeat(2_000_000);
    line.replace_range(1_500_000..1_500_006, "NEEDLE");
    ws.put("min.js", &line);
    let out = ws.ok("grep", json!({"pattern": "NEEDLE", "path": "min.js"})).await;
    assert!(out.len() < 1_200, "{} bytes", out.len());
    let expected_window = format!("{}NEEDLE{}", "a".repeat(200), "a".repeat(794));
    assert_eq!(
        out,
        format!("min.js:1:1500001: …{expected_window}… [line of 2000000 chars; showing 1499801-1500800]\n")
    );
    // Two matches far apart in one line are two windows; a near one shares the window.
    let mut two = "b".repeat(10_000);
    two.replace_range(100..103, "HIT");
    two.replace_range(150..153, "HIT");
    two.replace_range(9_000..9_003, "HIT");
    ws.put("two.js", &two);
    let out = ws.ok("grep", json!({"pattern": "HIT", "path": "two.js"})).await;
    let columns: Vec<&str> = out.lines().map(|l| l.split(':').nth(2).unwrap()).collect();
    assert_eq!(columns, vec!["101", "9001"], "{out}");
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
