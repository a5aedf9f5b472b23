//! Reading a session file back: every line that parses, in order, with a warning for each line that
//! does not (a torn write after a crash, NUL bytes left by a filesystem, invalid UTF-8, a cut JSON
//! object). A line whose only fault is NUL bytes or invalid UTF-8 is read with them left out; a
//! line lost for good is repaired around when a request is built (`lathe_protocol::pairing`). Rewinds recorded in the file are applied, so the items are the conversation as it was
//! when the file was last written.

use std::path::{Path, PathBuf};

use lathe_protocol::{LedgerItem, Meta};

use super::SessionError;
use crate::history;

/// A session read back from disk.
#[derive(Debug)]
pub struct LoadedSession {
    /// The session id (file stem).
    pub id: String,
    /// The conversation's items in order (rewound items left out; see [`history::apply_rewinds`]).
    pub items: Vec<LedgerItem>,
    /// One line per skipped line: "line 7: torn or corrupt JSON (…); skipped".
    pub warnings: Vec<String>,
    /// The file records that saving failed at some point ([`Meta::Incomplete`]).
    pub incomplete: bool,
}

/// Reads a session file, skipping lines that do not parse.
pub fn load(path: &Path) -> Result<LoadedSession, SessionError> {
    let bytes =
        std::fs::read(path).map_err(|source| SessionError::Io { path: path.to_path_buf(), source })?;
    let mut items = Vec::with_capacity(bytes.len() / 512 + 1);
    let mut warnings = Vec::new();
    for (index, line) in bytes.split(|byte| *byte == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match parse_line(line) {
            Ok(item) => items.push(item),
            Err(problem) => match salvage(line) {
                Some(item) => {
                    warnings.push(format!("line {}: {problem}; read with the bad bytes left out", index + 1));
                    items.push(item);
                }
                None => warnings.push(format!("line {}: {problem}; skipped", index + 1)),
            },
        }
    }
    let incomplete = items.iter().any(|item| matches!(item, LedgerItem::Meta(Meta::Incomplete { .. })));
    let id = path.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_default();
    Ok(LoadedSession { id, items: history::apply_rewinds(items), warnings, incomplete })
}

fn parse_line(line: &[u8]) -> Result<LedgerItem, String> {
    if line.contains(&0) {
        return Err("contains NUL bytes (a torn write)".into());
    }
    let text = std::str::from_utf8(line)
        .map_err(|error| format!("not valid UTF-8 (at byte {})", error.valid_up_to()))?;
    serde_json::from_str(text).map_err(|error| format!("torn or corrupt JSON ({error})"))
}

/// What a line that does not parse as it stands still holds: the line with its NUL bytes dropped
/// and invalid UTF-8 replaced (U+FFFD), when that parses. A cut JSON object holds nothing.
fn salvage(line: &[u8]) -> Option<LedgerItem> {
    let kept: Vec<u8> = line.iter().copied().filter(|byte| *byte != 0).collect();
    serde_json::from_str(&String::from_utf8_lossy(&kept)).ok()
}

/// The session `--continue` picks in `dir`: the most recently modified session file that holds a
/// prompt, or the most recent file when none does. A run that ended before its first prompt
/// reached the ledger (refused at start, quit at once) leaves a file with no prompt in it, and
/// continuing that would lose the conversation before it.
pub fn latest(dir: &Path) -> Result<PathBuf, SessionError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(_) => return Err(SessionError::NoneFound(dir.to_path_buf())),
    };
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter(|entry| entry.path().extension().is_some_and(|ext| ext == "jsonl"))
        .filter_map(|entry| Some((entry.metadata().ok()?.modified().ok()?, entry.path())))
        .collect();
    files.sort_by_key(|(modified, _)| std::cmp::Reverse(*modified));
    let has_prompt = |path: &Path| {
        load(path).is_ok_and(|loaded| loaded.items.iter().any(|item| matches!(item, LedgerItem::User(_))))
    };
    let newest = files.first().map(|(_, path)| path.clone());
    files
        .into_iter()
        .map(|(_, path)| path)
        .find(|path| has_prompt(path))
        .or(newest)
        .ok_or_else(|| SessionError::NoneFound(dir.to_path_buf()))
}
