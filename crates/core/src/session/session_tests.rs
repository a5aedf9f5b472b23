#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;

use lathe_protocol::{LedgerItem, Meta, UserMessage};

use super::*;

#[test]
fn torn_last_line_is_skipped_and_the_rest_kept() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = SessionWriter::open(dir.path(), "s1").unwrap();
    writer.append(&LedgerItem::User(UserMessage::text("one"))).unwrap();
    writer.append(&LedgerItem::User(UserMessage::text("two"))).unwrap();
    std::fs::OpenOptions::new()
        .append(true)
        .open(writer.path())
        .unwrap()
        .write_all(br#"{"type":"user","content":[{"kind":"te"#)
        .unwrap();
    let loaded = load(writer.path()).unwrap();
    assert_eq!(loaded.items.len(), 2);
    assert_eq!(loaded.warnings.len(), 1);
    assert!(loaded.warnings[0].starts_with("line 3"), "{:?}", loaded.warnings);
    assert_eq!(latest(dir.path()).unwrap(), writer.path());

    // Resuming cuts the fragment, so the next item is a clean line and nothing is lost.
    let mut resumed = SessionWriter::open(dir.path(), "s1").unwrap();
    resumed.append(&LedgerItem::User(UserMessage::text("three"))).unwrap();
    let reloaded = load(resumed.path()).unwrap();
    assert_eq!(reloaded.items.len(), 3);
    assert!(reloaded.warnings.is_empty(), "{:?}", reloaded.warnings);
}

#[test]
fn corrupt_lines_are_skipped_with_a_warning_naming_each_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let good = |text: &str| serde_json::to_vec(&LedgerItem::User(UserMessage::text(text))).unwrap();
    let mut bytes = Vec::new();
    bytes.extend(good("one"));
    bytes.push(b'\n');
    bytes.extend(b"\0\0\0\0\0\0");
    bytes.push(b'\n');
    let mut invalid = good("two");
    let at = invalid.len() - 10;
    invalid.insert(at, 0xff);
    bytes.extend(invalid);
    bytes.push(b'\n');
    bytes.extend(b"{\"type\":\"user\",\"content\":[");
    bytes.push(b'\n');
    bytes.extend(good("three"));
    bytes.push(b'\n');
    std::fs::write(&path, bytes).unwrap();

    let loaded = load(&path).unwrap();
    let texts: Vec<String> = loaded
        .items
        .iter()
        .map(|item| match item {
            LedgerItem::User(message) => serde_json::to_string(&message.content).unwrap(),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert!(texts[0].contains("one") && texts[1].contains("three"), "{texts:?}");
    assert_eq!(loaded.warnings.len(), 3, "{:?}", loaded.warnings);
    assert!(loaded.warnings[0].starts_with("line 2: ") && loaded.warnings[0].contains("NUL"));
    assert!(loaded.warnings[1].starts_with("line 3: ") && loaded.warnings[1].contains("UTF-8"));
    assert!(loaded.warnings[2].starts_with("line 4: ") && loaded.warnings[2].contains("JSON"));
}

#[test]
fn a_failed_append_keeps_every_earlier_line_and_marks_the_file_incomplete() {
    // /dev/full accepts the open and fails every write with ENOSPC, as a full disk does.
    let dir = tempfile::tempdir().unwrap();
    let full = std::path::Path::new("/dev/full");
    assert!(full.exists(), "this test needs /dev/full");
    let path = dir.path().join("s.jsonl");
    std::os::unix::fs::symlink(full, &path).unwrap();
    let mut writer = SessionWriter::open(dir.path(), "s").unwrap();
    let error = writer.append(&LedgerItem::User(UserMessage::text("lost"))).unwrap_err();
    assert!(error.to_string().contains("No space left"), "{error}");

    // A regular file: earlier lines survive a failure and the marker is written when it fits.
    let mut writer = SessionWriter::open(dir.path(), "t").unwrap();
    writer.append(&LedgerItem::User(UserMessage::text("kept"))).unwrap();
    writer.sync().unwrap();
    let loaded = load(writer.path()).unwrap();
    assert_eq!(loaded.items.len(), 1);
    assert!(!loaded.incomplete);
    let mut bytes = std::fs::read(writer.path()).unwrap();
    bytes.extend(
        serde_json::to_vec(&LedgerItem::Meta(Meta::Incomplete { reason: "disk full".into() })).unwrap(),
    );
    bytes.push(b'\n');
    std::fs::write(writer.path(), bytes).unwrap();
    let loaded = load(writer.path()).unwrap();
    assert!(loaded.incomplete);
    assert_eq!(loaded.items.len(), 2);
}

#[test]
fn a_line_whose_only_fault_is_a_bad_byte_inside_a_string_is_read_with_the_byte_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let mut line = serde_json::to_vec(&LedgerItem::User(UserMessage::text("keep this text"))).unwrap();
    let at = line.windows(4).position(|w| w == b"this").unwrap();
    line.insert(at, 0xff);
    line.insert(at, 0);
    line.push(b'\n');
    std::fs::write(&path, line).unwrap();
    let loaded = load(&path).unwrap();
    assert_eq!(loaded.items.len(), 1, "{:?}", loaded.warnings);
    let LedgerItem::User(message) = &loaded.items[0] else { panic!("{:?}", loaded.items) };
    assert_eq!(message.text_content(), "keep \u{fffd}this text");
    assert!(loaded.warnings[0].starts_with("line 1: ") && loaded.warnings[0].contains("bad bytes left out"));
}

#[test]
fn continue_passes_over_a_newer_session_that_holds_no_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let mut real = SessionWriter::open(dir.path(), "real").unwrap();
    real.append(&LedgerItem::User(UserMessage::text("the work"))).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let mut empty = SessionWriter::open(dir.path(), "refused").unwrap();
    empty.append(&LedgerItem::Meta(Meta::Rewind { turn: 1 })).unwrap();
    assert_eq!(latest(dir.path()).unwrap(), real.path());
    std::fs::remove_file(real.path()).unwrap();
    assert_eq!(latest(dir.path()).unwrap(), empty.path(), "with no prompt anywhere, the newest");
}

#[test]
fn the_session_list_shows_the_typed_prompt_not_a_command_report() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = SessionWriter::open(dir.path(), "s1").unwrap();
    let mut message = UserMessage::text("why did it fail?");
    message.content.insert(
        0,
        lathe_protocol::Content::text(format!(
            "{}`make` (exit code 2). Its output:",
            crate::history::COMMAND_REPORT_PREFIX
        )),
    );
    writer.append(&LedgerItem::User(message)).unwrap();
    let listed = crate::session::list(dir.path());
    assert_eq!(listed[0].first_prompt, "why did it fail?");
}
