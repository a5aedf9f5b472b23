//! The git index after a sandboxed command: a command may write `.git/index` (a commit needs
//! to), and an index can name paths git itself would never write — `../x` or `.git/hooks/y` —
//! which a later `git restore .` outside the sandbox checks out where they point, hooks
//! included (git checks paths when it reads trees, not entries already in the index). When the
//! index changed, its entries are listed (`git ls-files`, with nothing that runs a program) and an
//! index with such a path is rebuilt from `HEAD` (`git read-tree`, which checks every path), or
//! removed when that fails.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The index of the workspace's repository and its state before a command.
#[derive(Debug)]
pub(super) struct IndexWatch {
    workspace: PathBuf,
    index: PathBuf,
    before: Option<Stamp>,
}

/// What tells one index file from another: the change time cannot be set back by a command
/// (`touch -r` sets the modification time, and changes the change time doing so).
type Stamp = (i64, i64, i64, i64, u64, u64);

impl IndexWatch {
    /// The watch for `workspace`, when it is the top of a repository (see
    /// [`lathe_policy::sandbox::git_dirs`]).
    pub(super) fn new(workspace: &Path) -> Option<IndexWatch> {
        let index = lathe_policy::sandbox::git_dirs(&workspace.join(".git"))?.git_dir.join("index");
        Some(IndexWatch { workspace: workspace.to_path_buf(), before: stamp(&index), index })
    }

    /// After the command: `None` when the index is unchanged or holds only paths inside the
    /// worktree; otherwise what was done about it, for the call's result.
    pub(super) async fn check(self) -> Option<String> {
        let now = stamp(&self.index);
        if now == self.before || now.is_none() {
            return None;
        }
        let regular = std::fs::symlink_metadata(&self.index).is_ok_and(|meta| meta.is_file());
        let listed = if regular { self.git(&["ls-files", "-z"]).await } else { None };
        let Some(listed) = listed else {
            // Fail closed: an index git cannot list (a FIFO, a link, garbage) is not left behind.
            return Some(match std::fs::remove_file(&self.index) {
                Ok(()) => {
                    "[sandbox: the index could not be read after this command; it was removed (`git reset` \
                           rebuilds it from HEAD)]"
                        .to_string()
                }
                Err(error) => {
                    format!("[sandbox: the index could not be read after this command nor removed: {error}]")
                }
            });
        };
        let bad: Vec<String> = listed
            .split('\0')
            .filter(|path| !path.is_empty() && !inside_worktree(path))
            .take(5)
            .map(str::to_string)
            .collect();
        if bad.is_empty() {
            return None;
        }
        let what = bad.join(", ");
        if self.git(&["read-tree", "HEAD"]).await.is_some() {
            return Some(format!(
                "[sandbox: the index named paths outside the worktree ({what}); it was rebuilt from HEAD, so \
                 what was staged is unstaged]"
            ));
        }
        match std::fs::remove_file(&self.index) {
            Ok(()) => Some(format!(
                "[sandbox: the index named paths outside the worktree ({what}); it was removed (`git reset` \
                 rebuilds it from HEAD)]"
            )),
            Err(error) => Some(format!(
                "[sandbox: the index names paths outside the worktree ({what}) and could not be removed: \
                 {error}; do not run `git restore` or `git checkout` in this repository]"
            )),
        }
    }

    async fn git(&self, args: &[&str]) -> Option<String> {
        let output = tokio::process::Command::new("git")
            .args(lathe_policy::sandbox::SAFE_GIT_ARGS)
            .envs(lathe_policy::sandbox::SAFE_GIT_ENV.iter().copied())
            .args(args)
            .current_dir(&self.workspace)
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .output();
        let output = tokio::time::timeout(Duration::from_secs(10), output).await.ok()?.ok()?;
        output.status.success().then(|| String::from_utf8_lossy(&output.stdout).into_owned())
    }
}

fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    Some((meta.mtime(), meta.mtime_nsec(), meta.ctime(), meta.ctime_nsec(), meta.ino(), meta.len()))
}

/// Whether an index path is one git itself would check out: relative, no empty, `.` or `..`
/// component, and no `.git` component (any case).
fn inside_worktree(path: &str) -> bool {
    !path.starts_with('/')
        && path
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != ".." && !part.eq_ignore_ascii_case(".git"))
}

#[cfg(test)]
mod tests {
    use super::inside_worktree;

    #[test]
    fn paths_outside_the_worktree_are_told_apart() {
        for good in ["a.txt", "src/main.rs", ".github/x", "a/.gitignore"] {
            assert!(inside_worktree(good), "{good}");
        }
        for bad in
            ["../x", "a/../../x", ".git/hooks/post-checkout", "a/.GIT/config", "/etc/passwd", "a//b", "./a"]
        {
            assert!(!inside_worktree(bad), "{bad}");
        }
    }
}
