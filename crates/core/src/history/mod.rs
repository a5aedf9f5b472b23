//! File history for `/rewind` (FEATURES.md §G).
//!
//! Before `write_file` or `edit_file` changes a file, its bytes (or the fact that it did not exist)
//! are saved once per user turn: the bytes go to `<session>/files/<sha256>` (content-addressed, so
//! an unchanged file costs nothing twice) and a [`Meta::FileSnapshot`] item records the turn, the
//! path and the blob in the ledger, so a resumed session knows its history. A rewind to user turn
//! N writes back, for every file changed in turn N or later, the state saved by its first snapshot
//! from turn N on, deletes files that did not exist then, and cuts the conversation just before
//! turn N's message ([`Meta::Rewind`] in the append-only file; [`apply_rewinds`] replays it).
//!
//! Not covered: `shell` commands. A command can change any file (`sed -i`, `rm`, a build), and
//! which ones cannot be known before it runs, so their changes are not snapshotted and a rewind does
//! not undo them — unless the same file was also changed by `write_file`/`edit_file` in the turns
//! rewound, in which case its saved state is restored like any other.

mod rewind;

use std::io::Write;
use std::path::{Path, PathBuf};

use lathe_protocol::{Content, ToolCall, UserMessage};
use sha2::{Digest, Sha256};

pub use rewind::{RewindError, apply_rewinds, plan, turn_starts, user_turns};

/// Files larger than this are not snapshotted (a warning says so).
pub const MAX_SNAPSHOT_BYTES: u64 = 64 * 1024 * 1024;

/// The content-addressed blob store of one session: `<session>/files/`.
#[derive(Debug, Clone)]
pub struct FileHistory {
    dir: PathBuf,
}

impl FileHistory {
    /// The store in `dir` (created on the first snapshot).
    pub fn new(dir: PathBuf) -> FileHistory {
        FileHistory { dir }
    }

    /// The folder holding the blobs.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Saves the current bytes of `path`: `Some(blob)` (its SHA-256 hex), or `None` when the file
    /// does not exist. The blob is synced to disk before this returns.
    pub fn save(&self, path: &Path) -> std::io::Result<Option<String>> {
        let bytes = match std::fs::metadata(path) {
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(error),
            Ok(meta) if meta.len() > MAX_SNAPSHOT_BYTES => {
                return Err(std::io::Error::other(format!(
                    "{} bytes is more than the {MAX_SNAPSHOT_BYTES}-byte snapshot limit",
                    meta.len()
                )));
            }
            Ok(_) => std::fs::read(path)?,
        };
        let blob = hex::encode(Sha256::digest(&bytes));
        let target = self.dir.join(&blob);
        if !target.is_file() {
            std::fs::create_dir_all(&self.dir)?;
            let mut temp = tempfile::NamedTempFile::new_in(&self.dir)?;
            temp.write_all(&bytes)?;
            temp.as_file().sync_data()?;
            temp.persist(&target).map_err(|error| error.error)?;
        }
        Ok(Some(blob))
    }

    /// The bytes saved as `blob`, checked against their hash.
    pub fn read(&self, blob: &str) -> std::io::Result<Vec<u8>> {
        let bytes = std::fs::read(self.dir.join(blob))?;
        if hex::encode(Sha256::digest(&bytes)) != blob {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("saved copy {blob} is damaged (its hash does not match)"),
            ));
        }
        Ok(bytes)
    }
}

/// The file a call would change, when it is one the history covers (`write_file`, `edit_file`
/// with a complete `path` argument).
pub fn changed_path(call: &ToolCall) -> Option<&str> {
    if call.incomplete.is_some() || !matches!(call.name.as_str(), "write_file" | "edit_file") {
        return None;
    }
    call.arguments.get("path").and_then(|path| path.as_str())
}

/// How the report of a `!cmd` the user ran starts; the report is prepended to the next prompt's
/// message as a text block of its own.
pub const COMMAND_REPORT_PREFIX: &str = "I ran a shell command myself: ";

/// What the user typed in a user message: its text blocks joined with newlines, without the
/// reports of `!cmd` commands Lathe prepended ([`COMMAND_REPORT_PREFIX`]) and the memory it
/// attached ([`crate::memory::session::RECALL_PREFIX`]) — the prompt the
/// session list, the turn list and a rewind show.
pub fn message_text(message: &UserMessage) -> String {
    let parts: Vec<&str> = message
        .content
        .iter()
        .filter_map(|content| match content {
            Content::Text { text }
                if !text.starts_with(COMMAND_REPORT_PREFIX)
                    && !text.starts_with(crate::memory::session::RECALL_PREFIX) =>
            {
                Some(text.as_str())
            }
            Content::Text { .. } | Content::Image { .. } | Content::Thinking(_) | Content::ToolCall(_) => {
                None
            }
        })
        .collect();
    parts.join("\n")
}

#[cfg(test)]
#[path = "history_tests.rs"]
mod tests;
