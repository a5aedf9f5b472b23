//! The per-session context handed to every tool call: where the workspace is, how to cancel, the
//! shared read-before-write state, where oversized outputs go, and the shell's environment.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::builtin::jobs::JobTable;
use crate::files::FileTracker;

/// Default `shell` timeout in milliseconds (FEATURES.md §C).
pub const DEFAULT_SHELL_TIMEOUT_MS: u64 = 120_000;

/// Per-session context handed to every tool call.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// Absolute workspace root; relative `path` arguments resolve against it; the shell's cwd.
    pub workspace: PathBuf,
    /// Fires when the user interrupts; a tool must stop promptly (the shell kills its process group).
    pub cancel: CancellationToken,
    /// Read-before-write state, shared by all calls of a session.
    pub files: Arc<FileTracker>,
    /// Where oversized outputs are written (default `~/.lathe/tool-results`).
    pub spill_dir: PathBuf,
    /// Extra environment variables for `shell` (applied over the inherited environment).
    pub env: Vec<(String, String)>,
    /// `shell` timeout when the call gives none, in milliseconds.
    pub shell_default_timeout_ms: u64,
    /// Which inherited variables `shell` commands must not see (see [`crate::builtin::shell_env`]).
    pub shell_env: ShellEnv,
    /// The OS sandbox `shell` commands run in; `None` runs them unconfined.
    pub sandbox: Option<Arc<lathe_policy::sandbox::Sandbox>>,
    /// The id of the tool call being run (empty outside a call); tools that report progress of
    /// their own (a sub-agent) tag it with this id.
    pub call_id: String,
    /// The session's permission policy, when there is one: the search tools' walks leave out what
    /// its deny rules forbid reading ([`lathe_policy::Policy::read_denied`]).
    pub policy: Option<Arc<lathe_policy::Policy>>,
    /// The session's background jobs (`shell` with `run_in_background`), shared by every clone.
    pub jobs: Arc<JobTable>,
    /// The editor text files are read from and written to instead of the disk (see
    /// [`crate::editor`]); `None`: the disk.
    pub editor: Option<Arc<dyn crate::editor::EditorFiles>>,
}

/// The environment policy of `shell`: secrets are removed from what commands inherit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellEnv {
    /// Variables to keep although their names look secret (`shell_env.keep` in config).
    pub keep: Vec<String>,
    /// Further variables to remove: the provider key variables of the configuration.
    pub remove: Vec<String>,
}

impl ToolContext {
    /// A context for `workspace` with a fresh cancellation token and file tracker, the spill
    /// directory `~/.lathe/tool-results` (or `<workspace>/.lathe/tool-results` when there is no
    /// home directory), no extra environment, secrets scrubbed from the shell's environment, no
    /// sandbox, the 120 s shell timeout and no background jobs.
    pub fn new(workspace: PathBuf) -> ToolContext {
        let spill_dir = match home_dir() {
            Some(home) => home.join(".lathe").join("tool-results"),
            None => workspace.join(".lathe").join("tool-results"),
        };
        ToolContext {
            workspace,
            cancel: CancellationToken::new(),
            files: Arc::new(FileTracker::new()),
            spill_dir,
            env: Vec::new(),
            shell_default_timeout_ms: DEFAULT_SHELL_TIMEOUT_MS,
            shell_env: ShellEnv::default(),
            sandbox: None,
            call_id: String::new(),
            policy: None,
            jobs: Arc::new(JobTable::new()),
            editor: None,
        }
    }

    /// Resolves a model-supplied path: `~/…` against the home directory, relative paths against
    /// the workspace; `.` and `..` components are folded lexically (symlinks are not resolved).
    pub fn resolve(&self, path: &str) -> PathBuf {
        let raw = Path::new(path);
        let joined = if let Some(rest) = path.strip_prefix("~/") {
            match home_dir() {
                Some(home) => home.join(rest),
                None => self.workspace.join(raw),
            }
        } else if raw.is_absolute() {
            raw.to_path_buf()
        } else {
            self.workspace.join(raw)
        };
        normalize(&joined)
    }

    /// `path` relative to the workspace when it lies inside it, otherwise as given; for display.
    pub fn display_path(&self, path: &Path) -> String {
        match path.strip_prefix(&self.workspace) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
            Ok(rel) => rel.display().to_string(),
            Err(_) => path.display().to_string(),
        }
    }
}

/// `$HOME`, when set and absolute.
fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME").map(PathBuf::from).filter(|p| p.is_absolute())
}

fn normalize(path: &Path) -> PathBuf {
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_resolve_against_the_workspace() {
        let ctx = ToolContext::new(PathBuf::from("/ws/project"));
        assert_eq!(ctx.resolve("src/lib.rs"), PathBuf::from("/ws/project/src/lib.rs"));
        assert_eq!(ctx.resolve("./a/../b.txt"), PathBuf::from("/ws/project/b.txt"));
        assert_eq!(ctx.resolve("/etc/hosts"), PathBuf::from("/etc/hosts"));
        assert_eq!(ctx.display_path(Path::new("/ws/project/src/x.rs")), "src/x.rs");
        assert_eq!(ctx.display_path(Path::new("/elsewhere/x.rs")), "/elsewhere/x.rs");
    }
}
