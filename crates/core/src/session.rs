//! The session store: one append-only JSONL file per session (FEATURES.md §G).
//!
//! Each line is one [`LedgerItem`] as JSON. Writing appends and flushes before the loop moves on
//! (ARCHITECTURE.md §4.2), so a crash loses at most the line being written. Loading skips a torn or
//! corrupt line with a warning and keeps everything else; the pairing guard then answers any call left
//! without a result.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use lathe_protocol::LedgerItem;

/// Errors of the session store.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The file could not be created, opened or written.
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
        cut_torn_tail(&file).map_err(io)?;
        Ok(SessionWriter { path, file })
    }

    /// The session file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one item as a line and flushes it to the OS before returning.
    pub fn append(&mut self, item: &LedgerItem) -> Result<(), SessionError> {
        let mut line = serde_json::to_vec(item)
            .map_err(|error| SessionError::Io { path: self.path.clone(), source: error.into() })?;
        line.push(b'\n');
        self.file
            .write_all(&line)
            .and_then(|()| self.file.flush())
            .map_err(|source| SessionError::Io { path: self.path.clone(), source })
    }
}

/// Truncates `file` after its last newline when it does not end with one.
fn cut_torn_tail(file: &File) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(());
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
            return Ok(());
        }
        if let Some(newline) = chunk.iter().rposition(|byte| *byte == b'\n') {
            return file.set_len(start + newline as u64 + 1);
        }
        if start == 0 {
            return file.set_len(0);
        }
        end = start;
    }
}

/// A session read back from disk.
#[derive(Debug)]
pub struct LoadedSession {
    /// The session id (file stem).
    pub id: String,
    /// The items that parsed, in order.
    pub items: Vec<LedgerItem>,
    /// One line per skipped line: "line 7: torn or corrupt (…); skipped".
    pub warnings: Vec<String>,
}

/// Reads a session file, skipping lines that do not parse.
pub fn load(path: &Path) -> Result<LoadedSession, SessionError> {
    let io = |source| SessionError::Io { path: path.to_path_buf(), source };
    let reader = BufReader::new(File::open(path).map_err(io)?);
    let mut items = Vec::new();
    let mut warnings = Vec::new();
    for (number, line) in reader.split(b'\n').enumerate() {
        let line = line.map_err(io)?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<LedgerItem>(&line) {
            Ok(item) => items.push(item),
            Err(error) => warnings.push(format!("line {}: torn or corrupt ({error}); skipped", number + 1)),
        }
    }
    let id = path.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_default();
    Ok(LoadedSession { id, items, warnings })
}

/// The most recently modified session file in `dir`.
pub fn latest(dir: &Path) -> Result<PathBuf, SessionError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(_) => return Err(SessionError::NoneFound(dir.to_path_buf())),
    };
    entries
        .filter_map(Result::ok)
        .filter(|entry| entry.path().extension().is_some_and(|ext| ext == "jsonl"))
        .filter_map(|entry| Some((entry.metadata().ok()?.modified().ok()?, entry.path())))
        .max_by_key(|(modified, _)| *modified)
        .map(|(_, path)| path)
        .ok_or_else(|| SessionError::NoneFound(dir.to_path_buf()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use lathe_protocol::UserMessage;

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
}
