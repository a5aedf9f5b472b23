//! Permission policy: decides, for every tool call, whether it may run (ARCHITECTURE.md §4.3,
//! FEATURES.md §D and §J).
//!
//! This crate owns the permission modes, the Claude-Code-compatible rules and the settings files
//! they come from, the shell command analysis, the path guard, the secret checks and the OS
//! sandbox. It executes nothing and talks to nobody: a tool declares what a call touches (an
//! [`Access`]), [`Policy::decide`] answers allow, ask or deny naming the rule or mode that decided,
//! and the executor enforces the answer (a headless front end turns an ask into a denial with
//! [`Decision::headless`]).
//!
//! Modules, in the order a decision uses them: [`rules`] and [`settings`] (what the user wrote),
//! [`path`] (where files may be read and written), [`shell`] (what a command line runs), [`decide`]
//! (the decision itself), [`env`](mod@env) (which environment variables a command must not see) and
//! [`sandbox`] (what a command can reach once it runs).
//!
//! ```
//! use lathe_policy::{Access, Policy, PermissionMode, Verdict};
//! let workspace = std::env::temp_dir();
//! let policy = Policy::with_mode(PermissionMode::Default, &workspace);
//! let ls = Access::Execute { command: "ls -la && git status".into(), cwd: workspace.clone() };
//! assert_eq!(policy.decide("shell", &ls).verdict, Verdict::Allow);
//! let rm = Access::Execute { command: "ls; rm -rf ~".into(), cwd: workspace };
//! assert_eq!(policy.decide("shell", &rm).verdict, Verdict::Ask);
//! ```

#![warn(missing_docs)]

pub mod decide;
pub mod env;
pub mod path;
pub mod rules;
pub mod sandbox;
pub mod scope;
pub mod settings;
pub mod shell;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use decide::{Decision, Policy, PolicyConfig, Verdict};
pub use sandbox::{NetworkAccess, SandboxMode};

/// What one tool call touches, declared by the tool after its arguments validated. Paths are
/// absolute (resolved against the workspace, not yet through symlinks: the policy does that).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    /// Session state only (the task list).
    Session,
    /// Reads these files or directories.
    Read(Vec<PathBuf>),
    /// Writes these files.
    Write(Vec<PathBuf>),
    /// Runs a shell command line in a directory.
    Execute {
        /// The command line (bash).
        command: String,
        /// The directory it starts in.
        cwd: PathBuf,
    },
    /// Fetches a URL.
    Fetch {
        /// The URL.
        url: String,
    },
    /// Reads or writes long-term memory: `path` is the entry's virtual path below `/memories/`
    /// (`project/pnpm.md`), what `Memory(…)` rules match.
    Memory {
        /// The virtual path below `/memories/` (`user/…`, `project/…`).
        path: String,
        /// Whether the call changes memory (`create`, `str_replace`, `insert`, `delete`, `rename`).
        write: bool,
    },
    /// A tool that declares nothing (MCP tools, skills): decided on its name and effect.
    Undeclared {
        /// Whether the tool says it only reads.
        read_only: bool,
    },
}

/// What a tool call may do. Decides concurrency (read-only calls of one response run together) and
/// permission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// Reads the workspace or session state only.
    ReadOnly,
    /// Changes files or runs commands. The default for anything that does not say otherwise.
    Mutating,
    /// Talks to the network.
    Network,
}

pub use lathe_protocol::{PermissionMode, UnknownMode};
