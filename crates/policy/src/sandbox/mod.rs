//! The OS sandbox for `shell` commands on Linux (FEATURES.md §D "OS sandbox").
//!
//! Policies: `workspace-write` (writes only to the workspace, its extra roots and the temp dirs;
//! `.lathe`, `.claude` and `.mcp.json` stay read-only, and of the repository only what a commit writes is
//! writable, see [`git`]), `read-only` (no writes anywhere),
//! `off`. The network is off inside the sandbox unless [`NetworkAccess::On`].
//!
//! Backends, probed once per process and network policy ([`probe`]; a session starts the probe in
//! the background):
//! 1. bubblewrap (`bwrap`): a read-only bind of `/`, writable binds of the roots, read-only binds
//!    of the protected directories over them, a fresh `/dev` and `/proc`, a pid namespace (nothing
//!    a command starts outlives it) and, with the network off, `--unshare-net`;
//! 2. Landlock (kernel ≥ 5.13): write access only beneath the roots (it cannot make `.git`
//!    read-only inside a writable root), TCP bind/connect denied when the kernel has Landlock ABI
//!    ≥ 4;
//! 3. neither: [`backend`] says why, the policy asks before every command that is not read-only,
//!    and commands run unconfined once approved.
//!
//! `LATHE_SANDBOX_BACKEND=bwrap|landlock|none` forces a backend (tests; machines where one misbehaves).

mod bwrap;
mod git;
#[cfg(target_os = "linux")]
mod landlock;
pub mod probe;

pub use git::{GitDirs, GitWatch, SAFE_GIT_ARGS, SAFE_GIT_ENV, git_dirs};

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// What a sandboxed command may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Writes only to the workspace, extra roots and temp dirs; `.git` read-only.
    #[default]
    WorkspaceWrite,
    /// No writes at all.
    ReadOnly,
    /// No sandbox: commands run with the user's own rights, so the policy alone decides.
    Off,
}

impl SandboxMode {
    /// The config and flag spelling (`workspace-write`, `read-only`, `off`); [`FromStr`] parses it.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::Off => "off",
        }
    }
}

/// An unknown sandbox mode name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown sandbox mode `{0}` (expected workspace-write, read-only or off)")]
pub struct UnknownSandboxMode(pub String);

impl FromStr for SandboxMode {
    type Err = UnknownSandboxMode;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name {
            "workspace-write" => Ok(SandboxMode::WorkspaceWrite),
            "read-only" => Ok(SandboxMode::ReadOnly),
            "off" => Ok(SandboxMode::Off),
            other => Err(UnknownSandboxMode(other.to_string())),
        }
    }
}

/// Whether sandboxed commands reach the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NetworkAccess {
    /// No network (bubblewrap: a new network namespace; Landlock: TCP denied).
    #[default]
    Off,
    /// The host's network, unfiltered (no namespace, no Landlock network rule).
    On,
}

/// Which mechanism confines commands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    /// bubblewrap at this path.
    Bubblewrap(PathBuf),
    /// Landlock, with the kernel's ABI version.
    Landlock(i32),
}

/// The backend of this machine for commands with `network`, probed once ([`probe::probed`]);
/// `Err` says why there is none.
pub fn backend(network: NetworkAccess) -> Result<&'static Backend, String> {
    let probed = probe::probed(network);
    probed.backend.as_ref().ok_or_else(|| probed.reasons())
}

/// One line for `/status` and the `init` line: mode, network and backend, or why there is none
/// (`workspace-write, network off, bubblewrap`).
pub fn describe(mode: SandboxMode, network: NetworkAccess) -> String {
    if mode == SandboxMode::Off {
        return "off (commands run with your own rights)".into();
    }
    let network_word = match network {
        NetworkAccess::Off => "network off",
        NetworkAccess::On => "network on",
    };
    let probed = probe::probed(network);
    match probed.backend_name() {
        Some(name) => format!("{}, {network_word}, {name}", mode.as_str()),
        None => format!(
            "{}, {network_word}, no backend ({}): commands that are not read-only ask",
            mode.as_str(),
            probed.reasons()
        ),
    }
}

