//! What the user's extensions offer a front end: the `/name` commands a session knows besides the
//! front end's own (custom command files and skills), for menus, completion and `/skills`.

use serde::{Deserialize, Serialize};

/// Where a `/name` command comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UserCommandKind {
    /// A custom command file (`.lathe/commands/*.md`, `.claude/commands/*.md`, user-level folders).
    Command,
    /// A skill (`SKILL.md`); `/<skill-name> args` runs its instructions.
    Skill,
}

/// One `/name` command the session expands (sending `/name args` as user input runs it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserCommand {
    /// The name typed after `/` (`greet`, `frontend:lint`, a skill's name).
    pub name: String,
    /// One line: what it does.
    pub description: String,
    /// What the arguments are (`[file] [message]`), from the command's `argument-hint`.
    pub argument_hint: Option<String>,
    /// Command file or skill.
    pub kind: UserCommandKind,
}
