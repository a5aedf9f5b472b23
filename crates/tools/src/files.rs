//! Read-before-write state ([`FileTracker`]), text decoding that can be undone byte-exactly
//! ([`text`]), and the check an image passes before it is sent to a model ([`image`]).
//!
//! Every successful `read_file` (whole file or a range), `write_file` and `edit_file` records the
//! file's content hash, length and mtime under its canonical path. Before overwriting or editing
//! an existing file, `write_file`/`edit_file` ask [`FileTracker::check_unchanged`] with the bytes
//! now on disk: a file never seen in this session, or whose content changed since, is refused so
//! the model never clobbers edits it has not seen.

pub mod image;
pub mod text;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use sha2::{Digest, Sha256};

/// What was known about a file when the session last read or wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileState {
    /// SHA-256 of the bytes on disk.
    pub hash: [u8; 32],
    /// Length in bytes.
    pub len: u64,
    /// Modification time, when the file system reports one.
    pub mtime: Option<SystemTime>,
}

/// Why a file may not be overwritten or edited yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Staleness {
    /// The session has never read, written or edited this file.
    NeverRead,
    /// The bytes on disk differ from those last read or written.
    ChangedOnDisk,
}

/// Per-session record of file states, keyed by canonical path; shared by all calls
/// (`Arc<FileTracker>` in the [`crate::ToolContext`]). Thread-safe.
#[derive(Debug, Default)]
pub struct FileTracker {
    states: Mutex<HashMap<PathBuf, FileState>>,
    leftovers: Mutex<Vec<LeftoverName>>,
}

/// A name an edit took out of the lines it replaced while the file still used it elsewhere: a
/// rename that may be unfinished (see [`FileTracker::unfinished_renames`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftoverName {
    /// The edited file.
    pub path: PathBuf,
    /// The workspace-relative (or absolute) path as the edit result showed it.
    pub shown: String,
    /// The name (an identifier).
    pub name: String,
    /// The renaming edit's `old_string` and `new_string` (as applied), to recognise an edit that
    /// undoes it.
    pub edit: (String, String),
}

impl FileTracker {
    /// An empty tracker.
    pub fn new() -> FileTracker {
        FileTracker::default()
    }

    /// Records that the session has seen `bytes` as the content of `path` (modified at `mtime`).
    pub fn record(&self, path: &Path, bytes: &[u8], mtime: Option<SystemTime>) {
        let state = FileState { hash: hash(bytes), len: bytes.len() as u64, mtime };
        let key = key(path);
        if let Ok(mut states) = self.states.lock() {
            states.insert(key, state);
        }
    }

    /// The recorded state of `path`, if any.
    pub fn state(&self, path: &Path) -> Option<FileState> {
        let key = key(path);
        self.states.lock().ok()?.get(&key).copied()
    }

    /// Whether `current` (the bytes now on disk) is what the session last saw for `path`.
    /// A file whose mtime changed but whose content did not (a `touch`) is still unchanged.
    pub fn check_unchanged(&self, path: &Path, current: &[u8]) -> Result<(), Staleness> {
        let state = self.state(path).ok_or(Staleness::NeverRead)?;
        if state.len == current.len() as u64 && state.hash == hash(current) {
            Ok(())
        } else {
            Err(Staleness::ChangedOnDisk)
        }
    }

    /// Notes a name `edit_file` replaced that the file still uses elsewhere.
    pub fn note_leftover(&self, leftover: LeftoverName) {
        if let Ok(mut leftovers) = self.leftovers.lock()
            && !leftovers.contains(&leftover)
        {
            leftovers.push(leftover);
        }
    }

    /// Whether replacing `old` by `new` in `path` undoes a noted renaming edit (its `old_string`
    /// and `new_string` swapped, surrounding whitespace aside) whose leftover name is not yet
    /// taken by [`Self::unfinished_renames`]: the name that edit replaced.
    pub fn undone_rename(&self, path: &Path, old: &str, new: &str) -> Option<String> {
        let leftovers = self.leftovers.lock().ok()?;
        leftovers
            .iter()
            .find(|left| {
                left.path == path && left.edit.1.trim() == old.trim() && left.edit.0.trim() == new.trim()
            })
            .map(|left| left.name.clone())
    }

    /// Takes the noted leftovers (the list is empty afterwards) and reads their files again: for each
    /// name a file still uses, a line `  <file> line <n>: <text>` (up to 5 per name; 1-based). `None`
    /// when every noted name is gone (the model finished the rename) or nothing was noted. Reads the
    /// files (blocking; only files an edit just wrote).
    pub fn unfinished_renames(&self) -> Option<String> {
        let leftovers = match self.leftovers.lock() {
            Ok(mut leftovers) => std::mem::take(&mut *leftovers),
            Err(_) => return None,
        };
        let mut lines = Vec::new();
        for leftover in leftovers {
            let Ok(text) = std::fs::read_to_string(&leftover.path) else { continue };
            let uses = crate::builtin::lines_using(&text, &leftover.name);
            if uses.is_empty() {
                continue;
            }
            lines.push(format!("`{}` is still used in {}:", leftover.name, leftover.shown));
            lines.push(crate::builtin::edit_hint::listed_lines(&uses));
        }
        (!lines.is_empty()).then(|| lines.join("\n"))
    }

    /// Forgets `path` (e.g. after it was deleted).
    pub fn forget(&self, path: &Path) {
        let key = key(path);
        if let Ok(mut states) = self.states.lock() {
            states.remove(&key);
        }
    }
}

fn hash(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

fn key(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn unseen_file_is_never_read_and_changed_content_is_detected() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        std::fs::write(&path, b"one\n").unwrap();
        let tracker = FileTracker::new();
        assert_eq!(tracker.check_unchanged(&path, b"one\n"), Err(Staleness::NeverRead));
        tracker.record(&path, b"one\n", None);
        assert_eq!(tracker.check_unchanged(&path, b"one\n"), Ok(()));
        assert_eq!(tracker.check_unchanged(&path, b"two\n"), Err(Staleness::ChangedOnDisk));
        // The same file reached through a different spelling of its path is the same entry.
        let other = dir.path().join(".").join("a.txt");
        assert_eq!(tracker.check_unchanged(&other, b"one\n"), Ok(()));
        tracker.forget(&path);
        assert_eq!(tracker.check_unchanged(&path, b"one\n"), Err(Staleness::NeverRead));
    }
}
