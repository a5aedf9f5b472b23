#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use pretty_assertions::assert_eq;

#[test]
fn short_text_is_returned_unchanged_and_not_spilled() {
    let dir = tempfile::tempdir().unwrap();
    let (text, spilled) = cap_output("hello\n", 100, dir.path(), "t");
    assert_eq!(text, "hello\n");
    assert_eq!(spilled, None);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn long_text_keeps_head_and_tail_and_spills_everything() {
    let dir = tempfile::tempdir().unwrap();
    let full: String = (0..10_000).map(|i| format!("line {i}\n")).collect();
    let (text, spilled) = cap_output(&full, 2_000, dir.path(), "shell");
    let path = spilled.expect("spilled");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), full);
    assert!(text.chars().count() <= 2_000, "{} chars", text.chars().count());
    assert!(text.starts_with("line 0\nline 1\n"));
    assert!(text.ends_with("line 9999\n"));
    assert!(text.contains(&path.display().to_string()));
    assert!(text.contains("chars omitted"));
}

#[test]
fn multibyte_text_is_cut_on_char_boundaries() {
    let dir = tempfile::tempdir().unwrap();
    let full = "日本語".repeat(1_000);
    let (text, spilled) = cap_output(&full, 500, dir.path(), "x");
    assert!(spilled.is_some());
    assert!(text.starts_with("日本語"));
    assert!(text.ends_with("日本語"));
}

#[test]
fn ansi_colours_and_carriage_return_progress_are_cleaned() {
    let raw = b"\x1b[31mred\x1b[0m\tcol\r\n10%\r50%\r100% done\nplain\n\x1b[1;32mok\x1b[0m";
    assert_eq!(clean_terminal(raw), "red\tcol\n100% done\nplain\nok");
}
