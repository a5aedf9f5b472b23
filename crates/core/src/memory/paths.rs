//! Virtual paths: the model addresses memory as `/memories/<scope>/<file>.md` and never sees or
//! names a real path.
//!
//! `/memories/user/…` and `/memories/project/…` are readable and writable; `/memories/shared/…`
//! (the repository's `.lathe/memory`) is readable only. A path is split into components after
//! repeated slashes are collapsed, and refused when it holds `.` or `..`, a backslash, a NUL or
//! control character, a hidden (`.name`) or blank component, or points anywhere but under
//! `/memories`. The scope root is canonicalised when it exists, and every existing component
//! below it must be a real folder or file, never a symbolic link, so nothing resolves outside the
//! memory folder.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use super::{INDEX_FILE, MemoryError, Roots, Scope};

/// Longest path component accepted, in bytes.
const MAX_COMPONENT_BYTES: usize = 200;

/// Whether a path is resolved for reading or for writing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Any scope, the `MEMORY.md` index included.
    Read,
    /// The user and project scopes only, never `MEMORY.md`.
    Write,
}

/// A memory file a virtual path names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Its scope.
    pub scope: Scope,
    /// Its path relative to the scope root, `/`-separated (`feedback/tone.md`).
    pub file: String,
    /// Its real path (it may not exist yet).
    pub path: PathBuf,
}

impl Target {
    /// `/memories/<scope>/<file>`.
    pub fn virtual_path(&self) -> String {
        format!("/memories/{}/{}", self.scope, self.file)
    }

    /// `<scope>/<file without .md>`, as [`super::Entry::id`].
    pub fn id(&self) -> String {
        format!("{}/{}", self.scope, self.file.strip_suffix(".md").unwrap_or(&self.file))
    }
}

/// What a path names for `view`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ViewTarget {
    /// `/memories`: every scope.
    Root,
    /// A scope root or a folder inside one.
    Dir {
        /// Its scope.
        scope: Scope,
        /// The folder relative to the scope root, `/`-separated; empty for the root.
        dir: String,
        /// Its real path (it may not exist).
        path: PathBuf,
    },
    /// A memory file (or a scope's `MEMORY.md`).
    File(Target),
}

/// Resolves a path the model wants to write (`create`, `str_replace`, `insert`, `delete`,
/// `rename`): a `.md` file under `/memories/user/` or `/memories/project/`, not `MEMORY.md`.
pub fn resolve(roots: &Roots, virtual_path: &str) -> Result<Target, MemoryError> {
    resolve_file(roots, virtual_path, Access::Write)
}

/// Resolves a path naming one memory file for `access`.
pub fn resolve_file(roots: &Roots, virtual_path: &str, access: Access) -> Result<Target, MemoryError> {
    let parts = split(virtual_path)?;
    let (scope, rest) = scope_of(virtual_path, &parts)?;
    let Some(last) = rest.last() else {
        return Err(MemoryError::path(virtual_path, "it names a folder, not a memory file"));
    };
    if access == Access::Write && scope == Scope::Shared {
        return Err(MemoryError::ReadOnly { path: virtual_path.to_string() });
    }
    let is_index = last.eq_ignore_ascii_case(INDEX_FILE);
    if is_index && (access == Access::Write || rest.len() > 1) {
        return Err(MemoryError::path(
            virtual_path,
            "MEMORY.md is the index Lathe maintains; write an entry file such as /memories/project/pnpm.md",
        ));
    }
    if !last.ends_with(".md") || last.len() <= 3 {
        return Err(MemoryError::path(virtual_path, "memory files end in .md"));
    }
    let base = scope_root(roots, scope)?;
    let path = confine(virtual_path, &base, rest, Want::File)?;
    Ok(Target { scope, file: rest.join("/"), path })
}

/// Resolves a path for `view`: `/memories`, a scope or folder, or a file (any scope).
pub fn resolve_view(roots: &Roots, virtual_path: &str) -> Result<ViewTarget, MemoryError> {
    let parts = split(virtual_path)?;
    if parts.len() == 1 {
        return Ok(ViewTarget::Root);
    }
    let (scope, rest) = scope_of(virtual_path, &parts)?;
    if rest.last().is_some_and(|last| last.ends_with(".md")) {
        return resolve_file(roots, virtual_path, Access::Read).map(ViewTarget::File);
    }
    let base = scope_root(roots, scope)?;
    let path = confine(virtual_path, &base, rest, Want::Dir)?;
    Ok(ViewTarget::Dir { scope, dir: rest.join("/"), path })
}

