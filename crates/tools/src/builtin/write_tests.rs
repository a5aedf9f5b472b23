#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::test_support::Workspace;
use pretty_assertions::assert_eq;
use serde_json::json;

#[tokio::test]
async fn write_creates_parent_directories_and_reports_the_size() {
    let ws = Workspace::new();
    let out = ws.ok("write_file", json!({"path": "a/b/c.txt", "content": "hello\nworld\n"})).await;
    assert_eq!(out, "Created a/b/c.txt (12 bytes, 2 lines).");
    assert_eq!(ws.bytes("a/b/c.txt"), b"hello\nworld\n");
}

#[tokio::test]
async fn overwriting_requires_a_prior_read() {
    let ws = Workspace::new();
    ws.put("x.txt", b"original\n");
    let err = ws.fails("write_file", json!({"path": "x.txt", "content": "new\n"})).await;
    assert!(err.contains("has not been read") && err.contains("read_file"), "{err}");
    assert_eq!(ws.bytes("x.txt"), b"original\n");
    ws.ok("read_file", json!({"path": "x.txt"})).await;
    let out = ws.ok("write_file", json!({"path": "x.txt", "content": "new\n"})).await;
    assert!(out.starts_with("Overwrote x.txt (4 bytes, 1 lines)."), "{out}");
    assert!(out.contains("-original\n+new\n"), "{out}");
    assert_eq!(ws.bytes("x.txt"), b"new\n");
}

#[tokio::test]
async fn overwriting_a_file_changed_on_disk_since_it_was_read_fails() {
    let ws = Workspace::new();
    ws.put("x.txt", b"v1\n");
    ws.ok("read_file", json!({"path": "x.txt"})).await;
    ws.put("x.txt", b"v2 from elsewhere\n");
    let err = ws.fails("write_file", json!({"path": "x.txt", "content": "v3\n"})).await;
    assert!(err.contains("modified since it was read"), "{err}");
    assert_eq!(ws.bytes("x.txt"), b"v2 from elsewhere\n");
}

#[tokio::test]
async fn a_written_file_counts_as_read_in_its_new_state() {
    let ws = Workspace::new();
    ws.ok("write_file", json!({"path": "n.txt", "content": "one\n"})).await;
    ws.ok("write_file", json!({"path": "n.txt", "content": "two\n"})).await;
    ws.ok("edit_file", json!({"path": "n.txt", "old_string": "two", "new_string": "three"})).await;
    assert_eq!(ws.bytes("n.txt"), b"three\n");
}

#[tokio::test]
async fn writing_to_a_directory_is_refused() {
    let ws = Workspace::new();
    ws.put("d/file", b"");
    let err = ws.fails("write_file", json!({"path": "d", "content": "x"})).await;
    assert!(err.contains("is a directory"), "{err}");
}

#[tokio::test]
async fn overwriting_keeps_the_bom_and_crlf_line_endings() {
    let ws = Workspace::new();
    ws.put("w.cs", b"\xEF\xBB\xBFline1\r\nline2\r\nline3\r\n");
    ws.ok("read_file", json!({"path": "w.cs"})).await;
    let out = ws.ok("write_file", json!({"path": "w.cs", "content": "café\n"})).await;
    assert!(
        out.starts_with("Overwrote w.cs (10 bytes, 1 lines; kept UTF-8 with BOM, CRLF line endings)."),
        "{out}"
    );
    assert_eq!(ws.bytes("w.cs"), b"\xEF\xBB\xBFcaf\xC3\xA9\r\n");
    // A BOM character the model copied into the content is not doubled; the file counts as read.
    ws.ok("write_file", json!({"path": "w.cs", "content": "\u{FEFF}a\r\nb\n"})).await;
    assert_eq!(ws.bytes("w.cs"), b"\xEF\xBB\xBFa\r\nb\r\n");
}

#[tokio::test]
async fn overwriting_an_lf_file_with_crlf_content_keeps_lf() {
    let ws = Workspace::new();
    ws.put("u.txt", b"one\ntwo\n");
    ws.ok("read_file", json!({"path": "u.txt"})).await;
    ws.ok("write_file", json!({"path": "u.txt", "content": "three\r\nfour\r\n"})).await;
    assert_eq!(ws.bytes("u.txt"), b"three\nfour\n");
}

