//! `MEMORY.md`: the per-scope index Lathe keeps, one line per entry, so the model sees what
//! memory holds without reading every file.
//!
//! The index is rendered from the entries after every change and checked against its hard cap
//! ([`MAX_INDEX_LINES`] lines, [`MAX_INDEX_BYTES`] bytes, header included): a change that would
//! overflow it is refused as a whole; the index is never cut.

use super::{Entry, MAX_INDEX_BYTES, MAX_INDEX_LINES, MemoryError, Scope, clean_line};

/// The index of `scope`: a header line, then `- [type] name — description (file.md)` per entry,
/// sorted by file.
pub fn render_index(scope: Scope, entries: &[&Entry]) -> String {
    let mut out = header(scope);
    for entry in sorted(entries) {
        out.push_str(&line(entry));
    }
    out
}

/// The first line of a scope's index.
pub fn header(scope: Scope) -> String {
    format!("# Memory index ({scope}) — maintained by Lathe; edit entries, not this file\n")
}

/// `entries` in the order of the index (by file).
pub fn sorted<'a>(entries: &[&'a Entry]) -> Vec<&'a Entry> {
    let mut sorted: Vec<&Entry> = entries.to_vec();
    sorted.sort_by(|a, b| a.file.cmp(&b.file));
    sorted
}

/// The index line of one entry, `- [type] name — description (file.md)\n`.
pub fn line(entry: &Entry) -> String {
    let mut out = String::from("- [");
    out.push_str(entry.meta.kind.as_str());
    out.push_str("] ");
    out.push_str(&one_line(&entry.meta.name));
    out.push_str(" — ");
    out.push_str(&one_line(&entry.meta.description));
    out.push_str(" (");
    out.push_str(&clean_line(&entry.file));
    out.push_str(")\n");
    out
}

/// Checks an index text against the cap; [`MemoryError::IndexFull`] when over.
pub fn check_index(text: &str) -> Result<(), MemoryError> {
    let lines = text.lines().count();
    if lines > MAX_INDEX_LINES || text.len() > MAX_INDEX_BYTES {
        return Err(MemoryError::index_full(lines, text.len()));
    }
    Ok(())
}

fn one_line(text: &str) -> String {
    clean_line(text)
}

#[cfg(test)]
#[path = "index_tests.rs"]
mod tests;
