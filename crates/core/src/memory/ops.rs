//! What the memory commands share: reading the current files, building an entry's new text under
//! the size cap, recomputing a scope's index under its cap, and writing a planned change
//! ([`apply`]); plus the user's own operations, [`promote`] and [`remove`].

use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use super::entry::{self, Entry, Frontmatter};
use super::index::{check_index, render_index};
use super::paths::{self, Target};
use super::{INDEX_FILE, MAX_ENTRY_BYTES, MemoryError, Roots, Scope, secrets, store};

/// The text of `path`, `None` when it does not exist. A symbolic link is refused (never read
/// through or replaced).
pub(crate) fn read_current(path: &Path) -> Result<Option<String>, MemoryError> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            return Err(MemoryError::Io {
                action: "use",
                path: path.to_path_buf(),
                source: std::io::Error::other("a symbolic link; memory never follows links"),
            });
        }
        Ok(_) => {}
        Err(error) if error.kind() == ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(MemoryError::io("read", path, error)),
    }
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        Err(error) if error.kind() == ErrorKind::NotFound => Ok(None),
        Err(error) => Err(MemoryError::io("read", path, error)),
    }
}

/// The current text and entry at `target`, `None` when there is no file.
pub(crate) fn read_existing(target: &Target) -> Result<Option<(String, Entry)>, MemoryError> {
    Ok(read_current(&target.path)?.map(|text| {
        let entry = store::entry_from_text(target.scope, target.file.clone(), &target.path, &text);
        (text, entry)
    }))
}

/// The entry at `target` with `meta` and `body`, and its rendered text, refused over
/// [`MAX_ENTRY_BYTES`].
pub(crate) fn build(
    target: &Target,
    meta: Frontmatter,
    body: String,
) -> Result<(Entry, String), MemoryError> {
    let body = entry::normalize_body(&body);
    let text = entry::render(&meta, &body);
    if text.len() > MAX_ENTRY_BYTES {
        return Err(MemoryError::EntryTooLarge { path: target.virtual_path(), bytes: text.len() });
    }
    let entry = Entry {
        scope: target.scope,
        file: target.file.clone(),
        path: target.path.clone(),
        meta,
        body,
        warning: None,
    };
    Ok((entry, text))
}

/// The plan writing the entry at `target` (whose current text is `before`) and its scope's index.
pub(crate) fn finish(
    roots: &Roots,
    target: &Target,
    before: Option<String>,
    meta: Frontmatter,
    body: String,
    verb: &str,
) -> Result<Planned, MemoryError> {
    let (entry, text) = build(target, meta, body)?;
    let mut writes = vec![FileWrite { path: target.path.clone(), before, after: Some(text) }];
    writes.extend(index_write(roots, target.scope, None, Some(&entry))?);
    let id = entry.id();
    Ok(Planned {
        writes,
        message: format!("{verb} {} ({id})", target.virtual_path()),
        line: format!("memory: {verb} {id}"),
        id,
    })
}

/// The new `MEMORY.md` of `scope` with the entry file `removed` dropped and `upsert` added or
/// replaced; `None` when it would not change. Refused when it grows past the cap (a change that
/// shrinks an index already over it, as a delete does, goes through).
pub(crate) fn index_write(
    roots: &Roots,
    scope: Scope,
    removed: Option<&str>,
    upsert: Option<&Entry>,
) -> Result<Option<FileWrite>, MemoryError> {
    let root = roots.real_root(scope)?;
    let loaded = store::load_scope(roots, scope);
    let mut entries: Vec<&Entry> = loaded
        .entries
        .iter()
        .filter(|entry| {
            Some(entry.file.as_str()) != removed && upsert.is_none_or(|new| new.file != entry.file)
        })
        .collect();
    entries.extend(upsert);
    let text = render_index(scope, &entries);
    let path = root.join(INDEX_FILE);
    let before = read_current(&path)?;
    if before.as_deref() == Some(text.as_str()) {
        return Ok(None);
    }
    let grows = before
        .as_deref()
        .is_none_or(|old| text.len() > old.len() || text.lines().count() > old.lines().count());
    if grows {
        check_index(&text)?;
    }
    Ok(Some(FileWrite { path, before, after: Some(text) }))
}

/// Performs `planned`'s writes: each file written atomically (a temporary file in the same
/// folder, then renamed over it), parent folders created, deletions done. Every file is first
/// checked to still hold its `before` text, so a concurrent change is never overwritten.
pub fn apply(planned: &Planned) -> Result<(), MemoryError> {
    for write in &planned.writes {
        if read_current(&write.path)? != write.before {
            return Err(MemoryError::Conflict { path: write.path.clone() });
        }
    }
    for write in &planned.writes {
        match &write.after {
            Some(text) => write_atomic(&write.path, text)?,
            None => match std::fs::remove_file(&write.path) {
                Ok(()) => {}
                Err(error) if error.kind() == ErrorKind::NotFound => {}
                Err(error) => return Err(MemoryError::io("delete", &write.path, error)),
            },
        }
    }
    Ok(())
}