/// How one command is confined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    /// What it may write.
    pub mode: SandboxMode,
    /// Whether it reaches the network.
    pub network: NetworkAccess,
    /// Where it may write in `workspace-write` (workspace, extra roots, temp dirs).
    pub writable: Vec<PathBuf>,
    /// Git dirs of the workspace's repository inside `writable` but outside the workspace, bound
    /// read-only before `git_writable` (see [`git`]).
    pub shield: Vec<PathBuf>,
    /// The parts of the repository's git dirs a commit writes, bound writable after `shield`.
    pub git_writable: Vec<PathBuf>,
    /// Paths inside `writable` that stay read-only (`.lathe`, `.claude`, a worktree's `.git` file,
    /// the hooks and config of the repository's git dir).
    pub read_only: Vec<PathBuf>,
    /// Directories commands must not see at all (bubblewrap mounts an empty tmpfs over each),
    /// except the parts of `writable` inside them, which stay as bound; set with
    /// [`Sandbox::hiding`]. Used to keep the other tasks of a batch out of a task's view.
    pub hidden: Vec<PathBuf>,
    /// What is checked after each command ([`Sandbox::watch_git`]).
    watched: Vec<git::Watched>,
    /// `.lathe`, `.claude` and `.mcp.json` of the workspace (settings, hooks and MCP servers the
    /// next session runs unsandboxed): read-only, and removed after a command that created them.
    settings_dirs: Vec<PathBuf>,
}

impl Sandbox {
    /// The sandbox for a workspace: `writable` roots, with `.lathe` and `.claude` of the first root
    /// (the workspace) read-only, and of its git repository what `git add` and `git commit` write
    /// writable and the rest read-only (see [`git`]'s module docs).
    pub fn new(mode: SandboxMode, network: NetworkAccess, writable: Vec<PathBuf>) -> Sandbox {
        let Some(workspace) = writable.first().cloned() else {
            let (read_only, watched, settings_dirs) = (Vec::new(), Vec::new(), Vec::new());
            let (shield, git_writable) = (Vec::new(), Vec::new());
            return Sandbox {
                mode,
                network,
                writable,
                shield,
                git_writable,
                read_only,
                hidden: Vec::new(),
                watched,
                settings_dirs,
            };
        };
        let git = if mode == SandboxMode::WorkspaceWrite {
            // bubblewrap also binds /dev/shm writable.
            let exposed: Vec<PathBuf> = writable.iter().cloned().chain([PathBuf::from("/dev/shm")]).collect();
            git::access(&workspace, &exposed)
        } else {
            Default::default()
        };
        let settings_dirs: Vec<PathBuf> =
            [".lathe", ".claude", ".mcp.json"].iter().map(|name| workspace.join(name)).collect();
        let mut read_only = settings_dirs.clone();
        if !git.writable.contains(&workspace.join(".git")) {
            read_only.push(workspace.join(".git"));
        }
        read_only.extend(git.read_only);
        let settings_dirs = if mode == SandboxMode::WorkspaceWrite { settings_dirs } else { Vec::new() };
        Sandbox {
            mode,
            network,
            writable,
            shield: git.shield,
            git_writable: git.writable,
            read_only,
            hidden: Vec::new(),
            watched: git.watched,
            settings_dirs,
        }
    }

    /// This sandbox with `dirs` hidden from commands (see [`Sandbox::hidden`]); only the
    /// bubblewrap backend can hide a directory, Landlock leaves it readable.
    pub fn hiding(mut self, dirs: Vec<PathBuf>) -> Sandbox {
        // Resolved, as the workspace and the writable roots are, so that "inside" compares alike.
        self.hidden = dirs.iter().map(|dir| crate::path::real_path(dir)).collect();
        self
    }

