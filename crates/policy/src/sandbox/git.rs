//! What of a git repository a `workspace-write` sandbox lets a command write: what `git add` and
//! `git commit` write, and nothing that runs code outside the sandbox later.
//!
//! - In the repository's own `.git` (inside the workspace, so writable): `hooks/`, `config`,
//!   `config.worktree` and `modules/` (submodules' own hooks and config) are bound read-only; the
//!   rest — `objects/`, `refs/`, `logs/`, `index`, `HEAD`, the lock files git renames into place —
//!   stays writable. A missing `hooks/` is created first (empty, as `git init` makes it), so a
//!   command cannot plant one.
//! - In a linked worktree (`.git` is a file naming `<common>/worktrees/<name>`): the worktree's
//!   own git dir (its `index`, `HEAD`, `logs/`) and the common dir's `objects/`, `refs/` and
//!   `logs/` are writable; the common dir's hooks and config, and the main checkout, stay
//!   read-only like everything outside the workspace.

use std::path::{Path, PathBuf};

/// The paths a sandbox adds for the repository of `workspace`.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct GitAccess {
    /// Directories outside the workspace a commit writes (a linked worktree's).
    pub writable: Vec<PathBuf>,
    /// Paths inside writable places that stay read-only (bound only when they exist).
    pub read_only: Vec<PathBuf>,
}

/// The layout for `workspace` (nothing when it is not the top of a repository).
pub(super) fn access(workspace: &Path) -> GitAccess {
    let dot_git = workspace.join(".git");
    if dot_git.is_dir() {
        let hooks = dot_git.join("hooks");
        if !hooks.exists() {
            let _ = std::fs::create_dir(&hooks);
        }
        return GitAccess { writable: Vec::new(), read_only: protected(&dot_git) };
    }
    let Some(git_dir) = linked_git_dir(&dot_git) else { return GitAccess::default() };
    let common = std::fs::read_to_string(git_dir.join("commondir"))
        .ok()
        .map(|text| git_dir.join(text.trim()))
        .and_then(|dir| dir.canonicalize().ok())
        .unwrap_or_else(|| git_dir.join("../.."));
    let mut read_only = protected(&common);
    read_only.push(git_dir.join("config.worktree"));
    let writable = std::iter::once(git_dir)
        .chain(["objects", "refs", "logs"].iter().map(|name| common.join(name)))
        .collect();
    GitAccess { writable, read_only }
}

/// What stays read-only in a git dir: what could run code when git runs outside the sandbox.
fn protected(git_dir: &Path) -> Vec<PathBuf> {
    ["hooks", "config", "config.worktree", "modules"].iter().map(|name| git_dir.join(name)).collect()
}

/// The git dir a `.git` file points to (`gitdir: <path>`, relative to the workspace or absolute).
fn linked_git_dir(dot_git: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(dot_git).ok()?;
    let path = text.lines().find_map(|line| line.strip_prefix("gitdir:"))?.trim();
    let base = dot_git.parent()?;
    base.join(path).canonicalize().ok()
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_linked_worktree_writes_its_own_git_dir_and_the_common_objects_refs_and_logs() {
        let dir = tempfile::tempdir().expect("dir");
        let root = dir.path().canonicalize().expect("canonical");
        let common = root.join("main/.git");
        let own = common.join("worktrees/feat");
        std::fs::create_dir_all(&own).expect("git dirs");
        std::fs::write(own.join("commondir"), "../..\n").expect("commondir");
        std::fs::create_dir_all(root.join("feat")).expect("worktree");
        std::fs::write(root.join("feat/.git"), format!("gitdir: {}\n", own.display())).expect(".git");
        let access = access(&root.join("feat"));
        assert_eq!(
            access.writable,
            vec![own.clone(), common.join("objects"), common.join("refs"), common.join("logs")]
        );
        assert!(
            access.read_only.contains(&common.join("hooks"))
                && access.read_only.contains(&common.join("config"))
        );
        assert!(access.read_only.contains(&own.join("config.worktree")));
    }

    #[test]
    fn a_repository_keeps_hooks_and_config_read_only_and_gets_a_hooks_dir() {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::create_dir_all(dir.path().join(".git")).expect(".git");
        let access = access(dir.path());
        assert!(access.writable.is_empty());
        assert!(access.read_only.contains(&dir.path().join(".git/hooks")));
        assert!(dir.path().join(".git/hooks").is_dir());
        assert_eq!(super::access(&dir.path().join("nothing")), GitAccess::default());
    }
}
