//! Reading the memory folders: every `*.md` file under each scope root, recursively, except the
//! `MEMORY.md` index files.
//!
//! Nothing is dropped silently: a file with missing or broken frontmatter is loaded with a
//! fallback frontmatter and a warning; a file over [`MAX_ENTRY_BYTES`], a symbolic link, a name
//! holding control or invisible characters or an unreadable folder is skipped with a warning
//! naming it. Symbolic links are never followed, and
//! hidden files and folders (`.name`) are not memories. Entries come in scope order, then by file.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::entry::{self, Entry, Frontmatter};
use super::entry_cache::{EntryCache, Stamp};
use super::{INDEX_FILE, MAX_ENTRY_BYTES, Roots, Scope};

/// The entries found and the problems met, one sentence each naming the file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Loaded {
    /// The entries, sorted by scope then file.
    pub entries: Vec<Entry>,
    /// One warning per skipped or partly read file or folder.
    pub warnings: Vec<String>,
}

/// Loads every scope of `roots` whose folder exists.
pub fn load(roots: &Roots) -> Loaded {
    load_cached(roots, None)
}

/// Loads every scope of `roots` whose folder exists, taking unchanged entries from the records of
/// parsed entries kept in `cache_dir` (Lathe's cache folder) and updating those records in the
/// background; the result is the same as [`load`]'s.
pub fn load_cached(roots: &Roots, cache_dir: Option<&Path>) -> Loaded {
    let cache = cache_dir.map(|dir| Caching { dir, now: SystemTime::now(), background: true });
    load_with(roots, cache)
}

/// Brings the records of parsed entries in Lathe's cache folder (next to the user scope's folder)
/// up to date now, so an entry just forgotten leaves no copy there.
pub fn refresh_records(roots: &Roots) {
    if let Some(home) = roots.user.parent() {
        let dir = home.join("cache");
        load_with(roots, Some(Caching { dir: &dir, now: SystemTime::now(), background: false }));
    }
}

/// Where the records of parsed entries are kept, the time their entries are judged recent against
/// (see [`super::entry_cache::RACY`]) and whether they are written on their own thread.
#[derive(Clone, Copy)]
pub(crate) struct Caching<'a> {
    pub dir: &'a Path,
    pub now: SystemTime,
    pub background: bool,
}

pub(crate) fn load_with(roots: &Roots, cache: Option<Caching<'_>>) -> Loaded {
    let mut loaded = Loaded::default();
    for scope in Scope::ALL {
        load_into(roots, scope, cache, &mut loaded);
    }
    loaded
}

/// Loads one scope (empty when it has no folder).
pub fn load_scope(roots: &Roots, scope: Scope) -> Loaded {
    let mut loaded = Loaded::default();
    load_into(roots, scope, None, &mut loaded);
    loaded
}

fn load_into(roots: &Roots, scope: Scope, caching: Option<Caching<'_>>, loaded: &mut Loaded) {
    let Some(root) = roots.root(scope) else { return };
    let Ok(meta) = fs::metadata(root) else { return };
    if let Err(error) = roots.real_root(scope) {
        loaded.warnings.push(format!("{}: {error}", root.display()));
        return;
    }
    if !meta.is_dir() {
        loaded
            .warnings
            .push(format!("{}: the {scope} memory folder is not a folder; skipped", root.display()));
        return;
    }
    let (start, warnings) = (loaded.entries.len(), loaded.warnings.len());
    let mut files = Vec::new();
    walk(root, "", caching.is_some(), &mut files, loaded);
    let mut cache = caching.map(|caching| (EntryCache::load(caching.dir, root), caching));
    read_files(scope, &files, cache.as_mut().map(|(cache, caching)| (cache, caching.now)), loaded);
    if let Some((cache, caching)) = cache {
        cache.save(caching.background);
    }
    loaded.entries[start..].sort_by(|a, b| a.file.cmp(&b.file));
    loaded.warnings[warnings..].sort();
}

/// A memory file the walk found.
struct Found {
    /// Relative to the scope root, `/`-separated.
    file: String,
    path: PathBuf,
    /// Its stamp, from the walk's stat relative to its folder (only when a record is used).
    stamp: Option<Stamp>,
}

