#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

const TEXT: &str = "- user/pnpm.md — how we use pnpm\n- user/db.md — db_password=Zq8!rT2#kL9p\nlast line";

fn saved(clean: &mut CleanLines) {
    let (path, lines) = clean.pending_write().expect("lines were added");
    write(&path, &lines).unwrap();
}

#[test]
fn the_same_text_as_the_rules_give_and_only_clean_lines_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let mut clean = CleanLines::load(dir.path());
    assert!(clean.known.is_empty());
    let first = clean.redact_lines(TEXT);
    assert_eq!(first, secrets::redact_lines(TEXT));
    assert!(first.contains("[REDACTED:credential]"), "{first}");
    saved(&mut clean);
    assert!(clean.pending_write().is_none(), "nothing new to write");

    let mut again = CleanLines::load(dir.path());
    assert_eq!(again.known.len(), 2, "the two clean lines, not the one with a secret");
    assert_eq!(again.redact_lines(TEXT), first, "the line with a secret is redacted every time");
    assert!(again.pending_write().is_none(), "every clean line was known");
}

#[test]
fn a_known_line_with_other_text_is_scanned_again() {
    let dir = tempfile::tempdir().unwrap();
    let mut clean = CleanLines::load(dir.path());
    clean.redact_lines("- user/db.md — where the database lives\n");
    saved(&mut clean);
    let mut again = CleanLines::load(dir.path());
    let changed = "- user/db.md — where the database lives: postgres://app:Zq8rT2kL9p@db\n";
    assert!(again.redact_lines(changed).contains("[REDACTED:credential]"));
}

#[test]
fn a_record_of_other_rules_or_a_broken_one_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let mut clean = CleanLines::load(dir.path());
    clean.redact_lines("clean line\n");
    saved(&mut clean);
    let path = dir.path().join(FILE);
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes.len(), header().len() + 16);

    let other = String::from_utf8_lossy(&bytes).replace(&secrets::fingerprint(), &"0".repeat(64));
    std::fs::write(&path, other.as_bytes()).unwrap();
    assert!(CleanLines::load(dir.path()).known.is_empty(), "made by other rules");
    std::fs::write(&path, b"garbage").unwrap();
    assert!(CleanLines::load(dir.path()).known.is_empty());
}

#[cfg(unix)]
#[test]
fn the_record_is_private_and_holds_no_text() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let mut clean = CleanLines::load(&cache);
    clean.redact_lines("how we configure pnpm\n");
    saved(&mut clean);
    let path = cache.join(FILE);
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    let bytes = std::fs::read(&path).unwrap();
    assert!(!String::from_utf8_lossy(&bytes).contains("pnpm"));
}

#[test]
fn over_the_cap_only_the_lines_of_this_session_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let mut clean = CleanLines::load(dir.path());
    clean.known.extend((0..MAX_LINES as u32).map(|n| {
        let mut hash = [0u8; 16];
        hash[..4].copy_from_slice(&n.to_le_bytes());
        hash[15] = 1;
        hash
    }));
    clean.redact_lines("one\ntwo\n");
    let (_, lines) = clean.pending_write().unwrap();
    assert_eq!(lines.len(), 2);
}
