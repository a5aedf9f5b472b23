//! Long-term memory: the storage library behind the memory tool and `lathe memory`.
//!
//! A memory is a Markdown file with YAML frontmatter ([`entry`]) in one of three scopes
//! ([`Scope`]): the user's (`<lathe_home>/memory/`), the project's private one
//! (`<lathe_home>/projects/<repo-key>/memory/`, shared by every worktree of a repository) and the
//! project's shared one (`<repo root>/.lathe/memory/`, committed with the code, read only to the
//! model and written only by [`command::promote`]). Each scope has a `MEMORY.md` index kept by
//! Lathe ([`index`]), hard-capped at [`MAX_INDEX_LINES`] lines and [`MAX_INDEX_BYTES`] bytes.
//!
//! Flow at a glance:
//! - [`store::load`] reads every entry of every scope (broken files are loaded with a warning);
//! - [`recall::RecallIndex`] ranks entries against the user's prompt and [`recall::attach`]
//!   renders the reminder block, flagging entries whose evidence changed ([`stale`]);
//! - the model reads and edits memory through virtual paths under `/memories` ([`paths`]) with
//!   the commands of Anthropic's memory tool ([`command`]): [`command::plan`] validates a call
//!   and computes every file it changes (entry and index) without touching the disk, refusing
//!   secrets ([`secrets`]) and anything over a cap; [`command::apply`] then writes atomically.
//!
//! This module owns no policy (whether a write needs approval) and no I/O beyond the memory
//! folders and the evidence files it hashes.

use std::fmt;
use std::path::{Path, PathBuf};

mod clean_lines;
pub mod command;
pub mod entry;
mod entry_cache;
mod error;
pub mod index;
pub mod manage;
mod ops;
pub mod paths;
pub mod recall;
mod sanitize;
pub mod secrets;
pub mod session;
pub mod stale;
pub mod store;
mod terms;
#[cfg(test)]
mod test_support;
pub mod tool;
mod topics;
mod view;

pub use command::{FileWrite, MemoryArgs, MemoryCommandName, Planned, Source, apply, plan, promote, remove};
pub use entry::{Entry, Frontmatter, MemoryType};
pub use error::MemoryError;
pub use sanitize::{clean_body, clean_line};
pub use view::{view, view_visible};

/// Most lines of one scope's `MEMORY.md`, its header line included.
pub const MAX_INDEX_LINES: usize = 200;
/// Most bytes of one scope's `MEMORY.md`, its header line included.
pub const MAX_INDEX_BYTES: usize = 25 * 1024;
/// Most bytes of one memory file (frontmatter and body): larger files are not loaded and a write
/// producing one is refused.
pub const MAX_ENTRY_BYTES: usize = 64 * 1024;
/// Most entries attached to one prompt by recall.
pub const MAX_RECALL_ENTRIES: usize = 5;
/// Most bytes of one entry's body in the recall block (cut on a character boundary).
pub const MAX_RECALL_ENTRY_BYTES: usize = 4 * 1024;
/// Most bytes of the whole recall block.
pub const MAX_RECALL_BYTES: usize = 12 * 1024;

/// The `memory` tool's model-facing name.
pub const MEMORY_TOOL: &str = "memory";

/// Name of the index file at the root of each scope.
pub const INDEX_FILE: &str = "MEMORY.md";

/// Where a memory lives. Ordered `User < Project < Shared` (the load and listing order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// The user's memories, in every project: `<lathe_home>/memory/`.
    User,
    /// This repository's private memories: `<lathe_home>/projects/<repo-key>/memory/`.
    Project,
    /// The repository's committed memories: `<repo root>/.lathe/memory/` (read only to the model).
    Shared,
}

impl Scope {
    /// Every scope, in load order.
    pub const ALL: [Scope; 3] = [Scope::User, Scope::Project, Scope::Shared];

