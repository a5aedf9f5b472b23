//! Why a team operation failed.

use std::path::PathBuf;

/// Why a team operation failed.
#[derive(Debug, thiserror::Error)]
pub enum TeamError {
    /// A file of the team could not be read or written.
    #[error("{}: {error}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        error: std::io::Error,
    },
    /// A file of the team does not hold what it should.
    #[error("{}: {detail}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// Another process held a lock past the bounded retries.
    #[error(
        "{} is locked by {} (tried {attempts} times for about 2 s)",
        path.display(),
        holder.map_or("another process".to_string(), |pid| format!("process {pid}"))
    )]
    Locked {
        /// The lock file.
        path: PathBuf,
        /// The pid of its last holder, when known.
        holder: Option<u32>,
        /// The tries made.
        attempts: u32,
    },
    /// There is no team in this folder.
    #[error("no team at {} (team_create makes one)", path.display())]
    NoTeam {
        /// The roster file looked for.
        path: PathBuf,
    },
    /// A file watch could not be set.
    #[error("cannot watch {}: {detail}", path.display())]
    Watch {
        /// The file.
        path: PathBuf,
        /// Why.
        detail: String,
    },
    /// Another member is editing the file.
    #[error(
        "{} is being edited by the teammate `{owner}`; two members never edit one file (ask `{owner}` with \
         send_message, or start teammates with isolation: worktree)",
        path.display()
    )]
    Owned {
        /// The file.
        path: PathBuf,
        /// The member that owns it.
        owner: String,
    },
    /// A board change that the rules refuse (a blocked item, an unknown one, a cycle).
    #[error("{0}")]
    Board(String),
    /// Anything else the model can fix (a bad name, a member that does not exist).
    #[error("{0}")]
    Invalid(String),
}