/// The real path of `file` (`/`-separated, relative) in `scope`, with the same checks as a
/// virtual path; used for ids (`project/pnpm`) given by the user.
pub(crate) fn resolve_in(roots: &Roots, scope: Scope, file: &str) -> Result<Target, MemoryError> {
    resolve_file(roots, &format!("/memories/{scope}/{file}"), Access::Read)
}

/// The components after collapsing slashes, `memories` first.
fn split(virtual_path: &str) -> Result<Vec<&str>, MemoryError> {
    if virtual_path.contains('\0') {
        return Err(MemoryError::path(virtual_path, "it contains a NUL byte"));
    }
    if virtual_path.contains('\\') {
        return Err(MemoryError::path(virtual_path, "it contains a backslash; separate folders with /"));
    }
    if virtual_path.chars().any(char::is_control) {
        return Err(MemoryError::path(virtual_path, "it contains a control character"));
    }
    let parts: Vec<&str> = virtual_path.split('/').filter(|part| !part.is_empty()).collect();
    if parts.first() != Some(&"memories") {
        return Err(MemoryError::path(virtual_path, "it is outside memory (paths start with /memories/)"));
    }
    for part in &parts {
        if *part == "." || *part == ".." {
            return Err(MemoryError::path(virtual_path, "`.` and `..` components are not allowed"));
        }
        if part.trim().is_empty() {
            return Err(MemoryError::path(virtual_path, "it has an empty component"));
        }
        if part.starts_with('.') {
            return Err(MemoryError::path(
                virtual_path,
                format!("`{part}` is a hidden name; drop the leading dot"),
            ));
        }
        if part.len() > MAX_COMPONENT_BYTES {
            return Err(MemoryError::path(
                virtual_path,
                format!("a component is longer than {MAX_COMPONENT_BYTES} bytes"),
            ));
        }
    }
    Ok(parts)
}

fn scope_of<'a>(virtual_path: &str, parts: &'a [&'a str]) -> Result<(Scope, &'a [&'a str]), MemoryError> {
    let name = parts.get(1).copied().unwrap_or("");
    let scope = Scope::from_name(name).ok_or_else(|| {
        MemoryError::path(
            virtual_path,
            format!("`{name}` is not a scope (use user, project, or shared to read)"),
        )
    })?;
    Ok((scope, &parts[2..]))
}

/// The scope's folder, canonicalised when it exists.
fn scope_root(roots: &Roots, scope: Scope) -> Result<PathBuf, MemoryError> {
    roots.real_root(scope)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Want {
    File,
    Dir,
}

/// `base` joined with `parts`, refusing any existing component that is a symbolic link, a
/// non-folder where a folder is needed, or the wrong kind at the end.
fn confine(virtual_path: &str, base: &Path, parts: &[&str], want: Want) -> Result<PathBuf, MemoryError> {
    let mut path = base.to_path_buf();
    let mut exists = true;
    for (i, part) in parts.iter().enumerate() {
        path.push(part);
        if !exists {
            continue;
        }
        let last = i + 1 == parts.len();
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(MemoryError::path(
                    virtual_path,
                    format!("`{part}` is a symbolic link, and memory never follows links"),
                ));
            }
            Ok(meta) if !last && !meta.is_dir() => {
                return Err(MemoryError::path(virtual_path, format!("`{part}` is a file, not a folder")));
            }
            Ok(meta) if last && want == Want::File && !meta.is_file() => {
                return Err(MemoryError::path(virtual_path, "it names a folder, not a memory file"));
            }
            Ok(meta) if last && want == Want::Dir && !meta.is_dir() => {
                return Err(MemoryError::path(virtual_path, "it names a file that is not a memory (.md)"));
            }
            Ok(_) => {}
            Err(error) if error.kind() == ErrorKind::NotFound => exists = false,
            Err(error) => return Err(MemoryError::io("inspect", &path, error)),
        }
    }
    Ok(path)
}

#[cfg(test)]
#[path = "paths_tests.rs"]
mod tests;
