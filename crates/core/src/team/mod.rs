//! Agent teams (FEATURES.md §H): one lead and long-lived teammates, each a `lathe` process of its
//! own, that talk only through a file mailbox and coordinate on a shared task board.
//!
//! On disk, under `<lathe home>/teams/<team>/`:
//! - `team.json`: the roster ([`roster`]): the lead's process, each teammate's workspace and pid;
//! - `inbox/<member>.jsonl` and `inbox/<member>.cursor`: the mailboxes ([`mailbox`]), one
//!   append-only file per member (the lead is `lead`) and its persisted read cursor;
//! - `board.json`: the task board ([`board`]), items with `blocked_by` kept both ways;
//! - `owners.json`: which member edits which file ([`owners`]);
//! - `worktrees/<member>`: the git worktree of a teammate started with `isolation: worktree`.
//!
//! Every shared file is changed under an exclusive lock ([`lock`]), with bounded retries; whole
//! files are replaced atomically ([`store`]); mailbox lines are appended and synced. A teammate
//! waits for mail on a file watch ([`watch`]), not a poll.
//!
//! The lead's side (its tools, its teammates' processes, its mail before each request) is
//! [`lead`]; the tools both sides share are [`tools`]; the teammate's own loop is the front end's
//! (`lathe teammate`).

pub mod approval;
pub mod board;
pub mod coordinator;
mod delivery;
mod error;
pub mod lead;
pub mod lead_tools;
pub mod lock;
pub mod mailbox;
mod mates;
pub mod owners;
pub mod roster;
pub mod spawn;
pub mod store;
pub mod tools;
pub mod watch;

use std::path::{Path, PathBuf};

pub use error::TeamError;

/// The folder of the team `name` under Lathe's home `home`.
pub fn team_dir(home: &Path, name: &str) -> PathBuf {
    home.join("teams").join(name)
}

/// The inbox folder of the team folder `dir`.
pub fn inbox_dir(dir: &Path) -> PathBuf {
    dir.join("inbox")
}

/// Checks a team or member name: 1-40 ASCII letters, digits, `-` and `_` (it names files).
pub fn check_name(what: &str, name: &str) -> Result<(), TeamError> {
    let ok = !name.is_empty()
        && name.len() <= 40
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(TeamError::Invalid(format!(
            "`{name}` is not a valid {what} name: use 1-40 letters, digits, `-` or `_`"
        )))
    }
}

#[cfg(test)]
#[path = "mailbox_tests.rs"]
mod mailbox_tests;

#[cfg(test)]
#[path = "board_tests.rs"]
mod board_tests;

#[cfg(test)]
#[path = "coordinator_tests.rs"]
mod coordinator_tests;

#[cfg(test)]
#[path = "approval_tests.rs"]
mod approval_tests;
