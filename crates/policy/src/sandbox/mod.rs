//! The OS sandbox for `shell` commands on Linux (FEATURES.md §D "OS sandbox").
//!
//! Policies: `workspace-write` (writes only to the workspace, its extra roots and the temp dirs;
//! `.git`, `.lathe` and `.claude` inside them stay read-only), `read-only` (no writes anywhere),
//! `off`. The network is off inside the sandbox unless [`NetworkAccess::On`].
//!
//! Backends, chosen once per process on the first command that needs one (never at start-up):
//! 1. bubblewrap (`bwrap`): a read-only bind of `/`, writable binds of the roots, read-only binds
//!    of the protected directories over them, a fresh `/dev`, and `--unshare-net`;
//! 2. Landlock (kernel ≥ 5.13): write access only beneath the roots (it cannot make `.git`
//!    read-only inside a writable root), TCP bind/connect denied when the kernel has Landlock ABI
//!    ≥ 4;
//! 3. neither: [`backend`] says why, the policy asks before every command that is not read-only,
//!    and commands run unconfined once approved.
//!
//! `LATHE_SANDBOX_BACKEND=bwrap|landlock|none` forces a backend (tests; machines where one misbehaves).

mod bwrap;
#[cfg(target_os = "linux")]
mod landlock;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::OnceLock;

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

/// The backend of this machine, probed once (on first use); `Err` says why there is none.
pub fn backend() -> Result<&'static Backend, &'static str> {
    static BACKEND: OnceLock<Result<Backend, String>> = OnceLock::new();
    BACKEND.get_or_init(probe).as_ref().map_err(String::as_str)
}

fn probe() -> Result<Backend, String> {
    let forced = std::env::var("LATHE_SANDBOX_BACKEND").ok();
    let mut reasons = Vec::new();
    if forced.as_deref().is_none_or(|f| f == "bwrap") {
        match bwrap::probe() {
            Ok(path) => return Ok(Backend::Bubblewrap(path)),
            Err(why) => reasons.push(why),
        }
    }
    #[cfg(target_os = "linux")]
    if forced.as_deref().is_none_or(|f| f == "landlock") {
        match landlock::probe() {
            Ok(abi) => return Ok(Backend::Landlock(abi)),
            Err(why) => reasons.push(why),
        }
    }
    if let Some(forced) = forced.filter(|f| !matches!(f.as_str(), "bwrap" | "landlock")) {
        reasons.push(format!("LATHE_SANDBOX_BACKEND={forced}"));
    }
    Err(reasons.join("; "))
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
    /// Directories inside `writable` that stay read-only (`.git`, `.lathe`, `.claude`).
    pub read_only: Vec<PathBuf>,
}

impl Sandbox {
    /// The sandbox for a workspace: `writable` roots, with `.git`, `.lathe` and `.claude` of the
    /// first root (the workspace) read-only.
    pub fn new(mode: SandboxMode, network: NetworkAccess, writable: Vec<PathBuf>) -> Sandbox {
        let read_only = match writable.first() {
            Some(workspace) => {
                [".git", ".lathe", ".claude"].iter().map(|name| workspace.join(name)).collect()
            }
            None => Vec::new(),
        };
        Sandbox { mode, network, writable, read_only }
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
        match backend() {
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

    /// One line describing the sandbox, for a command that failed inside it, with how to loosen it.
    pub fn failure_note(&self) -> String {
        let git_read_only = matches!(backend(), Ok(Backend::Bubblewrap(_)));
        let writes = match self.mode {
            SandboxMode::WorkspaceWrite if git_read_only => {
                "writes only to the workspace and temp dirs, .git read-only"
            }
            SandboxMode::WorkspaceWrite => "writes only to the workspace and temp dirs",
            SandboxMode::ReadOnly => "no writes",
            SandboxMode::Off => "unconfined",
        };
        let network = match self.network {
            NetworkAccess::Off => "network off",
            NetworkAccess::On => "network on",
        };
        format!(
            "[sandbox: this command ran in the {} sandbox ({writes}, {network}); if it failed because of that, \
             the user can allow it with `[sandbox] mode = \"off\"` or `network = \"on\"` in ~/.lathe/config.toml, \
             or --sandbox off]",
            self.mode.as_str()
        )
    }
}

/// Whether `output` of a failed command looks like the sandbox stopped it (a read-only file
/// system, a denied write, no network).
pub fn looks_blocked(output: &str) -> bool {
    const SIGNS: &[&str] = &[
        "Read-only file system",
        "Permission denied",
        "Operation not permitted",
        "Network is unreachable",
        "Could not resolve host",
        "Temporary failure in name resolution",
        "Name or service not known",
        "Connection refused",
    ];
    SIGNS.iter().any(|sign| output.contains(sign))
}
