//! Where users keep skills, custom commands and sub-agent definitions, and which copy wins.
//!
//! Each kind (`skills`, `commands`, `agents`) is searched in four folders, in this order: the
//! project's `.lathe/<kind>` and `.claude/<kind>`, then the user's `~/.lathe/<kind>` (Lathe's home,
//! moved by `LATHE_HOME`) and `~/.claude/<kind>`. The first definition of a name wins, so the project
//! wins over the user; a later one with the same name is reported and skipped.

use std::path::{Path, PathBuf};

/// Whose definition it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// From the workspace's `.lathe/` or `.claude/`.
    Project,
    /// From the user's `~/.lathe/` or `~/.claude/`.
    User,
}

impl Scope {
    /// `project` or `user`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Project => "project",
            Scope::User => "user",
        }
    }
}

/// The folders holding definitions of `kind` (`skills`, `commands`, `agents`), in precedence order.
/// `lathe_home` is Lathe's home (`~/.lathe`); `~/.claude` comes from `$HOME`.
pub fn search_dirs(workspace: &Path, lathe_home: &Path, kind: &str) -> Vec<(PathBuf, Scope)> {
    let mut dirs = vec![
        (workspace.join(".lathe").join(kind), Scope::Project),
        (workspace.join(".claude").join(kind), Scope::Project),
        (lathe_home.join(kind), Scope::User),
    ];
    if let Some(home) = std::env::var_os("HOME").map(PathBuf::from).filter(|home| home.is_absolute()) {
        dirs.push((home.join(".claude").join(kind), Scope::User));
    }
    dirs
}

/// Whether `name` is usable as a skill, command or agent name: 1–64 characters, none of them
/// whitespace, `/`, `\` or a control character.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().count() <= 64
        && !name.chars().any(|ch| ch.is_whitespace() || ch.is_control() || ch == '/' || ch == '\\')
}