    /// `"user"`, `"project"` or `"shared"`: the scope's segment in virtual paths and ids.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Shared => "shared",
        }
    }

    /// The scope named `name` (`"user"`, `"project"`, `"shared"`).
    pub fn from_name(name: &str) -> Option<Scope> {
        match name {
            "user" => Some(Scope::User),
            "project" => Some(Scope::Project),
            "shared" => Some(Scope::Shared),
            _ => None,
        }
    }

    /// The memory type of an entry whose file gives none: `user` in the user scope, `project`
    /// elsewhere.
    pub fn default_type(self) -> MemoryType {
        match self {
            Scope::User => MemoryType::User,
            Scope::Project | Scope::Shared => MemoryType::Project,
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The real folders of the three scopes for one workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roots {
    /// `<lathe_home>/memory`.
    pub user: PathBuf,
    /// `<lathe_home>/projects/<repo-key>/memory`.
    pub project: PathBuf,
    /// `<repo root>/.lathe/memory`; `None` outside a git repository.
    pub shared: Option<PathBuf>,
}

impl Roots {
    /// The roots for `workspace`: the repository is found by walking up from `workspace` to the
    /// first directory containing a `.git` entry (folder or `gitdir:` file).
    pub fn for_workspace(lathe_home: &Path, workspace: &Path) -> Roots {
        let repo = repo_root(workspace);
        Roots {
            user: lathe_home.join("memory"),
            project: lathe_home.join("projects").join(repo_key(workspace)).join("memory"),
            shared: repo.map(|root| root.join(".lathe").join("memory")),
        }
    }

    /// The real folder of `scope`, canonicalised when it exists. The shared scope must be a real
    /// `.lathe/memory` folder of the repository: [`MemoryError::LinkedSharedScope`] when `.lathe`
    /// or `.lathe/memory` is a symbolic link, [`MemoryError::NoSharedScope`] outside a repository.
    pub fn real_root(&self, scope: Scope) -> Result<PathBuf, MemoryError> {
        let root = self.root(scope).ok_or(MemoryError::NoSharedScope)?;
        if scope == Scope::Shared
            && let Some(lathe_dir) = root.parent()
        {
            for (dir, name) in [(lathe_dir, ".lathe"), (root, ".lathe/memory")] {
                if std::fs::symlink_metadata(dir).is_ok_and(|meta| meta.file_type().is_symlink()) {
                    return Err(MemoryError::LinkedSharedScope { path: name.to_string() });
                }
            }
        }
        Ok(root.canonicalize().unwrap_or_else(|_| root.to_path_buf()))
    }

    /// The folder of `scope`; `None` for the shared scope outside a repository.
    pub fn root(&self, scope: Scope) -> Option<&Path> {
        match scope {
            Scope::User => Some(&self.user),
            Scope::Project => Some(&self.project),
            Scope::Shared => self.shared.as_deref(),
        }
    }
}

/// The root of the working tree containing `workspace`: the first of `workspace` and its
/// ancestors that holds a `.git` entry; `None` outside a repository.
pub fn repo_root(workspace: &Path) -> Option<PathBuf> {
    let start = absolute(workspace);
    start.ancestors().find(|dir| std::fs::symlink_metadata(dir.join(".git")).is_ok()).map(Path::to_path_buf)
}

/// The folder name of a project's private memory: [`crate::paths::project_key`] of the
/// repository's common git dir (so every worktree of one repository shares it), or of the
/// workspace itself outside a repository.
///
/// A `.git` file (a linked worktree, a submodule) counts only when the git dir it names claims
/// this folder back, as git's own do: otherwise a downloaded folder holding `gitdir: <path of
/// some repository>` would read and write that repository's private memory. Such a folder keys
/// by its own path.
pub fn repo_key(workspace: &Path) -> String {
    let common = repo_root(workspace)
        .map(|root| {
            let dot_git = root.join(".git");
            match lathe_policy::sandbox::git_dirs(&dot_git) {
                Some(dirs) if !dot_git.is_file() || claims(&dirs.git_dir, &root) => dirs.common,
                _ => root,
            }
        })
        .unwrap_or_else(|| absolute(workspace));
    crate::paths::project_key(&common)
}

/// Whether `git_dir` names `root` as its working tree: a worktree's admin dir by its `gitdir`
/// file (the path of `root/.git`), a submodule's git dir by `core.worktree` in its config.
fn claims(git_dir: &Path, root: &Path) -> bool {
    let same = |path: &Path| path.canonicalize().is_ok_and(|path| path == absolute(root));
    if let Ok(text) = std::fs::read_to_string(git_dir.join("gitdir")) {
        let named = git_dir.join(text.trim());
        return named.parent().is_some_and(same);
    }
    let Ok(config) = std::fs::read_to_string(git_dir.join("config")) else { return false };
    config
        .lines()
        .filter_map(|line| line.trim().strip_prefix("worktree"))
        .any(|rest| rest.trim_start().strip_prefix('=').is_some_and(|path| same(&git_dir.join(path.trim()))))
}

/// `path` canonicalised when possible, else made absolute against the current directory.
fn absolute(path: &Path) -> PathBuf {
    path.canonicalize().or_else(|_| std::path::absolute(path)).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
#[path = "mod_tests.rs"]
mod tests;
