//! A record, kept across sessions, of the lines already found free of secrets, so that the index
//! and the recalled entries given to the model are not scanned again — and the secret rules need
//! not compile at all — when the memory did not change.
//!
//! The record is `~/.lathe/cache/memory-clean-lines`: a first line
//! `lathe-memory-clean-lines <rules fingerprint>\n` ([`secrets::fingerprint`]), then one 16-byte
//! record per line: the first 16 bytes of the line's SHA-256. It holds no text. A record made by
//! other rules (another Lathe version) is ignored; a line is added only when the rules found
//! nothing in it, so a line with a secret is scanned (and redacted) every time. The record is
//! written whole to a temporary file renamed over the old one (0600); sessions writing at once
//! lose at most some lines, which are scanned again.

use std::io::Write;
use std::path::{Path, PathBuf};

use rustc_hash::FxHashSet;
use sha2::{Digest, Sha256};

use super::secrets;

/// The record's file name under Lathe's cache folder.
pub const FILE: &str = "memory-clean-lines";
/// Most lines kept (16 bytes each: 1.6 MB); over it, only the lines of the last session are kept.
pub const MAX_LINES: usize = 100_000;
const MAGIC: &str = "lathe-memory-clean-lines";

type LineHash = [u8; 16];

/// The lines known to be clean, and those this session used or found.
#[derive(Debug, Default)]
pub struct CleanLines {
    path: Option<PathBuf>,
    known: FxHashSet<LineHash>,
    /// Lines looked up or found clean in this session.
    used: FxHashSet<LineHash>,
    /// Whether lines were found clean that the file does not hold yet.
    changed: bool,
}

impl CleanLines {
    /// The record under `cache_dir` (empty when it is missing, unreadable or made by other rules).
    pub fn load(cache_dir: &Path) -> CleanLines {
        let path = cache_dir.join(FILE);
        let known = std::fs::read(&path).map(|bytes| parse(&bytes)).unwrap_or_default();
        CleanLines { path: Some(path), known, used: FxHashSet::default(), changed: false }
    }

    /// [`secrets::redact_lines`], skipping the lines known to be clean; the lines found clean are
    /// remembered (call [`CleanLines::save`] to keep them).
    pub fn redact_lines(&mut self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        for line in text.split_inclusive('\n') {
            let hash = line_hash(line);
            self.used.insert(hash);
            if self.known.contains(&hash) {
                out.push_str(line);
                continue;
            }
            let (redacted, found) = secrets::redact(line);
            if found.is_empty() {
                self.known.insert(hash);
                self.changed = true;
            }
            out.push_str(&redacted);
        }
        out
    }

    /// Writes the record in the background when lines were added since it was read.
    pub fn save(&mut self) {
        if let Some((path, lines)) = self.pending_write() {
            std::thread::spawn(move || {
                if let Err(error) = write(&path, &lines) {
                    tracing::debug!("memory: the record of clean lines was not written ({error})");
                }
            });
        }
    }

    /// Where to write and what, when lines were added since the record was read or written.
    fn pending_write(&mut self) -> Option<(PathBuf, Vec<LineHash>)> {
        let path = self.path.clone().filter(|_| self.changed)?;
        self.changed = false;
        let lines: Vec<LineHash> = if self.known.len() <= MAX_LINES {
            self.known.iter().copied().collect()
        } else {
            self.used.iter().filter(|hash| self.known.contains(*hash)).copied().take(MAX_LINES).collect()
        };
        Some((path, lines))
    }
}

fn line_hash(line: &str) -> LineHash {
    let digest = Sha256::digest(line.as_bytes());
    let mut hash = [0u8; 16];
    hash.copy_from_slice(&digest[..16]);
    hash
}

fn header() -> String {
    format!("{MAGIC} {}\n", secrets::fingerprint())
}

fn parse(bytes: &[u8]) -> FxHashSet<LineHash> {
    let header = header();
    let Some(records) = bytes.strip_prefix(header.as_bytes()) else { return FxHashSet::default() };
    records
        .chunks_exact(16)
        .map(|chunk| {
            let mut hash = [0u8; 16];
            hash.copy_from_slice(chunk);
            hash
        })
        .collect()
}

fn write(path: &Path, lines: &[LineHash]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut bytes = header().into_bytes();
    bytes.reserve(lines.len() * 16);
    for line in lines {
        bytes.extend_from_slice(line);
    }
    // tempfile creates the file 0600.
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(&bytes)?;
    file.persist(path).map_err(|error| error.error)?;
    Ok(())
}

#[cfg(test)]
#[path = "clean_lines_tests.rs"]
mod tests;
