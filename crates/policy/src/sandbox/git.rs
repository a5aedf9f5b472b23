//! What of a git repository a `workspace-write` sandbox lets a command write — what `git add` and
//! `git commit` write — and how nothing written there runs code, or writes elsewhere, when git
//! runs later outside the sandbox.
//!
//! Nothing inside the workspace is trusted to widen the sandbox: a command may have planted it.
//! - A repository (`<ws>/.git` a real directory, not a link): the git dir, its `objects/` and its
//!   `refs/` are bound writable onto themselves, so they are mount points no command can rename
//!   or remove (git would then stop seeing `.git` as a repository and take the workspace root for
//!   a bare one); `hooks/`, `config`, `config.worktree`, `modules/`, `worktrees/` and `commondir`
//!   are bound read-only over it when they exist.
//! - A linked worktree (`<ws>/.git` a file naming `<common>/worktrees/<name>`), accepted only when
//!   that git dir lies outside the workspace, is `<common>/worktrees/<name>` of the common dir its
//!   `commondir` names, and its `gitdir` file names this `.git` back (what `git worktree add`
//!   writes): the `.git` file stays read-only (as in [`super::Sandbox::new`]); the worktree's own
//!   git dir and the common `objects/`, `refs/` and `logs/` are writable; its `commondir`,
//!   `gitdir` and `config.worktree`, and the common dir itself (hooks, config, `packed-refs`) and
//!   the main checkout stay read-only.
//!
//! A bind cannot cover a name that does not exist yet, and a commit needs the git dir itself
//! writable (`index.lock` is created there and renamed onto `index`). So after each command
//! [`GitWatch::settle`] undoes what it left that git would act on later: in a git dir a new
//! top-level entry git does not write itself (a `commondir` would send git to another config) and
//! a `HEAD` that is no longer valid (restored); anywhere, a new symbolic link (git writes
//! `COMMIT_EDITMSG`, reflogs and loose objects through links); and `.lathe` or `.claude` created in
//! the workspace (settings and hooks that would run unsandboxed in the next session). Under
//! bubblewrap nothing a command started outlives it (a pid namespace), so nothing writes after the
//! check.

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The paths a sandbox adds for the repository of `workspace`.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct GitAccess {
    /// Git dirs inside a writable root (a temp dir) that belong to the workspace's repository but
    /// lie outside the workspace (a parent's `.git`, a worktree's common dir): bound read-only right
    /// after the roots, before `writable`.
    pub shield: Vec<PathBuf>,
    /// Directories bound writable after the roots, in order (the git dirs a commit writes).
    pub writable: Vec<PathBuf>,
    /// Paths inside writable places that stay read-only (bound only when they exist).
    pub read_only: Vec<PathBuf>,
    /// What [`GitWatch`] checks after each command.
    pub watched: Vec<Watched>,
}

/// A directory checked after each command, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Watched {
    /// A git dir: new top-level names, `HEAD`, links below it (its `objects/` one level deep).
    GitDir(PathBuf),
    /// A directory of refs or logs: links below it.
    Links(PathBuf),
    /// An object store: links one level deep (the fan-out dirs, `pack/`, `info/`).
    Objects(PathBuf),
}

