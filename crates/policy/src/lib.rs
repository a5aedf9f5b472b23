//! Permission policy: decides, for every tool call, whether it may run (ARCHITECTURE.md §4.3).
//!
//! This crate owns the permission modes and the decision function; it does not execute anything and
//! does not talk to the user. Order of operations for one call (the loop calls [`decide`] after the
//! arguments validated and before the tool runs):
//!
//! 1. the call's [`Effect`] (declared by the tool; undeclared means [`Effect::Mutating`], fail closed);
//! 2. the [`PermissionMode`] → [`Decision::Allow`], [`Decision::Ask`] or [`Decision::Deny`];
//! 3. the front end resolves `Ask`: interactively by a prompt, headless as a denial unless a bypass
//!    mode was chosen ([`resolve_headless`]).
//!
//! Rules (`Bash(npm test *)`, `Edit(src/**)`), shell analysis and the OS sandbox come later and slot in
//! before step 2.

pub mod path;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

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

/// What kind of action a call is, for modes that treat file edits differently from commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionKind {
    /// Reading files or listing.
    Read,
    /// Writing or editing files in the workspace.
    Edit,
    /// Running a command.
    Execute,
    /// Fetching from the network.
    Fetch,
    /// Anything else (MCP tools, skills).
    Other,
}

/// The permission mode of a session (FEATURES.md §D).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PermissionMode {
    /// Ask before edits and anything that is not read-only.
    #[default]
    Default,
    /// File edits run without asking; commands still ask.
    AcceptEdits,
    /// Read-only: everything that is not read-only is denied.
    Plan,
    /// Deny anything that would ask.
    DontAsk,
    /// Run everything without asking (`--yolo`).
    Bypass,
}

impl PermissionMode {
    /// The flag spelling: `default`, `accept-edits`, `plan`, `dont-ask`, `bypass`.
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "accept-edits",
            PermissionMode::Plan => "plan",
            PermissionMode::DontAsk => "dont-ask",
            PermissionMode::Bypass => "bypass",
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
#[error("unknown permission mode `{0}` (expected default, accept-edits, plan, dont-ask or bypass)")]
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
            other => Err(UnknownMode(other.to_string())),
        }
    }
}

/// The policy's answer for one call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    /// Run it.
    Allow {
        /// Which mode or rule allowed it.
        reason: String,
    },
    /// A person must decide.
    Ask {
        /// What the call would do, for the prompt.
        reason: String,
    },
    /// Do not run it.
    Deny {
        /// Why, in words the model can act on.
        reason: String,
    },
}

/// Decides one call from its effect and kind under `mode`.
pub fn decide(mode: PermissionMode, effect: Effect, kind: ActionKind) -> Decision {
    let allow = |reason: &str| Decision::Allow { reason: reason.to_string() };
    if effect == Effect::ReadOnly {
        return allow("read-only");
    }
    let what = match kind {
        ActionKind::Edit => "edits files",
        ActionKind::Execute => "runs a command",
        ActionKind::Fetch => "uses the network",
        ActionKind::Read | ActionKind::Other => "is not read-only",
    };
    match mode {
        PermissionMode::Bypass => allow("mode bypass"),
        PermissionMode::AcceptEdits if kind == ActionKind::Edit => allow("mode accept-edits"),
        PermissionMode::Default | PermissionMode::AcceptEdits => {
            Decision::Ask { reason: format!("this call {what}") }
        }
        PermissionMode::Plan => Decision::Deny {
            reason: format!("plan mode is read-only and this call {what}; present a plan instead"),
        },
        PermissionMode::DontAsk => Decision::Deny {
            reason: format!("mode dont-ask denies calls that need approval, and this call {what}"),
        },
    }
}

/// Resolves an `Ask` when no person can answer (headless): a denial that tells the model why and the
/// user which mode would allow it (`accept-edits` helps only file edits).
pub fn resolve_headless(decision: Decision, kind: ActionKind) -> Decision {
    match decision {
        Decision::Ask { reason } => Decision::Deny {
            reason: format!(
                "permission denied: {reason}, which needs approval, and Lathe runs headless \
                 (the user can rerun with {} to allow it)",
                match kind {
                    ActionKind::Edit => "--permission-mode accept-edits or --yolo",
                    ActionKind::Read | ActionKind::Execute | ActionKind::Fetch | ActionKind::Other =>
                        "--yolo",
                }
            ),
        },
        other @ (Decision::Allow { .. } | Decision::Deny { .. }) => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_by_mode() {
        use ActionKind::*;
        use Effect::*;
        let table = [
            (PermissionMode::Default, ReadOnly, Read, "allow"),
            (PermissionMode::Default, Mutating, Edit, "ask"),
            (PermissionMode::Default, Mutating, Execute, "ask"),
            (PermissionMode::AcceptEdits, Mutating, Edit, "allow"),
            (PermissionMode::AcceptEdits, Mutating, Execute, "ask"),
            (PermissionMode::Plan, Mutating, Edit, "deny"),
            (PermissionMode::Plan, ReadOnly, Read, "allow"),
            (PermissionMode::DontAsk, Mutating, Execute, "deny"),
            (PermissionMode::Bypass, Mutating, Execute, "allow"),
            (PermissionMode::Bypass, Network, Fetch, "allow"),
        ];
        for (mode, effect, kind, expected) in table {
            let got = match decide(mode, effect, kind) {
                Decision::Allow { .. } => "allow",
                Decision::Ask { .. } => "ask",
                Decision::Deny { .. } => "deny",
            };
            assert_eq!(got, expected, "{mode} {effect:?} {kind:?}");
        }
    }

    #[test]
    fn headless_turns_ask_into_deny_with_a_hint() {
        let decision = resolve_headless(
            decide(PermissionMode::Default, Effect::Mutating, ActionKind::Edit),
            ActionKind::Edit,
        );
        match decision {
            Decision::Deny { reason } => assert!(reason.contains("accept-edits"), "{reason}"),
            other => panic!("expected deny, got {other:?}"),
        }
        let command = resolve_headless(
            decide(PermissionMode::AcceptEdits, Effect::Mutating, ActionKind::Execute),
            ActionKind::Execute,
        );
        match command {
            Decision::Deny { reason } => {
                assert!(reason.contains("--yolo") && !reason.contains("accept-edits"), "{reason}")
            }
            other => panic!("expected deny, got {other:?}"),
        }
    }

    #[test]
    fn modes_parse_from_both_spellings() {
        assert_eq!("acceptEdits".parse::<PermissionMode>(), Ok(PermissionMode::AcceptEdits));
        assert_eq!("bypass".parse::<PermissionMode>(), Ok(PermissionMode::Bypass));
        assert!("sometimes".parse::<PermissionMode>().is_err());
    }
}
