//! The path guard (FEATURES.md §D "Path guard"): where file tools may write and read without asking.
//!
//! Every check works on the *real* path: `..` and symlinks are resolved component by component the
//! way the kernel would, including dangling symlinks (a write through one creates its target),
//! symlink chains, and a trailing `..`; components that do not exist yet are appended as they are.
//!
//! - Writes go to the workspace, its extra roots and the temp dir; `.git` internals and the
//!   permission settings files are never written by tools ([`Guard::check_write`]).
//! - Reads outside those places, and of secrets (`.env*`, `*.pem`, `*.key`, `id_rsa*`, `~/.ssh/**`,
//!   `~/.aws/**`) even inside them, need approval ([`Guard::check_read`]).

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// How many symlinks one resolution follows before giving up (the kernel's limit).
const MAX_SYMLINKS: usize = 40;

/// Whether `path` lies inside `root` after resolving symlinks and `..` (see [`real_path`]).
pub fn is_inside(root: &Path, path: &Path) -> bool {
    real_path(path).starts_with(real_path(root))
}

/// `path` (absolute) with every symlink resolved, also dangling ones and chains, `.` dropped and
/// `..` applied after the component before it was resolved. Components that do not exist are kept
/// as given. A relative path is taken relative to the current directory.
pub fn real_path(path: &Path) -> PathBuf {
    let mut pending: Vec<OsString> = Vec::new();
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")).join(path)
    };
    push_components(&absolute, &mut pending);
    let mut out = PathBuf::from("/");
    let mut links = 0;
    while let Some(part) = pending.pop() {
        if part == "." {
            continue;
        }
        if part == ".." {
            out.pop();
            continue;
        }
        let candidate = out.join(&part);
        match std::fs::symlink_metadata(&candidate) {
            Ok(meta) if meta.file_type().is_symlink() && links < MAX_SYMLINKS => {
                links += 1;
                match std::fs::read_link(&candidate) {
                    Ok(target) => {
                        if target.is_absolute() {
                            out = PathBuf::from("/");
                        }
                        push_components(&target, &mut pending);
                    }
                    Err(_) => out = candidate,
                }
            }
            _ => out = candidate,
        }
    }
    out
}

/// Pushes the components of `path` onto the stack `pending` so that the first component is popped
/// first.
fn push_components(path: &Path, pending: &mut Vec<OsString>) {
    let parts: Vec<OsString> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => None,
        })
        .collect();
    pending.extend(parts.into_iter().rev());
}

/// `path` with `.` and `..` folded lexically (symlinks are not looked at).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Prefix(_) | Component::RootDir | Component::Normal(_) => {
                out.push(component.as_os_str())
            }
        }
    }
    out
}

/// The places a session's file tools work in, resolved once.
#[derive(Debug, Clone)]
pub struct Guard {
    /// The workspace root (real path).
    pub workspace: PathBuf,
    /// Extra roots from settings (`permissions.additionalDirectories`), real paths.
    pub extra_roots: Vec<PathBuf>,
    /// The temp dirs (`$TMPDIR` and `/tmp`), real paths.
    pub temp_dirs: Vec<PathBuf>,
    /// The user's home directory, real path.
    pub home: Option<PathBuf>,
    /// Files tools never write: the permission settings files (real paths).
    pub protected: Vec<PathBuf>,
    /// Folders file tools never write: the memory folders, written by the `memory` tool only
    /// (real paths).
    pub protected_dirs: Vec<PathBuf>,
}

/// The verdict of the guard on one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathCheck {
    /// Inside the workspace, an extra root or the temp dir.
    Inside(PathBuf),
    /// Outside them all.
    Outside(PathBuf),
    /// A secret (reads) or a protected file (writes), with what it is.
    Sensitive(PathBuf, &'static str),
}

impl Guard {
    /// A guard for `workspace` with `extra_roots`; `home` is the user's home directory, `protected`
    /// the settings files.
    pub fn new(
        workspace: &Path,
        extra_roots: &[PathBuf],
        home: Option<&Path>,
        protected: &[PathBuf],
    ) -> Guard {
        let mut temp_dirs = vec![real_path(&std::env::temp_dir())];
        let tmp = real_path(Path::new("/tmp"));
        if !temp_dirs.contains(&tmp) {
            temp_dirs.push(tmp);
        }
        Guard {
            workspace: real_path(workspace),
            extra_roots: extra_roots.iter().map(|root| real_path(root)).collect(),
            temp_dirs,
            home: home.map(real_path),
            protected: protected.iter().map(|path| real_path(path)).collect(),
            protected_dirs: Vec::new(),
        }
    }

    /// The guard with `dirs` protected from file tools: nothing under them is written (the
    /// memory folders, which the `memory` tool writes).
    pub fn with_protected_dirs(mut self, dirs: &[PathBuf]) -> Guard {
        self.protected_dirs = dirs.iter().map(|dir| real_path(dir)).collect();
        self
    }

    /// The roots writes may go to: workspace, extra roots, temp dirs.
    pub fn writable_roots(&self) -> Vec<PathBuf> {
        let mut roots = vec![self.workspace.clone()];
        roots.extend(self.extra_roots.iter().cloned());
        roots.extend(self.temp_dirs.iter().cloned());
        roots
    }

    fn inside_roots(&self, real: &Path) -> bool {
        real.starts_with(&self.workspace)
            || self.extra_roots.iter().any(|root| real.starts_with(root))
            || self.temp_dirs.iter().any(|root| real.starts_with(root))
    }

    /// May a file tool write `path`? `.git` internals and settings files are
    /// [`PathCheck::Sensitive`] (never written), places outside the roots are
    /// [`PathCheck::Outside`].
    pub fn check_write(&self, path: &Path) -> PathCheck {
        let real = real_path(path);
        if real.components().any(|c| c.as_os_str() == ".git") {
            return PathCheck::Sensitive(real, "a .git internal file");
        }
        if self.protected.contains(&real) {
            return PathCheck::Sensitive(real, "a permission settings file");
        }
        if self.protected_dirs.iter().any(|dir| real.starts_with(dir)) {
            return PathCheck::Sensitive(real, "a memory file (only the memory tool writes memory)");
        }
        if self.inside_roots(&real) { PathCheck::Inside(real) } else { PathCheck::Outside(real) }
    }

    /// May a file tool read `path` without asking? Secrets are [`PathCheck::Sensitive`] wherever
    /// they are.
    pub fn check_read(&self, path: &Path) -> PathCheck {
        let real = real_path(path);
        let secret = self.secret(&real).or_else(|| self.secret(&normalize(path)));
        if let Some(what) = secret {
            return PathCheck::Sensitive(real, what);
        }
        if self.inside_roots(&real) { PathCheck::Inside(real) } else { PathCheck::Outside(real) }
    }

    /// What kind of secret `path` is, if it is one.
    pub fn secret(&self, path: &Path) -> Option<&'static str> {
        if let Some(home) = &self.home {
            if path.starts_with(home.join(".ssh")) {
                return Some("a file in ~/.ssh");
            }
            if path.starts_with(home.join(".aws")) {
                return Some("a file in ~/.aws");
            }
        }
        let name = path.file_name()?.to_string_lossy();
        if name.starts_with(".env") {
            Some("an environment file (.env*)")
        } else if name.ends_with(".pem") || name.ends_with(".key") {
            Some("a key file")
        } else if ["id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"].iter().any(|key| name.starts_with(key)) {
            Some("an SSH key")
        } else {
            None
        }
    }
}

#[cfg(test)]
#[path = "path_tests.rs"]
mod tests;