    /// What the writable git dirs and the workspace's settings dirs hold now; after the command
    /// (and all it started) has exited, [`git::GitWatch::settle`] undoes what it planted there
    /// that git or the next session would act on outside the sandbox. Empty when no backend
    /// confines the command or nothing is writable.
    pub fn watch_git(&self) -> GitWatch {
        if self.mode != SandboxMode::WorkspaceWrite || backend(self.network).is_err() {
            return GitWatch::default();
        }
        GitWatch::new(&self.watched, &self.settings_dirs)
    }

    /// A `std::process::Command` that runs `program args…` in `cwd` inside the sandbox, or
    /// unconfined when the mode is `off` or no backend exists (the policy asked first in that
    /// case). The caller sets stdio, environment and process group.
    pub fn command(&self, program: &str, args: &[&OsStr], cwd: &Path) -> std::process::Command {
        let plain = || {
            let mut command = std::process::Command::new(program);
            command.args(args).current_dir(cwd);
            command
        };
        if self.mode == SandboxMode::Off {
            return plain();
        }
        match backend(self.network) {
            Ok(Backend::Bubblewrap(bwrap)) => bwrap::command(self, bwrap, program, args, cwd),
            #[cfg(target_os = "linux")]
            Ok(Backend::Landlock(abi)) => {
                let mut command = plain();
                landlock::confine(self, *abi, &mut command);
                command
            }
            #[cfg(not(target_os = "linux"))]
            Ok(Backend::Landlock(_)) => plain(),
            Err(_) => plain(),
        }
    }

    /// A line for a command that failed inside the sandbox with `output`, or `None` when the
    /// output shows no sign of the sandbox: which refusal it looks like (the network, a write),
    /// what the sandbox allows, and the setting that allows more.
    pub fn failure_note(&self, output: &str) -> Option<String> {
        let network =
            self.network == NetworkAccess::Off && NETWORK_SIGNS.iter().any(|sign| output.contains(sign));
        let write = self.mode != SandboxMode::Off && WRITE_SIGNS.iter().any(|sign| output.contains(sign));
        let bwrap = matches!(backend(self.network), Ok(Backend::Bubblewrap(_)));
        let mut notes = Vec::new();
        if network {
            let loopback = if bwrap {
                " (the sandbox has its own loopback: servers on the host's localhost are out of reach too)"
            } else {
                ""
            };
            notes.push(format!(
                "the sandbox refused the network: commands run with the network off{loopback}; the user can allow \
                 it with `[sandbox] network = \"on\"` in ~/.lathe/config.toml"
            ));
        }
        if write {
            let writes = match self.mode {
                SandboxMode::WorkspaceWrite if bwrap => {
                    "writes go only to the workspace and the temp dirs; .git's hooks and config, .lathe and .claude \
                     are read-only"
                }
                SandboxMode::WorkspaceWrite => "writes go only to the workspace and the temp dirs",
                _ => "the sandbox is read-only",
            };
            notes.push(format!(
                "the sandbox may have refused a write ({} sandbox: {writes}); the user can allow more with \
                 `[sandbox] mode = \"off\"` in ~/.lathe/config.toml or --sandbox off",
                self.mode.as_str()
            ));
        }
        (!notes.is_empty()).then(|| format!("[sandbox: {}]", notes.join("; ")))
    }
}

/// What a refused connection or name lookup prints (bash, curl, git, Python, Node).
const NETWORK_SIGNS: &[&str] = &[
    "Network is unreachable",
    "Could not resolve host",
    "Temporary failure in name resolution",
    "Name or service not known",
    "Connection refused",
    "Failed to connect",
    "ECONNREFUSED",
    "ENOTFOUND",
    "EAI_AGAIN",
    "getaddrinfo",
];

/// What a refused write prints.
const WRITE_SIGNS: &[&str] =
    &["Read-only file system", "Permission denied", "Operation not permitted", "Device or resource busy"];