/// Reads the files found, on a few threads when there are many: most of the time is spent in the
/// kernel, file by file. With a `cache`, a file whose stamp is the recorded one is not opened, and
/// the record is updated with what was read.
fn read_files(
    scope: Scope,
    files: &[Found],
    mut cache: Option<(&mut EntryCache, SystemTime)>,
    loaded: &mut Loaded,
) {
    const PER_THREAD: usize = 128;
    let mut results: Vec<Option<Result<Entry, String>>> = match cache.as_ref() {
        Some((record, _)) => files
            .iter()
            .map(|found| {
                found.stamp.and_then(|stamp| record.get(scope, &found.file, &found.path, stamp)).map(Ok)
            })
            .collect(),
        None => files.iter().map(|_| None).collect(),
    };
    let misses: Vec<usize> = (0..files.len()).filter(|at| results[*at].is_none()).collect();
    let read = |part: &[usize]| -> Vec<(usize, Result<Entry, String>)> {
        part.iter().map(|at| (*at, read_entry(scope, files[*at].file.clone(), &files[*at].path))).collect()
    };
    let read: Vec<(usize, Result<Entry, String>)> = if misses.len() <= PER_THREAD {
        read(&misses)
    } else {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(4);
        let chunk = misses.len().div_ceil(threads).max(PER_THREAD);
        std::thread::scope(|threads| {
            let mut parts = misses.chunks(chunk);
            let first = parts.next().unwrap_or(&[]);
            let others: Vec<_> = parts.map(|part| threads.spawn(move || read(part))).collect();
            let mut read = read(first);
            for other in others {
                read.extend(other.join().unwrap_or_default());
            }
            read
        })
    };
    for (at, result) in read {
        results[at] = Some(result);
    }
    if let Some((cache, now)) = cache.as_mut() {
        let read: Vec<(Stamp, &Entry)> = files
            .iter()
            .zip(&results)
            .filter_map(|(found, result)| Some((found.stamp?, result.as_ref()?.as_ref().ok()?)))
            .collect();
        cache.update(&read, *now);
    }
    for (result, found) in results.into_iter().zip(files) {
        let Some(result) = result else { continue };
        let path = &found.path;
        match result {
            Ok(entry) => {
                if let Some(warning) = &entry.warning {
                    loaded.warnings.push(warning.clone());
                }
                if let Some(at) =
                    entry.meta.expires.as_deref().filter(|at| super::recall::parse_time(at).is_none())
                {
                    loaded.warnings.push(format!(
                        "{}: `expires: {at}` is not a date (2025-12-31) or an RFC 3339 time; the entry never \
                         expires",
                        path.display()
                    ));
                }
                loaded.entries.push(entry);
            }
            Err(warning) => loaded.warnings.push(warning),
        }
    }
}

/// Finds the memory files under `dir` (`prefix` its path relative to the scope root), with their
/// stamps when `stamps` (a stat of each name relative to the open folder, no path walk).
fn walk(dir: &Path, prefix: &str, stamps: bool, files: &mut Vec<Found>, loaded: &mut Loaded) {
    let read = match fs::read_dir(dir) {
        Ok(read) => read,
        Err(error) => {
            loaded
                .warnings
                .push(format!("{}: cannot read this memory folder ({error}); skipped", dir.display()));
            return;
        }
    };
    for item in read {
        let item = match item {
            Ok(item) => item,
            Err(error) => {
                loaded.warnings.push(format!("{}: cannot list this memory folder ({error})", dir.display()));
                continue;
            }
        };
        let name = item.file_name();
        let Some(name) = name.to_str() else {
            loaded.warnings.push(format!("{}: the name is not UTF-8; skipped", item.path().display()));
            continue;
        };
        if name.starts_with('.') {
            continue;
        }
        if name.chars().any(|c| c.is_control() || super::sanitize::is_invisible(c)) {
            // Memory paths never hold such characters, so the entry could be neither viewed nor
            // removed through Lathe; and its name could drive the terminal.
            loaded.warnings.push(format!(
                "{}: the name holds control or invisible characters; skipped (rename the file)",
                super::clean_line(&item.path().display().to_string())
            ));
            continue;
        }
        let Ok(kind) = item.file_type() else { continue };
        let file = if prefix.is_empty() { name.to_string() } else { format!("{prefix}/{name}") };
        if kind.is_symlink() {
            loaded.warnings.push(format!(
                "{}: a symbolic link; memory never follows links, skipped (replace it with the file)",
                item.path().display()
            ));
        } else if kind.is_dir() {
            walk(&item.path(), &file, stamps, files, loaded);
        } else if kind.is_file() && name.ends_with(".md") && name != INDEX_FILE {
            // Stat before reading: a change after the stat gives a newer stamp next time.
            let stamp = if stamps { item.metadata().ok().map(|meta| Stamp::of(&meta)) } else { None };
            files.push(Found { file, path: item.path(), stamp });
        }
    }
}

/// Reads one memory file. A file with missing or broken frontmatter gives an entry with a fallback
/// frontmatter and `warning` set; the error (a warning naming the file) is for a file that cannot
/// be used at all: unreadable or over [`MAX_ENTRY_BYTES`].
pub fn read_entry(scope: Scope, file: String, path: &Path) -> Result<Entry, String> {
    let cannot = |error: std::io::Error| format!("{}: cannot read ({error}); skipped", path.display());
    let mut bytes = Vec::with_capacity(4096);
    // Bounded: a huge file is never read whole; its size comes from the metadata.
    fs::File::open(path)
        .and_then(|file| file.take(MAX_ENTRY_BYTES as u64 + 1).read_to_end(&mut bytes))
        .map_err(cannot)?;
    if bytes.len() > MAX_ENTRY_BYTES {
        let size = fs::metadata(path).map_or(bytes.len() as u64, |meta| meta.len());
        return Err(format!(
            "{}: {size} bytes, over the limit of {MAX_ENTRY_BYTES} bytes for one memory; not loaded \
             (shorten it or split it into several files)",
            path.display()
        ));
    }
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => String::from_utf8_lossy(error.as_bytes()).into_owned(),
    };
    Ok(entry_from_text(scope, file, path, &text))
}

/// The entry of a memory file whose text is `text` (see [`read_entry`]).
pub(crate) fn entry_from_text(scope: Scope, file: String, path: &Path, text: &str) -> Entry {
    match entry::parse(text) {
        Ok((meta, body)) => Entry { scope, file, path: path.to_path_buf(), meta, body, warning: None },
        Err(problem) => {
            let body = entry::normalize_body(text);
            Entry {
                scope,
                meta: Frontmatter::fallback(scope, &file, &body),
                file,
                path: path.to_path_buf(),
                body,
                warning: Some(format!("{}: {problem}; loaded without its frontmatter", path.display())),
            }
        }
    }
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
