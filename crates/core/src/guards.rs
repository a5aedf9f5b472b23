//! Guards on one run's tool calls (FEATURES.md §B), checked before each call runs so a model that
//! loops cannot do damage at scale:
//!
//! - **Calls per response:** at most `max_calls_per_response` calls of one response run (0 =
//!   unlimited); each call past the cap is answered, not run, with a result telling the model to
//!   wait for the results of the calls that ran.
//! - **Repeated calls:** the same tool with the same arguments (the JSON text) runs at most
//!   [`REPEATS_ALLOWED`] times in a run, whatever the outcomes; from the next occurrence on it is
//!   refused with a result saying its result is already above. A *different* mutating call
//!   ([`Effect::Mutating`](lathe_policy::Effect): not a read, not a fetch) that succeeds resets
//!   the count of every other call, so `cargo test`, edit, `cargo test`, edit, `cargo test` is
//!   fine, while
//!   `echo Hello > greet.py` sent again and again is refused from the third time.
//! - **Stop:** [`REFUSAL_LIMIT`] refused repeats in a run end it as no progress
//!   ([`CallGuard::stalled`]); the calls after that point are answered, not run.
//!
//! - **Kept files:** with verify-before-claiming on, `edit_file` and `write_file` calls on a file the
//!   prompt says not to change are refused ([`crate::kept`]).
//!
//! Every call still gets exactly one result: a refused call's result has status `Failed`.

use std::collections::HashMap;
use std::path::PathBuf;

use lathe_protocol::{ToolCall, ToolResult, ToolStatus};

use crate::kept::KeptFiles;

/// Calls per response run when neither the user nor the provider says otherwise.
pub const DEFAULT_MAX_CALLS_PER_RESPONSE: u32 = 16;

/// Times the same call (tool and arguments) runs in a run before it is refused.
pub const REPEATS_ALLOWED: u32 = 2;

/// Refused repeats that end the run.
pub const REFUSAL_LIMIT: u32 = 3;

/// Longest excerpt of a call's arguments quoted in a message, in characters.
const MAX_ARGUMENTS_SHOWN: usize = 200;

/// Why a call was answered instead of run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The receipt's decision (`not run: …`), for the user and the session file.
    pub decision: &'static str,
    /// The result text the model reads.
    pub message: String,
}

/// The guards' state over one user run.
#[derive(Debug, Default)]
pub struct CallGuard {
    /// Calls of one response that run; 0 = unlimited.
    max_per_response: u32,
    /// Occurrences of each call (tool name, arguments JSON) since the last reset.
    counts: HashMap<(String, String), u32>,
    /// Repeats refused so far in this run.
    refusals: u32,
    /// The last refused call, as `name arguments`.
    last_refused: Option<String>,
    /// Files the prompt says not to change, and the workspace their paths are relative to.
    kept: Option<(KeptFiles, PathBuf)>,
}

impl CallGuard {
    /// A guard for one run that lets `max_per_response` calls of a response run (0 = unlimited).
    pub fn new(max_per_response: u32) -> CallGuard {
        CallGuard { max_per_response, ..CallGuard::default() }
    }

    /// Refuses `edit_file` and `write_file` calls on the files of `kept` (paths relative to
    /// `workspace`); nothing when it holds none.
    pub(crate) fn keeping(mut self, kept: KeptFiles, workspace: PathBuf) -> CallGuard {
        self.kept = (!kept.paths.is_empty()).then_some((kept, workspace));
        self
    }

    /// Decides, before it runs, whether the call at `index` (0-based, model order) of a response
    /// of `total` calls may run, and counts it. `None` = run it.
    pub fn check(&mut self, call: &ToolCall, index: usize, total: usize) -> Option<Refusal> {
        if let Some(last) = self.stalled_call() {
            return Some(Refusal {
                decision: "not run: the run stopped (repeated calls)",
                message: format!(
                    "error: not run: Lathe stopped this run because {REFUSAL_LIMIT} calls repeated a call that \
                     had already been made twice (last: {last})."
                ),
            });
        }
        if self.max_per_response > 0 && index >= self.max_per_response as usize {
            return Some(Refusal {
                decision: "not run: too many calls in one response",
                message: format!(
                    "error: not run: your response made {total} tool calls; Lathe runs at most {} per response. \
                     Wait for the results of the calls that ran, then send the next calls.",
                    self.max_per_response
                ),
            });
        }
        let count = self.counts.entry(key(call)).or_default();
        *count += 1;
        if *count <= REPEATS_ALLOWED {
            return self.kept_refusal(call);
        }
        self.refusals += 1;
        let shown = describe(call);
        self.last_refused = Some(shown.clone());
        Some(Refusal {
            decision: "not run: repeated call",
            message: format!(
                "error: not run: this exact call ({shown}) was already made twice in this run and its result is \
                 above. Repeating it will not change anything: do something different."
            ),
        })
    }

    /// The refusal of a change to a kept file.
    fn kept_refusal(&self, call: &ToolCall) -> Option<Refusal> {
        let (kept, workspace) = self.kept.as_ref()?;
        if !matches!(call.name.as_str(), "edit_file" | "write_file") {
            return None;
        }
        let file = kept.holds(call.arguments.get("path")?.as_str()?, workspace)?;
        let instead = kept
            .instead
            .as_ref()
            .map(|other| format!(" The change belongs in {other}: read it with read_file, then edit it."))
            .unwrap_or_default();
        Some(Refusal {
            decision: "not run: the task says not to change this file",
            message: format!("error: not run: the task says not to change {file}.{instead}"),
        })
    }

    /// Records the result of a call that was checked: a successful `mutating` call resets the
    /// count of every other call.
    pub fn ran(&mut self, call: &ToolCall, mutating: bool, result: &ToolResult) {
        if mutating && !result.is_error && result.status == ToolStatus::Completed {
            let own = key(call);
            self.counts.retain(|other, _| *other == own);
        }
    }

    /// `Some(reason)`, naming the call, once [`REFUSAL_LIMIT`] repeats were refused.
    pub fn stalled(&self) -> Option<String> {
        self.stalled_call().map(|last| {
            format!(
                "{} calls repeated a call that had already been made twice in this run (last: {last})",
                self.refusals
            )
        })
    }

    fn stalled_call(&self) -> Option<&str> {
        (self.refusals >= REFUSAL_LIMIT).then_some(self.last_refused.as_deref()).flatten()
    }
}

/// What identifies a call: its tool and its arguments' JSON text (serde_json keeps key order, so
/// identical calls serialise identically).
fn key(call: &ToolCall) -> (String, String) {
    (call.name.clone(), call.arguments.to_string())
}

/// `name arguments`, the arguments cut to [`MAX_ARGUMENTS_SHOWN`] characters.
fn describe(call: &ToolCall) -> String {
    let arguments = call.arguments.to_string();
    let mut shown: String = arguments.chars().take(MAX_ARGUMENTS_SHOWN).collect();
    if shown.len() < arguments.len() {
        shown.push('…');
    }
    format!("{} {shown}", call.name)
}

#[cfg(test)]
#[path = "guards_tests.rs"]
mod tests;