fn write_atomic(path: &Path, text: &str) -> Result<(), MemoryError> {
    let parent = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|error| MemoryError::io("create the folder", parent, error))?;
    let mut file =
        tempfile::NamedTempFile::new_in(parent).map_err(|error| MemoryError::io("write", path, error))?;
    file.write_all(text.as_bytes()).map_err(|error| MemoryError::io("write", path, error))?;
    file.persist(path).map_err(|error| MemoryError::io("write", path, error.error))?;
    Ok(())
}

/// Splits an id (`project/pnpm`, `user/feedback/tone`, `.md` optional) into scope and file.
pub(crate) fn parse_id(id: &str) -> Result<(Scope, String), MemoryError> {
    let invalid = || MemoryError::InvalidId { id: id.to_string() };
    let (scope, rest) = id.trim().split_once('/').ok_or_else(invalid)?;
    let scope = Scope::from_name(scope).ok_or_else(invalid)?;
    if rest.is_empty() {
        return Err(invalid());
    }
    let file = if rest.ends_with(".md") { rest.to_string() } else { format!("{rest}.md") };
    Ok((scope, file))
}

/// Plans copying the project entry `id` (`project/pnpm`) into the shared scope and its index. The
/// copy drops the private bookkeeping (`use_count`, `last_used`); an existing shared copy is
/// replaced. Refused when the entry holds something that looks like a secret.
pub fn promote(roots: &Roots, id: &str) -> Result<Planned, MemoryError> {
    let (scope, file) = parse_id(id)?;
    if scope != Scope::Project {
        return Err(MemoryError::InvalidArgument {
            message: format!(
                "only project memories can be promoted to shared; `{id}` is in the {scope} scope"
            ),
        });
    }
    if roots.shared.is_none() {
        return Err(MemoryError::NoSharedScope);
    }
    let from = paths::resolve_in(roots, Scope::Project, &file)?;
    let (_, entry) = read_existing(&from)?.ok_or(MemoryError::NotFound { path: id.to_string() })?;
    let to = paths::resolve_in(roots, Scope::Shared, &file)?;
    let mut meta = entry.meta;
    meta.use_count = 0;
    meta.last_used = None;
    let (copy, text) = build(&to, meta, entry.body)?;
    let kinds: Vec<&'static str> = secrets::find_secrets(&text).into_iter().map(|hit| hit.kind).collect();
    if !kinds.is_empty() {
        return Err(MemoryError::Secret { kinds });
    }
    let before = read_current(&to.path)?;
    let mut writes = vec![FileWrite { path: to.path.clone(), before, after: Some(text) }];
    writes.extend(index_write(roots, Scope::Shared, None, Some(&copy))?);
    let (old_id, new_id) = (from.id(), to.id());
    Ok(Planned {
        writes,
        message: format!("promoted {old_id} to {new_id} ({})", to.virtual_path()),
        line: format!("memory: promoted {old_id} to {new_id}"),
        id: new_id,
    })
}

/// Plans deleting the entry `id` (`project/pnpm`, `user/tone`) and updating its index. Shared
/// entries live in the repository and are removed there.
pub fn remove(roots: &Roots, id: &str) -> Result<Planned, MemoryError> {
    let (scope, file) = parse_id(id)?;
    if scope == Scope::Shared {
        return Err(MemoryError::InvalidArgument {
            message: format!(
                "`{id}` is a shared memory: delete its file from the repository's .lathe/memory and commit"
            ),
        });
    }
    delete(roots, &format!("/memories/{scope}/{file}")).map_err(|error| match error {
        MemoryError::NotFound { .. } => MemoryError::NotFound { path: id.to_string() },
        other => other,
    })
}

/// One file a planned change writes or deletes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileWrite {
    /// The real path.
    pub path: PathBuf,
    /// Its text now; `None` when it does not exist.
    pub before: Option<String>,
    /// Its text after the change; `None` to delete it.
    pub after: Option<String>,
}

/// A validated change, not yet written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    /// The files to write, in order (entries before indexes); empty for `view`.
    pub writes: Vec<FileWrite>,
    /// The tool result for the model: `saved /memories/project/pnpm.md (project/pnpm)`, or the
    /// listing for `view`.
    pub message: String,
    /// One line for the user: `memory: saved project/pnpm`, `memory: renamed a to b`.
    pub line: String,
    /// The id of the entry changed (the new one for a rename); empty when viewing a folder.
    pub id: String,
}

/// Plans deleting the entry at `path` (a write path).
pub(crate) fn delete(roots: &Roots, path: &str) -> Result<Planned, MemoryError> {
    let target = paths::resolve(roots, path)?;
    let before = read_current(&target.path)?.ok_or(MemoryError::NotFound { path: path.to_string() })?;
    let mut writes = vec![FileWrite { path: target.path.clone(), before: Some(before), after: None }];
    writes.extend(index_write(roots, target.scope, Some(&target.file), None)?);
    let id = target.id();
    Ok(Planned {
        writes,
        message: format!("deleted {} ({id})", target.virtual_path()),
        line: format!("memory: deleted {id}"),
        id,
    })
}
