//! Who is in a team, `<team>/team.json`: the lead's process and each teammate as it was started
//! (its workspace, its agent type, its process). Written by the lead's side only (under the
//! roster's lock), read by every member to check the names it sends to.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::mailbox::LEAD;
use super::{TeamError, lock, store};

/// One teammate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Member {
    /// Its name in the team (its mailbox's name).
    pub name: String,
    /// The agent type it was started as, if any.
    #[serde(default)]
    pub agent_type: Option<String>,
    /// The folder it works in (the lead's workspace, or its own git worktree).
    pub workspace: PathBuf,
    /// Whether that folder is a git worktree of its own.
    #[serde(default)]
    pub worktree: bool,
    /// Its process id, once started.
    #[serde(default)]
    pub pid: Option<u32>,
    /// When it was started, milliseconds since the Unix epoch.
    pub started_ms: u64,
}

/// A team's roster.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Roster {
    /// The team's name.
    pub name: String,
    /// The lead's process id.
    pub lead_pid: u32,
    /// The lead's workspace.
    pub workspace: PathBuf,
    /// The teammates, by name.
    #[serde(default)]
    pub members: BTreeMap<String, Member>,
}

impl Roster {
    /// The roster of the team folder `dir`; an error when there is none.
    pub fn load(dir: &Path) -> Result<Roster, TeamError> {
        let path = dir.join("team.json");
        store::read::<Roster>(&path)?.ok_or(TeamError::NoTeam { path })
    }

    /// Whether `name` is a member of this team (the lead or a teammate).
    pub fn knows(&self, name: &str) -> bool {
        name == LEAD || self.members.contains_key(name)
    }

    /// The names one can send to: `lead` and the teammates.
    pub fn names(&self) -> Vec<String> {
        std::iter::once(LEAD.to_string()).chain(self.members.keys().cloned()).collect()
    }
}

/// Writes `roster` to the team folder `dir`.
pub fn save(dir: &Path, roster: &Roster) -> Result<(), TeamError> {
    store::write(&dir.join("team.json"), roster)
}

/// Changes the roster of `dir` under its lock.
pub fn change(
    dir: &Path,
    change: impl FnOnce(&mut Roster) -> Result<(), TeamError>,
) -> Result<(), TeamError> {
    lock::locked(&dir.join("team.lock"), || {
        let mut roster = Roster::load(dir)?;
        change(&mut roster)?;
        save(dir, &roster)
    })
}
