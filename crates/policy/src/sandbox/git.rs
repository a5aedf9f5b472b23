//! What of a git repository a `workspace-write` sandbox lets a command write — what `git add` and
//! `git commit` write — and how nothing written there runs code when git runs later outside the
//! sandbox.
//!
//! - A repository (`<ws>/.git` a directory): the git dir is bound writable onto itself, so it is a
//!   mount point that cannot be renamed or replaced; `hooks/`, `config`, `config.worktree`,
//!   `modules/`, `worktrees/` and `commondir` are bound read-only over it when they exist.
//! - A linked worktree (`<ws>/.git` a file naming `<common>/worktrees/<name>`): the `.git` file
//!   stays read-only (as `.git` does in [`super::Sandbox::new`]); the worktree's own git dir (its
//!   `index`, `HEAD`, `logs/`) and the common dir's `objects/`, `refs/` and `logs/` are writable;
//!   `commondir`, `gitdir` and `config.worktree` of the own git dir, and the common dir's hooks and
//!   config, stay read-only like everything else outside the workspace.
//!
//! A bind cannot cover a name that does not exist yet, and a commit needs the git dir itself
//! writable (`index.lock` is created there and renamed onto `index`). So after each command
//! [`GitWatch::settle`] removes what the command left in a writable git dir that git would act on
//! later: a new top-level entry that is not one git writes itself (a planted `commondir` would
//! send git to another repository's config), and a new symbolic link anywhere outside `objects/`
//! (git writes `COMMIT_EDITMSG` and appends to `logs/` through links). Under bubblewrap nothing a
//! command started outlives it (a pid namespace), so nothing can write after the check.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The paths a sandbox adds for the repository of `workspace`.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct GitAccess {
    /// Directories bound writable after the roots (the git dirs a commit writes).
    pub writable: Vec<PathBuf>,
    /// Paths inside writable places that stay read-only (bound only when they exist).
    pub read_only: Vec<PathBuf>,
    /// The writable git dirs [`GitWatch`] checks after each command.
    pub watched: Vec<PathBuf>,
}

/// The layout for `workspace` (nothing when it is not the top of a repository).
pub(super) fn access(workspace: &Path) -> GitAccess {
    let dot_git = workspace.join(".git");
    if dot_git.is_dir() {
        let read_only = ["hooks", "config", "config.worktree", "modules", "worktrees", "commondir"]
            .iter()
            .map(|name| dot_git.join(name))
            .collect();
        return GitAccess { writable: vec![dot_git.clone()], read_only, watched: vec![dot_git] };
    }
    let Some(git_dir) = linked_git_dir(&dot_git) else { return GitAccess::default() };
    let Some(common) = std::fs::read_to_string(git_dir.join("commondir"))
        .ok()
        .map(|text| git_dir.join(text.trim()))
        .and_then(|dir| dir.canonicalize().ok())
    else {
        return GitAccess::default();
    };
    let read_only =
        ["commondir", "gitdir", "config.worktree"].iter().map(|name| git_dir.join(name)).collect();
    let writable = std::iter::once(git_dir.clone())
        .chain(["objects", "refs", "logs"].iter().map(|name| common.join(name)))
        .collect();
    GitAccess { writable, read_only, watched: vec![git_dir, common.join("refs"), common.join("logs")] }
}

/// The git dir a `.git` file points to (`gitdir: <path>`, relative to the workspace or absolute).
fn linked_git_dir(dot_git: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(dot_git).ok()?;
    let path = text.lines().find_map(|line| line.strip_prefix("gitdir:"))?.trim();
    let base = dot_git.parent()?;
    base.join(path).canonicalize().ok()
}

/// Whether git itself writes a top-level entry called `name` in a git dir (state files such as
/// `HEAD`, `ORIG_HEAD` or `MERGE_MSG`, the index, lock files, and the directories of refs, logs,
/// objects and of rebases, merges and bisects in progress).
fn written_by_git(name: &str) -> bool {
    const NAMES: &[&str] = &[
        "index",
        "packed-refs",
        "description",
        "objects",
        "refs",
        "logs",
        "info",
        "rebase-merge",
        "rebase-apply",
        "rr-cache",
        "sequencer",
        "lost-found",
        "gc.pid",
        "gc.log",
        "shallow",
        "branches",
    ];
    NAMES.contains(&name)
        || name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
        || name.ends_with(".lock")
        || name.starts_with("sharedindex.")
        || name.starts_with("index.stash.")
}

/// What the writable git dirs held before a command: each dir's top-level names and every
/// symbolic link outside `objects/`.
#[derive(Debug, Default)]
pub struct GitWatch {
    before: Vec<(PathBuf, BTreeSet<String>, BTreeSet<PathBuf>)>,
}

impl GitWatch {
    pub(super) fn new(dirs: &[PathBuf]) -> GitWatch {
        GitWatch { before: dirs.iter().map(|dir| (dir.clone(), names(dir), links(dir))).collect() }
    }

    /// Removes what the command planted (see the module docs) and says what, one line per entry
    /// (`.git/commondir`), for the call's result. Call it once the command and everything it
    /// started have exited.
    pub fn settle(mut self) -> Vec<String> {
        let mut removed = Vec::new();
        for (dir, names_before, links_before) in std::mem::take(&mut self.before) {
            let (dir, names_before, links_before) = (&dir, &names_before, &links_before);
            let planted_names = names(dir)
                .into_iter()
                .filter(|name| !names_before.contains(name) && !written_by_git(name))
                .map(|name| dir.join(name));
            let planted_links = links(dir).into_iter().filter(|link| !links_before.contains(link));
            for path in planted_names.chain(planted_links).collect::<BTreeSet<_>>() {
                let gone = match std::fs::symlink_metadata(&path) {
                    Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(&path),
                    Ok(_) => std::fs::remove_file(&path),
                    Err(_) => continue,
                };
                match gone {
                    Ok(()) => removed.push(path.display().to_string()),
                    Err(error) => {
                        tracing::warn!(path = %path.display(), %error, "cannot remove what a command planted in .git");
                        removed.push(format!("{} (could not remove it: {error})", path.display()));
                    }
                }
            }
        }
        removed
    }
}

impl Drop for GitWatch {
    /// A call given up on mid-run (its future dropped) is settled too, after its process group
    /// was ended.
    fn drop(&mut self) {
        if !self.before.is_empty() {
            let rest = GitWatch { before: std::mem::take(&mut self.before) };
            let _ = rest.settle();
        }
    }
}

fn names(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .map(|entries| entries.flatten().filter_map(|e| e.file_name().into_string().ok()).collect())
        .unwrap_or_default()
}

/// Symbolic links under `dir`, not following any, skipping `objects/` (large, and git only reads
/// object files from it).
fn links(dir: &Path) -> BTreeSet<PathBuf> {
    let objects = dir.join("objects");
    ignore::WalkBuilder::new(dir)
        .standard_filters(false)
        .follow_links(false)
        .filter_entry(move |entry| entry.path() != objects)
        .build()
        .flatten()
        .filter(|entry| entry.path_is_symlink())
        .map(|entry| entry.into_path())
        .collect()
}

#[cfg(test)]
#[path = "git_tests.rs"]
mod tests;