#[tokio::test]
async fn utf16_and_latin1_files_keep_their_encoding_or_the_write_is_refused() {
    let ws = Workspace::new();
    let utf16 = |text: &str| {
        let mut bytes = vec![0xFF, 0xFE];
        text.encode_utf16().for_each(|unit| bytes.extend_from_slice(&unit.to_le_bytes()));
        bytes
    };
    ws.put("w16.txt", utf16("old\n"));
    ws.ok("read_file", json!({"path": "w16.txt"})).await;
    let out = ws.ok("write_file", json!({"path": "w16.txt", "content": "héllo → ✓\n"})).await;
    assert!(out.contains("kept UTF-16LE with BOM"), "{out}");
    assert_eq!(ws.bytes("w16.txt"), utf16("héllo → ✓\n"));

    ws.put("latin.txt", b"caf\xE9\n");
    ws.ok("read_file", json!({"path": "latin.txt"})).await;
    let out = ws.ok("write_file", json!({"path": "latin.txt", "content": "déjà vu\n"})).await;
    assert!(out.contains("kept Windows-1252 (Latin-1)"), "{out}");
    assert_eq!(ws.bytes("latin.txt"), b"d\xE9j\xE0 vu\n");
    let err = ws.fails("write_file", json!({"path": "latin.txt", "content": "arrow → here\n"})).await;
    assert!(
        err.contains("left unchanged") && err.contains("Windows-1252 (Latin-1)") && err.contains('→'),
        "{err}"
    );
    assert_eq!(ws.bytes("latin.txt"), b"d\xE9j\xE0 vu\n");
}

#[tokio::test]
async fn overwriting_most_of_a_read_file_is_written_with_a_warning() {
    let ws = Workspace::new();
    let old: String = (1..=12).map(|i| format!("def f{i}():\n    return {i}\n\n")).collect();
    ws.put("m.py", old.as_bytes());
    ws.ok("read_file", json!({"path": "m.py"})).await;
    let out = ws.ok("write_file", json!({"path": "m.py", "content": "def f1():\n    return 1\n"})).await;
    assert!(out.contains("warning: this write removed 22 of the 24 lines the file had (kept 2;"), "{out}");
    assert!(out.contains("restore them"), "{out}");
    assert_eq!(ws.bytes("m.py"), b"def f1():\n    return 1\n", "the write still happens");
}

#[test]
fn the_shrink_warning_needs_a_real_file_and_most_of_it_gone() {
    use super::shrink_warning;
    let lines = |n: usize| (0..n).map(|i| format!("line {i}\n")).collect::<String>();
    // Small files are rewritten freely.
    assert_eq!(shrink_warning(&lines(7), ""), None);
    // Half kept (4 of 8) is not "most of it gone"; 3 of 8 is.
    assert_eq!(shrink_warning(&lines(8), &lines(4)), None);
    assert!(shrink_warning(&lines(8), &lines(3)).is_some_and(|w| w.contains("removed 5 of the 8 lines")));
    // Reordered and re-indented-at-the-end lines still count as kept; blank lines never count.
    let old = format!("{}\n\n\n", lines(10));
    let reversed: String = old.lines().rev().map(|line| format!("{line}  \n")).collect();
    assert_eq!(shrink_warning(&old, &reversed), None);
    // One new line matches one old line at most.
    let repeated = "same\n".repeat(10);
    assert!(shrink_warning(&repeated, "same\nsame\n").is_some_and(|w| w.contains("kept 2")));
}

#[tokio::test]
async fn the_create_only_variant_creates_but_never_overwrites() {
    let ws = Workspace::new().with_tool(std::sync::Arc::new(super::CreateFile));
    let out = ws.ok("write_file", json!({"path": "new/count.py", "content": "print(1)\n"})).await;
    assert_eq!(out, "Created new/count.py (9 bytes, 1 lines).");
    ws.put("keep.py", b"def f():\n    return 1\n");
    ws.ok("read_file", json!({"path": "keep.py"})).await;
    let err = ws.fails("write_file", json!({"path": "keep.py", "content": "def f():\n"})).await;
    assert!(err.contains("already exists") && err.contains("edit_file"), "{err}");
    assert_eq!(ws.bytes("keep.py"), b"def f():\n    return 1\n");
}

#[tokio::test]
async fn file_tools_count_the_lines_they_change_even_when_the_diff_is_cut() {
    let ws = Workspace::new();
    let many: String = (0..8_000).map(|n| format!("line {n}\n")).collect();
    let created = ws.call("write_file", json!({"path": "big.txt", "content": many})).await.unwrap();
    let Some(lathe_protocol::ResultView::Diff { unified, .. }) = &created.view else {
        panic!("{:?}", created.view)
    };
    assert!(unified.contains("[diff cut at"), "the shown diff is cut");
    let lines = |path: &str, added, removed| lathe_protocol::FileLines { path: path.into(), added, removed };
    assert_eq!(created.change, Some(lines("big.txt", 8_000, 0)));
    let edited = ws
        .call("edit_file", json!({"path": "big.txt", "old_string": "line 7\n", "new_string": "seven\n7\n"}))
        .await
        .unwrap();
    assert_eq!(edited.change, Some(lines("big.txt", 2, 1)));
    let same = ws.call("write_file", json!({"path": "big.txt", "content": ws_text(&ws)})).await.unwrap();
    assert_eq!(same.change, None, "an unchanged file is no change");
}

fn ws_text(ws: &Workspace) -> String {
    String::from_utf8(ws.bytes("big.txt")).unwrap()
}
