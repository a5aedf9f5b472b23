//! The session store: one append-only JSONL file per session (FEATURES.md §G).
//!
//! Each line is one [`LedgerItem`] as JSON. [`SessionWriter::append`] writes a line and hands it to
//! the OS before the loop moves on (ARCHITECTURE.md §4.2); [`SessionWriter::sync`] makes it durable
//! (`fsync`) and runs at every turn end. A failed append (a full disk) cuts the file back to its last
//! complete line, tries to record a [`Meta::Incomplete`] marker, and reports the error: the caller
//! stops saving and warns, and nothing written before is lost.
//!
//! Reading back is [`load`] (torn or corrupt lines skipped with a warning naming the line; rewinds
//! applied, see [`crate::history`]); [`list`] summarises a project's sessions for `lathe sessions`
//! and the resume picker.

mod list;
mod load;

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use lathe_protocol::{LedgerItem, Meta};

pub use list::{SessionSummary, list};
pub use load::{LoadedSession, latest, load};

/// Errors of the session store.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The file could not be created, opened, read or written.
    #[error("session file {path}: {source}")]
    Io {
        /// The session file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// No session exists for this directory.
    #[error("no previous session found in {0}")]
    NoneFound(PathBuf),
}

/// An open session file that items are appended to.
#[derive(Debug)]
pub struct SessionWriter {
    path: PathBuf,
    file: File,
    /// Length in bytes of the complete lines written so far; a failed append cuts back to it.
    len: u64,
}

impl SessionWriter {
    /// Creates (or opens for append) the file `dir/<id>.jsonl`, creating `dir`.
    ///
    /// A torn last line (a crash mid-write; [`load`] skipped it with a warning) is cut off first, so
    /// the next item starts on a line of its own instead of being glued to the fragment.
    pub fn open(dir: &Path, id: &str) -> Result<SessionWriter, SessionError> {
        let path = dir.join(format!("{id}.jsonl"));
        let io = |source| SessionError::Io { path: path.clone(), source };
        std::fs::create_dir_all(dir).map_err(io)?;
        let file = OpenOptions::new().create(true).read(true).append(true).open(&path).map_err(io)?;
        let len = cut_torn_tail(&file).map_err(io)?;
        Ok(SessionWriter { path, file, len })
    }

    /// The session file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one item as a line and hands it to the OS before returning.
    ///
    /// On failure the file is cut back to its last complete line, a [`Meta::Incomplete`] marker is
    /// attempted, and the error is returned; the writer should not be used further.
    pub fn append(&mut self, item: &LedgerItem) -> Result<(), SessionError> {
        let line = encode(item).map_err(|source| SessionError::Io { path: self.path.clone(), source })?;
        match self.file.write_all(&line) {
            Ok(()) => {
                self.len += line.len() as u64;
                Ok(())
            }
            Err(source) => {
                let _ = self.file.set_len(self.len);
                let marker = LedgerItem::Meta(Meta::Incomplete { reason: source.to_string() });
                if let Ok(marker) = encode(&marker)
                    && self.file.write_all(&marker).is_err()
                {
                    let _ = self.file.set_len(self.len);
                }
                Err(SessionError::Io { path: self.path.clone(), source })
            }
        }
    }

    /// Makes everything appended so far durable (`fsync` of the data).
    pub fn sync(&self) -> Result<(), SessionError> {
        self.file.sync_data().map_err(|source| SessionError::Io { path: self.path.clone(), source })
    }
}

fn encode(item: &LedgerItem) -> std::io::Result<Vec<u8>> {
    let mut line = serde_json::to_vec(item)?;
    line.push(b'\n');
    Ok(line)
}

/// Truncates `file` after its last newline when it does not end with one; returns the length kept.
fn cut_torn_tail(file: &File) -> std::io::Result<u64> {
    use std::io::{Read, Seek, SeekFrom};
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(0);
    }
    let mut reader = file;
    let mut end = len;
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let start = end.saturating_sub(buffer.len() as u64);
        let chunk = &mut buffer[..(end - start) as usize];
        reader.seek(SeekFrom::Start(start))?;
        reader.read_exact(chunk)?;
        if end == len && chunk.last() == Some(&b'\n') {
            return Ok(len);
        }
        if let Some(newline) = chunk.iter().rposition(|byte| *byte == b'\n') {
            let keep = start + newline as u64 + 1;
            file.set_len(keep)?;
            return Ok(keep);
        }
        if start == 0 {
            file.set_len(0)?;
            return Ok(0);
        }
        end = start;
    }
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
