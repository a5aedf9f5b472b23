//! Replay cases: the `R<n>.json` format of `shared/replay/FORMAT.md` §1, loaded and checked.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::{MockError, read_text};

/// A replay case (FORMAT.md §1). Only `prompt` and `turns` drive the server; the other fields are kept for
/// harnesses that seed a workspace and check the oracles.
#[derive(Serialize, Deserialize, Clone, Debug, Default)]
pub struct ReplayCase {
    /// Case id, e.g. `R2`.
    pub id: String,
    /// Where the recording came from.
    #[serde(default)]
    pub source: serde_json::Value,
    /// The model that was recorded.
    #[serde(default)]
    pub recorded_model: Option<String>,
    /// The first user message (the task).
    pub prompt: String,
    /// Workspace-relative path → exact UTF-8 content.
    #[serde(default)]
    pub seed_files: BTreeMap<String, String>,
    /// Paths to chmod 755 after seeding.
    #[serde(default)]
    pub seed_executable: Vec<String>,
    /// Whether to `git init` and commit the seed.
    #[serde(default)]
    pub seed_git: bool,
    /// Environment for Lathe and its shell.
    #[serde(default)]
    pub harness_env: BTreeMap<String, String>,
    /// The model turns, in order.
    pub turns: Vec<ReplayTurn>,
    /// Oracles checked after the run.
    #[serde(default)]
    pub oracles: serde_json::Value,
    /// How the case was derived.
    #[serde(default)]
    pub notes: String,
}

/// One recorded model turn.
#[derive(Serialize, Deserialize, Clone, Debug, Default)]
pub struct ReplayTurn {
    /// A user-side message that precedes this turn (stop-hook feedback or a new user message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_injection: Option<String>,
    /// `stop_hook` or `user`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_injection_kind: Option<String>,
    /// Thinking text (Anthropic thinking block).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
    /// Assistant text (`""` = none).
    #[serde(default)]
    pub text: String,
    /// Tool calls, sent as parallel calls of one assistant message.
    #[serde(default)]
    pub calls: Vec<ReplayCall>,
    /// True only on the last turn, which has no calls.
    #[serde(default)]
    pub r#final: bool,
}

/// One recorded tool call.
#[derive(Serialize, Deserialize, Clone, Debug, Default)]
pub struct ReplayCall {
    /// Call id (`toolu_…` or `call_<24 hex>`), unique within the case.
    pub id: String,
    /// Lathe tool name.
    pub name: String,
    /// Lathe tool arguments.
    pub args: serde_json::Value,
    /// The recorded tool name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub orig_name: Option<String>,
    /// The recorded arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub orig_args: Option<serde_json::Value>,
    /// `ok`, `error` or `any`.
    #[serde(default = "any")]
    pub expect: String,
}

fn any() -> String {
    "any".to_string()
}

impl ReplayCase {
    /// Reads and checks a case file.
    ///
    /// # Errors
    /// [`MockError::Io`] if unreadable, [`MockError::Json`] if not a case, [`MockError::Invalid`] if it has no
    /// turns, a non-final turn after a final one, a final turn with calls, or duplicate call ids.
    pub fn load(path: &Path) -> Result<ReplayCase, MockError> {
        let text = read_text(path)?;
        ReplayCase::from_json(&text).map_err(|e| match e {
            MockError::Json { what, source, .. } => {
                MockError::Json { what, path: Some(path.to_path_buf()), source }
            }
            other => other,
        })
    }

    /// Parses and checks a case from JSON text.
    ///
    /// # Errors
    /// As [`ReplayCase::load`], without the I/O error.
    pub fn from_json(text: &str) -> Result<ReplayCase, MockError> {
        let case: ReplayCase = serde_json::from_str(text).map_err(|source| MockError::Json {
            what: "replay case",
            path: None,
            source,
        })?;
        let invalid = |detail: String| MockError::Invalid { what: "replay case", detail };
        if case.turns.is_empty() {
            return Err(invalid(format!("{}: no turns", case.id)));
        }
        let mut ids = std::collections::BTreeSet::new();
        for (i, t) in case.turns.iter().enumerate() {
            if t.r#final && i + 1 != case.turns.len() {
                return Err(invalid(format!("{}: turns[{i}] is final but not the last turn", case.id)));
            }
            if t.r#final && !t.calls.is_empty() {
                return Err(invalid(format!("{}: the final turn turns[{i}] has calls", case.id)));
            }
            for c in &t.calls {
                if !ids.insert(c.id.clone()) {
                    return Err(invalid(format!("{}: call id {} appears twice", case.id, c.id)));
                }
            }
        }
        Ok(case)
    }
}
