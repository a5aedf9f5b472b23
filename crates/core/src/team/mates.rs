//! What the lead knows of its teammates: their states and how mail changes them, the brief a
//! teammate starts with.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::mailbox::Kind;

/// An agent type a teammate can be started as.
#[derive(Debug, Clone, PartialEq)]
pub struct Role {
    /// Its model, when not the lead's.
    pub model: Option<String>,
    /// Its role's prompt (the agent type's system prompt).
    pub prompt: String,
}

/// Looks an agent type up by name: its role, or why there is none (naming the types there are).
pub type Roles = Arc<dyn Fn(&str) -> Result<Role, String> + Send + Sync>;

/// A teammate's state, as the lead knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MateState {
    /// Started, or sent a message since it was last idle.
    Working,
    /// Finished a turn and waits for mail.
    Idle,
    /// Asked to shut down.
    Stopping,
    /// Ended after a shutdown.
    Exited,
    /// Ended without being asked to.
    Died,
}

impl MateState {
    /// Its name (`working`, `idle`, …).
    pub fn word(self) -> &'static str {
        match self {
            MateState::Working => "working",
            MateState::Idle => "idle",
            MateState::Stopping => "stopping",
            MateState::Exited => "exited",
            MateState::Died => "died",
        }
    }

    pub(super) fn running(self) -> bool {
        matches!(self, MateState::Working | MateState::Idle | MateState::Stopping)
    }

    pub(super) fn busy(self) -> bool {
        matches!(self, MateState::Working | MateState::Stopping)
    }
}

/// One teammate, as `/team` lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct MateInfo {
    /// Its name.
    pub name: String,
    /// Its state.
    pub state: MateState,
    /// When it last did something the lead saw (started, mail), ms since the Unix epoch.
    pub last_activity_ms: u64,
    /// Its process id.
    pub pid: Option<u32>,
    /// The folder it works in.
    pub workspace: PathBuf,
}

/// A teammate's state after a message of `kind` from it.
pub(super) fn next_state(state: MateState, kind: Kind) -> MateState {
    match (state, kind) {
        (MateState::Exited | MateState::Died, _) => state,
        (_, Kind::Idle) if state == MateState::Stopping => state,
        (_, Kind::Idle) => MateState::Idle,
        (_, Kind::Exited) => MateState::Exited,
        (_, Kind::Died) => MateState::Died,
        (_, Kind::Message | Kind::Permission | Kind::Shutdown | Kind::Approval | Kind::Answer) => state,
    }
}

/// The first message a teammate gets: who it is, how the team works, its role and its task.
pub(super) fn brief(team: &str, name: &str, role: Option<&str>, prompt: &str) -> String {
    let mut text = format!(
        "You are `{name}`, a teammate in the team `{team}`, working for its lead (`lead`) beside other \
         teammates, in a session of your own. You talk to the others only with send_message (to `lead` or a \
         teammate's name); their messages reach you as <team-mail>. Coordinate on the team's task board: \
         board_list and board_get to see it, board_update to take an item (status in_progress) before you \
         work on it and to mark it done when finished. Tell the lead what you did with send_message before \
         you end a turn; then you wait until a message comes.\n"
    );
    if let Some(role) = role.filter(|role| !role.trim().is_empty()) {
        text.push_str(&format!("\nYour role:\n{}\n", role.trim()));
    }
    text.push_str(&format!("\nYour task:\n{prompt}"));
    text
}

/// Whether the process `pid` exists.
pub(super) fn alive(pid: u32) -> bool {
    Path::new("/proc").join(pid.to_string()).exists()
}
