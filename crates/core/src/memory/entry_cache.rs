//! A record of parsed entries per memory folder, so a session start reads one file per scope and
//! stats each entry instead of opening, reading and parsing a thousand files.
//!
//! The record lives in Lathe's cache folder (`<lathe home>/cache/memory-entries/<key>.bin`, key
//! from the folder's path), is written with bincode, and is never trusted beyond what a stat can
//! confirm: an entry is taken from it only when the file's size, modification and change times
//! (nanoseconds) and inode are the ones recorded. A file changed within [`RACY`] of the moment its
//! entry would be recorded is not recorded (git's "racily clean" rule: a second change in the same
//! clock tick could keep every stamp), so it is read from disk until it is older. A record of
//! another format or another Lathe version is ignored; one that cannot be read or written only
//! costs the time it would have saved.

use std::collections::HashMap;
use std::fs;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::Scope;
use super::entry::{Entry, Frontmatter, MemoryType};

/// Changes this recent (to the moment of recording) are not recorded.
pub(crate) const RACY: Duration = Duration::from_secs(2);

/// Bumped whenever [`Cached`] or the parsing of entry files changes.
const FORMAT: u32 = 1;

/// What a stat says about a file: the record is used only while all of it is unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Stamp {
    size: u64,
    mtime_ns: i128,
    ctime_ns: i128,
    inode: u64,
    device: u64,
}

impl Stamp {
    /// The stamp of `meta` (from `symlink_metadata`).
    pub(crate) fn of(meta: &fs::Metadata) -> Stamp {
        let ns = |secs: i64, nanos: i64| i128::from(secs) * 1_000_000_000 + i128::from(nanos);
        Stamp {
            size: meta.len(),
            mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
            ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
            inode: meta.ino(),
            device: meta.dev(),
        }
    }

    /// Whether the file changed within [`RACY`] of `now`.
    fn racy(&self, now: SystemTime) -> bool {
        let now = now.duration_since(UNIX_EPOCH).map_or(0, |since| since.as_nanos() as i128);
        let window = RACY.as_nanos() as i128;
        self.mtime_ns.max(self.ctime_ns) > now - window
    }
}

/// An entry as recorded (bincode needs every field written, so no `skip_serializing_if` here).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Cached {
    stamp: Stamp,
    name: String,
    description: String,
    kind: MemoryType,
    source: String,
    created: String,
    modified: String,
    last_used: Option<String>,
    use_count: u32,
    expires: Option<String>,
    evidence: Vec<String>,
    body: String,
    warning: Option<String>,
}

impl Cached {
    fn of(stamp: Stamp, entry: &Entry) -> Cached {
        let meta = &entry.meta;
        Cached {
            stamp,
            name: meta.name.clone(),
            description: meta.description.clone(),
            kind: meta.kind,
            source: meta.source.clone(),
            created: meta.created.clone(),
            modified: meta.modified.clone(),
            last_used: meta.last_used.clone(),
            use_count: meta.use_count,
            expires: meta.expires.clone(),
            evidence: meta.evidence.clone(),
            body: entry.body.clone(),
            warning: entry.warning.clone(),
        }
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Record {
    format: u32,
    version: String,
    /// By file, relative to the scope root.
    entries: HashMap<String, Cached>,
}

/// The record of one scope's folder, loaded at start and written back when it changed.
#[derive(Debug, Default)]
pub(crate) struct EntryCache {
    path: Option<PathBuf>,
    record: Record,
    /// Entries found changed, added or gone since the record was read.
    changed: bool,
}

impl EntryCache {
    /// The record for the folder `root` kept under `cache_dir`; empty when there is none or it is
    /// of another format.
    pub(crate) fn load(cache_dir: &Path, root: &Path) -> EntryCache {
        let key = Sha256::digest(root.as_os_str().as_encoded_bytes());
        let name = hex::encode(&key[..12]);
        let path = cache_dir.join("memory-entries").join(format!("{name}.bin"));
        let record = fs::read(&path)
            .ok()
            .and_then(|bytes| bincode::deserialize::<Record>(&bytes).ok())
            .filter(|record| record.format == FORMAT && record.version == env!("CARGO_PKG_VERSION"))
            .unwrap_or_default();
        EntryCache { path: Some(path), record, changed: false }
    }

    /// The recorded entry of `file` (at `path`, in `scope`) when its stamp is still `stamp`.
    pub(crate) fn get(&self, scope: Scope, file: &str, path: &Path, stamp: Stamp) -> Option<Entry> {
        let cached = self.record.entries.get(file).filter(|cached| cached.stamp == stamp)?;
        Some(Entry {
            scope,
            file: file.to_string(),
            path: path.to_path_buf(),
            meta: Frontmatter {
                name: cached.name.clone(),
                description: cached.description.clone(),
                kind: cached.kind,
                source: cached.source.clone(),
                created: cached.created.clone(),
                modified: cached.modified.clone(),
                last_used: cached.last_used.clone(),
                use_count: cached.use_count,
                expires: cached.expires.clone(),
                evidence: cached.evidence.clone(),
            },
            body: cached.body.clone(),
            warning: cached.warning.clone(),
        })
    }

    /// Makes the record hold exactly `entries` (with the stamps they were read at), leaving out
    /// entries changed within [`RACY`] of `now`; marks it for writing when that changed it.
    pub(crate) fn update(&mut self, entries: &[(Stamp, &Entry)], now: SystemTime) {
        // The usual start: every entry read from the record, none recent, none gone.
        let unchanged = entries.len() == self.record.entries.len()
            && entries.iter().all(|(stamp, entry)| {
                !stamp.racy(now)
                    && self.record.entries.get(&entry.file).is_some_and(|cached| cached.stamp == *stamp)
            });
        if unchanged {
            return;
        }
        let mut next = HashMap::with_capacity(entries.len());
        for (stamp, entry) in entries {
            if stamp.racy(now) {
                continue;
            }
            let cached = match self.record.entries.remove(&entry.file) {
                Some(cached) if cached.stamp == *stamp => cached,
                _ => {
                    self.changed = true;
                    Cached::of(*stamp, entry)
                }
            };
            next.insert(entry.file.clone(), cached);
        }
        // Entries left over are gone from the folder or changed too recently.
        self.changed |= !self.record.entries.is_empty();
        self.record.entries = next;
    }

    /// Writes the record when [`update`](Self::update) changed it, on its own thread when
    /// `background` (to a temporary file renamed over the old one, so a reader never sees half a
    /// record).
    pub(crate) fn save(mut self, background: bool) {
        let Some(path) = self.path.take().filter(|_| self.changed) else { return };
        self.record.format = FORMAT;
        self.record.version = env!("CARGO_PKG_VERSION").to_string();
        let run = move || {
            if let Err(error) = write(&path, &self.record) {
                tracing::debug!("memory: the record of parsed entries was not written ({error})");
            }
        };
        if background {
            std::thread::spawn(run);
        } else {
            run();
        }
    }

    /// How many entries the record holds.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.record.entries.len()
    }
}

fn write(path: &Path, record: &Record) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let bytes = bincode::serialize(record).map_err(std::io::Error::other)?;
    // tempfile creates the file 0600: the record holds the memories' text.
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(&bytes)?;
    file.persist(path).map_err(|error| error.error)?;
    Ok(())
}

#[cfg(test)]
#[path = "entry_cache_tests.rs"]
mod tests;
