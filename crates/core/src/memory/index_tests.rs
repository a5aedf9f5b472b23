#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use pretty_assertions::assert_eq;

use super::*;
use crate::memory::MemoryType;
use crate::memory::test_support::meta;

fn entry(file: &str, kind: MemoryType, description: &str) -> Entry {
    Entry {
        scope: Scope::Project,
        file: file.to_string(),
        path: PathBuf::from(file),
        meta: meta(file.trim_end_matches(".md"), description, kind),
        body: String::new(),
        warning: None,
    }
}

#[test]
fn index_lists_entries_by_file() {
    let b = entry("pnpm.md", MemoryType::Project, "We use pnpm,\nnot npm");
    let a = entry("feedback/tone.md", MemoryType::Feedback, "Short answers");
    assert_eq!(
        render_index(Scope::Project, &[&b, &a]),
        "# Memory index (project) — maintained by Lathe; edit entries, not this file\n\
         - [feedback] feedback/tone — Short answers (feedback/tone.md)\n\
         - [project] pnpm — We use pnpm, not npm (pnpm.md)\n"
    );
}

#[test]
fn the_cap_counts_the_header_and_refuses_line_201() {
    let entries: Vec<Entry> =
        (0..200).map(|i| entry(&format!("e{i:03}.md"), MemoryType::Project, "d")).collect();
    let refs: Vec<&Entry> = entries.iter().collect();
    assert!(check_index(&render_index(Scope::Project, &refs[..199])).is_ok(), "200 lines fit");
    let text = render_index(Scope::Project, &refs);
    let error = check_index(&text).unwrap_err();
    let MemoryError::IndexFull { lines, bytes, max_lines, max_bytes } = error else { panic!("{error}") };
    assert_eq!((lines, bytes, max_lines, max_bytes), (201, text.len(), 200, 25 * 1024));
    let message = check_index(&text).unwrap_err().to_string();
    assert!(message.contains("refused") && message.contains("Nothing was cut"), "{message}");
    assert!(message.contains("Delete or merge entries"), "{message}");
}

#[test]
fn the_cap_counts_bytes() {
    let long = "d".repeat(300);
    let entries: Vec<Entry> =
        (0..90).map(|i| entry(&format!("e{i:03}.md"), MemoryType::Project, &long)).collect();
    let refs: Vec<&Entry> = entries.iter().collect();
    let text = render_index(Scope::Project, &refs);
    assert!(text.len() > MAX_INDEX_BYTES && text.lines().count() < MAX_INDEX_LINES);
    assert!(matches!(check_index(&text), Err(MemoryError::IndexFull { .. })));
}