/// The layout for `workspace` among the writable `roots` (nothing writable when it is not the top
/// of a repository git accepts).
pub(super) fn access(workspace: &Path, roots: &[PathBuf]) -> GitAccess {
    let dot_git = workspace.join(".git");
    let inside = |path: &Path| roots.iter().any(|root| path.starts_with(root));
    let Ok(meta) = std::fs::symlink_metadata(&dot_git) else {
        // A subdirectory of a repository whose git dirs lie in a writable root (under /tmp).
        let parent = workspace
            .ancestors()
            .skip(1)
            .map(|dir| dir.join(".git"))
            .find(|git| git.symlink_metadata().is_ok());
        let shield = parent.iter().flat_map(|git| named_git_dirs(git)).filter(|dir| inside(dir)).collect();
        return GitAccess { shield, ..GitAccess::default() };
    };
    if meta.is_dir() {
        let read_only = ["hooks", "config", "config.worktree", "modules", "worktrees", "commondir"]
            .iter()
            .map(|name| dot_git.join(name))
            .collect();
        let writable = [dot_git.clone(), dot_git.join("objects"), dot_git.join("refs")]
            .into_iter()
            .filter(|dir| dir.is_dir())
            .collect();
        return GitAccess {
            shield: Vec::new(),
            writable,
            read_only,
            watched: vec![Watched::GitDir(dot_git.clone()), Watched::Objects(dot_git.join("objects"))],
        };
    }
    if !meta.is_file() {
        return GitAccess::default();
    }
    let Some((git_dir, common)) = linked(workspace, &dot_git) else {
        // A `.git` file naming a git dir that is not a worktree's (`git init --separate-git-dir`):
        // nothing writable, and the git dirs it names read-only where a root would expose them.
        let shield = named_git_dirs(&dot_git).into_iter().filter(|dir| inside(dir)).collect();
        return GitAccess { shield, ..GitAccess::default() };
    };
    let read_only =
        ["commondir", "gitdir", "config.worktree"].iter().map(|name| git_dir.join(name)).collect();
    let writable = std::iter::once(git_dir.clone())
        .chain(["objects", "refs", "logs"].iter().map(|name| common.join(name)))
        .filter(|dir| dir.is_dir())
        .collect();
    // A common dir in a writable root (a main checkout under /tmp) would be writable whole.
    let shield =
        roots.iter().any(|root| common.starts_with(root)).then(|| common.clone()).into_iter().collect();
    let watched = vec![
        Watched::GitDir(git_dir),
        Watched::Links(common.join("refs")),
        Watched::Links(common.join("logs")),
        Watched::Objects(common.join("objects")),
    ];
    GitAccess { shield, writable, read_only, watched }
}

/// The git dir a `.git` entry stands for and its common dir (the same dir unless a `commondir`
/// file names another), canonical: the entry itself when a directory, the dir a `.git` file names
/// (`gitdir: <path>`, relative to the file's directory) otherwise. `None` when nothing resolves.
/// Reads files only; for git run outside the sandbox on such a repository see [`SAFE_GIT_ARGS`].
pub fn git_dirs(dot_git: &Path) -> Option<GitDirs> {
    let meta = std::fs::symlink_metadata(dot_git).ok()?;
    let git_dir = if meta.is_file() {
        let text = std::fs::read_to_string(dot_git).ok()?;
        let path = text.lines().find_map(|line| line.strip_prefix("gitdir:"))?.trim();
        dot_git.parent()?.join(path).canonicalize().ok()?
    } else {
        dot_git.canonicalize().ok()?
    };
    let common = std::fs::read_to_string(git_dir.join("commondir"))
        .ok()
        .and_then(|text| git_dir.join(text.trim()).canonicalize().ok())
        .unwrap_or_else(|| git_dir.clone());
    Some(GitDirs { git_dir, common })
}

/// A repository's own git dir and its common dir (config, hooks, objects, refs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitDirs {
    /// The git dir (`.git`, or a linked worktree's `<common>/worktrees/<name>`).
    pub git_dir: PathBuf,
    /// The common dir; the git dir itself for a repository's main checkout.
    pub common: PathBuf,
}

/// Options for git that Lathe runs outside the sandbox on a repository a sandboxed command could
/// have written: no fsmonitor, no hooks, no implicit bare repository, no pager, no signature
/// checks, no optional locks. Set [`SAFE_GIT_ENV`] too.
pub const SAFE_GIT_ARGS: &[&str] = &[
    "--no-optional-locks",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "safe.bareRepository=explicit",
    "-c",
    "core.pager=cat",
    "-c",
    "log.showSignature=false",
];

/// The environment for [`SAFE_GIT_ARGS`]: a partial clone fetches a missing object on demand,
/// running the remote's upload-pack.
pub const SAFE_GIT_ENV: &[(&str, &str)] = &[("GIT_NO_LAZY_FETCH", "1")];

/// The git dirs a `.git` entry stands for ([`git_dirs`]), each once.
fn named_git_dirs(dot_git: &Path) -> Vec<PathBuf> {
    let Some(dirs) = git_dirs(dot_git) else { return Vec::new() };
    let mut named = vec![dirs.git_dir];
    if dirs.common != named[0] {
        named.push(dirs.common);
    }
    named
}

