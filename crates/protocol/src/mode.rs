//! The permission mode of a session (FEATURES.md §D), the one spelling every crate and front end
//! uses. Claude Code's names (`acceptEdits`, `bypassPermissions`, `dontAsk`) are its settings' and
//! hook payloads' (<https://docs.anthropic.com/en/docs/claude-code/iam#permission-modes>).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The permission mode of a session. Serialised in Lathe's flag spelling (`accept-edits`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PermissionMode {
    /// Ask before edits and anything that is not read-only.
    #[default]
    Default,
    /// File edits run without asking; commands still ask.
    AcceptEdits,
    /// Read-only: only read-only tools and commands run, and the plan file may be written.
    Plan,
    /// Deny anything that would ask.
    DontAsk,
    /// Run everything without asking (`--yolo`).
    Bypass,
    /// A reviewer model approves or blocks what would ask; read-only calls and edits inside the
    /// workspace run without review. Set only by the user (flags, user settings), never by a
    /// project's files.
    Auto,
}

impl PermissionMode {
    /// Every mode, in the order help texts list them.
    pub const ALL: [PermissionMode; 6] = [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Plan,
        PermissionMode::Auto,
        PermissionMode::DontAsk,
        PermissionMode::Bypass,
    ];

    /// The flag spelling: `default`, `accept-edits`, `plan`, `auto`, `dont-ask`, `bypass`.
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "accept-edits",
            PermissionMode::Plan => "plan",
            PermissionMode::DontAsk => "dont-ask",
            PermissionMode::Bypass => "bypass",
            PermissionMode::Auto => "auto",
        }
    }

    /// Claude Code's spelling, as hook payloads carry it: `default`, `acceptEdits`, `plan`,
    /// `dontAsk`, `bypassPermissions`, `auto`.
    pub fn claude_name(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "acceptEdits",
            PermissionMode::Plan => "plan",
            PermissionMode::DontAsk => "dontAsk",
            PermissionMode::Bypass => "bypassPermissions",
            PermissionMode::Auto => "auto",
        }
    }
}

impl fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An unknown permission mode name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown permission mode `{0}` (expected default, accept-edits, plan, auto, dont-ask or bypass)")]
pub struct UnknownMode(pub String);

impl FromStr for PermissionMode {
    type Err = UnknownMode;

    /// Accepts Lathe's kebab-case names and Claude Code's camelCase ones (`acceptEdits`,
    /// `bypassPermissions`, `dontAsk`).
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name {
            "default" => Ok(PermissionMode::Default),
            "accept-edits" | "acceptEdits" => Ok(PermissionMode::AcceptEdits),
            "plan" => Ok(PermissionMode::Plan),
            "dont-ask" | "dontAsk" => Ok(PermissionMode::DontAsk),
            "bypass" | "bypassPermissions" | "yolo" => Ok(PermissionMode::Bypass),
            "auto" => Ok(PermissionMode::Auto),
            other => Err(UnknownMode(other.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_from_both_spellings() {
        assert_eq!("acceptEdits".parse::<PermissionMode>(), Ok(PermissionMode::AcceptEdits));
        assert_eq!("bypass".parse::<PermissionMode>(), Ok(PermissionMode::Bypass));
        assert!("sometimes".parse::<PermissionMode>().is_err());
        for mode in PermissionMode::ALL {
            assert_eq!(mode.as_str().parse::<PermissionMode>(), Ok(mode));
            assert_eq!(mode.claude_name().parse::<PermissionMode>(), Ok(mode));
            let json = serde_json::to_string(&mode).unwrap_or_default();
            assert_eq!(json, format!("\"{mode}\""));
        }
    }
}