/// The own git dir and the common dir of the linked worktree at `workspace`, when git itself made
/// them (see the module docs); `None` for anything a command could have planted.
fn linked(workspace: &Path, dot_git: &Path) -> Option<(PathBuf, PathBuf)> {
    let workspace = workspace.canonicalize().ok()?;
    let GitDirs { git_dir, common } = git_dirs(dot_git)?;
    if git_dir.starts_with(&workspace) || git_dir.parent()? != common.join("worktrees") {
        return None;
    }
    let back = std::fs::read_to_string(git_dir.join("gitdir")).ok()?;
    let back = Path::new(back.trim()).canonicalize().ok()?;
    (back == workspace.join(".git")).then_some((git_dir, common))
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

/// Whether `text` is a `HEAD` git accepts: a symbolic ref into `refs/` or an object id.
fn valid_head(text: &[u8]) -> bool {
    let text = String::from_utf8_lossy(text);
    let text = text.trim_end();
    text.strip_prefix("ref: ").is_some_and(|target| target.starts_with("refs/") && !target.contains(".."))
        || ((text.len() == 40 || text.len() == 64) && text.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[derive(Debug)]
struct Before {
    watched: Watched,
    names: BTreeSet<String>,
    links: BTreeSet<PathBuf>,
    head: Option<Vec<u8>>,
    /// The permission bits of the dir and of its top-level entries (a `chmod 000 objects` would
    /// make git stop seeing a repository here).
    modes: Vec<(PathBuf, u32)>,
}

/// What the watched places held before a command (see the module docs); [`GitWatch::settle`]
/// undoes what the command planted there. Dropped unsettled (a call given up on), it settles.
#[derive(Debug, Default)]
pub struct GitWatch {
    before: Vec<Before>,
    /// `.lathe`, `.claude` and `.mcp.json` of the workspace, absent before the command.
    absent: Vec<PathBuf>,
    /// Those that were symbolic links before, with their targets (the link itself is not a mount
    /// point, so a command could replace it).
    links: Vec<(PathBuf, PathBuf)>,
}

impl GitWatch {
    pub(super) fn new(watched: &[Watched], protected: &[PathBuf]) -> GitWatch {
        let before = watched
            .iter()
            .map(|watched| {
                let (names, head) = match watched {
                    Watched::GitDir(dir) => (names(dir), std::fs::read(dir.join("HEAD")).ok()),
                    Watched::Links(_) | Watched::Objects(_) => (BTreeSet::new(), None),
                };
                let modes = match watched {
                    Watched::GitDir(dir) => modes(dir),
                    Watched::Links(_) | Watched::Objects(_) => Vec::new(),
                };
                Before { links: links(watched), watched: watched.clone(), names, head, modes }
            })
            .collect();
        let absent =
            protected.iter().filter(|path| std::fs::symlink_metadata(path).is_err()).cloned().collect();
        let links = protected
            .iter()
            .filter_map(|path| Some((path.clone(), std::fs::read_link(path).ok()?)))
            .collect();
        GitWatch { before, absent, links }
    }

    /// Undoes what the command planted, one line per path for the call's result. Call it once the
    /// command and everything it started have exited.
    pub fn settle(mut self) -> Vec<String> {
        let mut undone = Vec::new();
        // Permissions first: the rest needs to read the dirs.
        for entry in &self.before {
            for (path, mode) in &entry.modes {
                let now = std::fs::symlink_metadata(path).ok().filter(|meta| !meta.file_type().is_symlink());
                if now.is_some_and(|meta| meta.permissions().mode() & 0o7777 != *mode) {
                    match std::fs::set_permissions(path, std::fs::Permissions::from_mode(*mode)) {
                        Ok(()) => undone.push(format!("restored the permissions of {}", path.display())),
                        Err(error) => undone.push(format!(
                            "could not restore the permissions of {}: {error}",
                            path.display()
                        )),
                    }
                }
            }
        }
        for (path, target) in std::mem::take(&mut self.links) {
            if std::fs::read_link(&path).is_ok_and(|now| now == target) {
                continue;
            }
            let _ = remove_any(&path);
            match std::os::unix::fs::symlink(&target, &path) {
                Ok(()) => {
                    undone.push(format!("restored the link {} -> {}", path.display(), target.display()))
                }
                Err(error) => undone.push(format!("could not restore the link {}: {error}", path.display())),
            }
        }
        let mut planted: BTreeSet<PathBuf> = std::mem::take(&mut self.absent)
            .into_iter()
            .filter(|path| std::fs::symlink_metadata(path).is_ok())
            .collect();
        let before = std::mem::take(&mut self.before);
        for entry in &before {
            if let Watched::GitDir(dir) = &entry.watched {
                // Git writes no FIFO, socket or device there; one would block git (and this check).
                planted.extend(special_files(dir));
                let names = names(dir)
                    .into_iter()
                    .filter(|name| !entry.names.contains(name) && !written_by_git(name));
                planted.extend(names.map(|name| dir.join(name)));
            }
            planted.extend(links(&entry.watched).into_iter().filter(|link| !entry.links.contains(link)));
        }
        for path in planted {
            if std::fs::symlink_metadata(&path).is_err() {
                continue;
            }
            match remove_any(&path) {
                Ok(()) => undone.push(format!("removed {}", path.display())),
                Err(error) => undone.push(format!("could not remove {}: {error}", path.display())),
            }
        }
        for entry in &before {
            let (Watched::GitDir(dir), Some(head)) = (&entry.watched, &entry.head) else { continue };
            let path = dir.join("HEAD");
            let now = std::fs::symlink_metadata(&path)
                .ok()
                .filter(|meta| meta.is_file())
                .and_then(|_| std::fs::read(&path).ok());
            if now.as_deref().is_some_and(valid_head) {
                continue;
            }
            let _ = remove_any(&path);
            match std::fs::write(&path, head) {
                Ok(()) => {
                    undone.push(format!("restored {} (git no longer took it for a HEAD)", path.display()))
                }
                Err(error) => undone.push(format!("could not restore {}: {error}", path.display())),
            }
        }
        for line in &undone {
            tracing::warn!("sandbox: {line}");
        }
        undone
    }
}

impl Drop for GitWatch {
    fn drop(&mut self) {
        if !self.before.is_empty() || !self.absent.is_empty() || !self.links.is_empty() {
            let rest = GitWatch {
                before: std::mem::take(&mut self.before),
                absent: std::mem::take(&mut self.absent),
                links: std::mem::take(&mut self.links),
            };
            let _ = rest.settle();
        }
    }
}

/// Removes `path` whatever it is (a directory with its content, a file, a link; never what a
/// link points to).
fn remove_any(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(error) => Err(error),
    }
}

/// The permission bits of `dir` and of each of its top-level entries (links left out).
fn modes(dir: &Path) -> Vec<(PathBuf, u32)> {
    let mode = |path: &Path| {
        std::fs::symlink_metadata(path)
            .ok()
            .filter(|meta| !meta.file_type().is_symlink())
            .map(|meta| meta.permissions().mode() & 0o7777)
    };
    let mut found: Vec<(PathBuf, u32)> = mode(dir).map(|m| (dir.to_path_buf(), m)).into_iter().collect();
    if let Ok(entries) = std::fs::read_dir(dir) {
        found.extend(entries.flatten().filter_map(|entry| Some((entry.path(), mode(&entry.path())?))));
    }
    found
}

/// The FIFOs, sockets and devices among the top-level entries of `dir`.
fn special_files(dir: &Path) -> Vec<PathBuf> {
    use std::os::unix::fs::FileTypeExt;
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    entries
        .flatten()
        .filter(|entry| {
            entry
                .file_type()
                .is_ok_and(|t| t.is_fifo() || t.is_socket() || t.is_block_device() || t.is_char_device())
        })
        .map(|entry| entry.path())
        .collect()
}

fn names(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .map(|entries| entries.flatten().filter_map(|e| e.file_name().into_string().ok()).collect())
        .unwrap_or_default()
}

/// The symbolic links in a watched place, following none: below a git dir or a refs or logs dir
/// (an object store one level deep), in an object store one level deep and in its `pack/` and
/// `info/` (its loose objects are many, and git only reads those).
fn links(watched: &Watched) -> BTreeSet<PathBuf> {
    let (dir, objects) = match watched {
        Watched::GitDir(dir) => (dir.as_path(), Some(dir.join("objects"))),
        Watched::Links(dir) => (dir.as_path(), None),
        Watched::Objects(dir) => return object_links(dir),
    };
    let walk = |skip: Option<PathBuf>| {
        ignore::WalkBuilder::new(dir)
            .standard_filters(false)
            .follow_links(false)
            .filter_entry(move |entry| skip.as_deref() != Some(entry.path()))
            .build()
            .flatten()
            .filter(|entry| entry.path_is_symlink())
            .map(|entry| entry.into_path())
            .collect::<BTreeSet<_>>()
    };
    let mut found = walk(objects.clone());
    if let Some(objects) = objects {
        found.extend(object_links(&objects));
    }
    found
}

fn object_links(objects: &Path) -> BTreeSet<PathBuf> {
    let shallow = |dir: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .flatten()
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_symlink()))
                    .map(|e| e.path())
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut found: BTreeSet<PathBuf> = shallow(objects).into_iter().collect();
    for sub in ["pack", "info"] {
        found.extend(shallow(&objects.join(sub)));
    }
    found
}

#[cfg(test)]
#[path = "git_tests.rs"]
mod tests;
