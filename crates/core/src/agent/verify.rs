//! Verify before claiming (the embedded local model by default, `verify_changes` in config): a
//! run that changed files may end only after a check ran since the last change and passed.
//!
//! The check is the command the user's prompt names (`python3 app.py`, `pytest`, in backticks or
//! not), else one Lathe derives from what the prompt states (a call and its expected result, a
//! function to add, a rename: [`super::stated`]), else one it derives from the changed files:
//! `python3 FILE` for a Python file with a `__main__` block, `python3 -m py_compile FILE` for
//! another. A `shell` command after the last
//! change counts when it runs that command (or, with a derived check, names a changed file or runs
//! tests). When the model answers without one, or after one that failed, the answer is not taken:
//! Lathe tells the model what to run or what failed, and the run goes on (within its turn limit).
//! An answer whose claims the run does not back (the run report's claims: "fixed app.py" when
//! app.py did not change, "tests pass" when none ran) is sent back the same way. After
//! [`MAX_NUDGES`] such answers the run ends not-success ([`StopCause::NoProgress`], exit 4) and its
//! final text is the failing check's output (or the unbacked claims), never the model's claim.

use std::collections::HashMap;
use std::path::Path;

use lathe_protocol::{LedgerItem, StopCause, ToolCall, ToolStatus, UserMessage, UserOrigin};

use super::Agent;

/// Answers without a passing check the model gets told about before the run ends unverified.
pub const MAX_NUDGES: u32 = 3;

/// Characters of a failed check's output quoted back (its tail).
const OUTPUT_CHARS: usize = 1500;

/// Where the run's verification stands.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum State {
    /// No file changed in the run: nothing to verify.
    Unchanged,
    /// A check ran after the last change and passed.
    Passed,
    /// Files changed and no check ran since.
    NotRun {
        /// The changed files (workspace-relative when inside it).
        files: Vec<String>,
    },
    /// The last check after the last change failed.
    Failed {
        /// Its command line.
        command: String,
        /// Its exit status (`None`: interrupted).
        exit_code: Option<i32>,
        /// The tail of its output.
        output: String,
    },
}

/// The command the prompt names to run, if any: a backticked span, else a bare `python3 x.py`,
/// `pytest …`, `sh x.sh`, `bash x.sh`, `node x.js`, `npm test`, `cargo test`, `make …`.
pub(crate) fn named_command(prompt: &str) -> Option<String> {
    const RUNNERS: [&str; 10] =
        ["python3 ", "python ", "pytest", "sh ", "bash ", "node ", "npm ", "cargo ", "make", "./"];
    let is_runner = |text: &str| RUNNERS.iter().any(|runner| text.starts_with(runner));
    let mut spans = prompt.split('`').skip(1).step_by(2);
    if let Some(span) = spans.find(|span| is_runner(span.trim())) {
        return Some(span.trim().to_string());
    }
    let words: Vec<&str> = prompt.split_whitespace().collect();
    for (at, word) in words.iter().enumerate() {
        let word = word.trim_matches(['(', ')', '"', '\'', ',', '.', ';', ':']);
        if matches!(word, "python3" | "python" | "sh" | "bash" | "node")
            && let Some(file) = words.get(at + 1)
        {
            let file = file.trim_end_matches(['.', ',', ';', ':', ')', '"', '\'']);
            if file.contains('.') {
                return Some(format!("{word} {file}"));
            }
        }
        if word == "pytest" {
            return Some("pytest".into());
        }
    }
    None
}

/// Words of a prompt that asks for a change (when it is no question).
const CHANGE_WORDS: [&str; 17] = [
    "fix",
    "add",
    "rename",
    "create",
    "change",
    "make",
    "remove",
    "delete",
    "update",
    "write",
    "replace",
    "implement",
    "refactor",
    "move",
    "edit",
    "correct",
    "insert",
];

/// Whether `prompt` asks for a change: it is no question (does not end with `?`) and one of its
/// words is a change verb ([`CHANGE_WORDS`]).
pub(crate) fn asks_for_a_change(prompt: &str) -> bool {
    !prompt.trim_end().ends_with('?')
        && prompt
            .split(|c: char| !c.is_alphanumeric())
            .any(|word| CHANGE_WORDS.iter().any(|verb| verb.eq_ignore_ascii_case(word)))
}

/// The check a run must pass after changing files, when there is one before any file changed: the
/// command the prompt names, else the check Lathe derives from what it states
/// ([`super::stated::stated_check`]).
pub(crate) fn required_check(prompt: &str, workspace: &Path) -> Option<String> {
    named_command(prompt).or_else(|| super::stated::stated_check(prompt, workspace))
}

/// The check Lathe derives for `files` in `workspace` when the prompt names none.
pub(crate) fn derived_check(files: &[String], workspace: &Path) -> Option<String> {
    let python = files.iter().find(|file| file.ends_with(".py"))?;
    let text = std::fs::read_to_string(workspace.join(python)).unwrap_or_default();
    let main = text.contains("__name__ == \"__main__\"") || text.contains("__name__ == '__main__'");
    Some(if main { format!("python3 {python}") } else { format!("python3 -m py_compile {python}") })
}

/// The first of [`crate::prompt::LOCAL_EXAMPLE_WORDS`] in `answer` (any case) that `prompt` does
/// not have: the answer copies the local prompt's worked example.
pub(crate) fn copied_example(answer: &str, prompt: &str) -> Option<&'static str> {
    let (answer, prompt) = (answer.to_lowercase(), prompt.to_lowercase());
    crate::prompt::LOCAL_EXAMPLE_WORDS
        .into_iter()
        .find(|word| answer.contains(word) && !prompt.contains(word))
}

/// The verification state of the run's items (`items` from its user prompt on); `named` is the
/// prompt's command, if any.
pub(crate) fn state(items: &[LedgerItem], named: Option<&str>) -> State {
    let mut calls: HashMap<&str, &ToolCall> = HashMap::new();
    let mut files: Vec<String> = Vec::new();
    let mut last: Option<State> = None;
    for item in items {
        match item {
            LedgerItem::Assistant(message) => calls.extend(message.tool_calls().map(|c| (c.id.as_str(), c))),
            LedgerItem::ToolResult(result) => {
                let Some(receipt) = &result.receipt else { continue };
                let ok = result.status == ToolStatus::Completed && !result.is_error;
                if let (Some(change), true) = (&receipt.change, ok) {
                    if !files.contains(&change.path) {
                        files.push(change.path.clone());
                    }
                    last = None;
                    continue;
                }
                if receipt.tool != "shell" || files.is_empty() || result.status != ToolStatus::Completed {
                    continue;
                }
                let command = calls
                    .get(result.call_id.as_str())
                    .and_then(|call| call.arguments.get("command"))
                    .and_then(|command| command.as_str())
                    .unwrap_or_default();
                let counts = match named {
                    Some(named) => {
                        command.contains(named)
                            || super::stated::code_of(named).is_some_and(|code| command.contains(code))
                    }
                    None => {
                        lathe_protocol::report::is_test_command(command)
                            || files.iter().any(|file| {
                                let name =
                                    Path::new(file).file_name().and_then(|n| n.to_str()).unwrap_or(file);
                                command.contains(name)
                            })
                    }
                };
                if !counts {
                    continue;
                }
                let output = result.text_content();
                let exit_code = receipt.exit_code;
                last = Some(if exit_code == Some(0) && !result.is_error {
                    State::Passed
                } else {
                    let skip = output.chars().count().saturating_sub(OUTPUT_CHARS);
                    State::Failed {
                        command: command.to_string(),
                        exit_code,
                        output: output.chars().skip(skip).collect(),
                    }
                });
            }
            LedgerItem::User(_) | LedgerItem::Compaction(_) | LedgerItem::Meta(_) => {}
        }
    }
    match (files.is_empty(), last) {
        (true, _) => State::Unchanged,
        (false, Some(state)) => state,
        (false, None) => State::NotRun { files },
    }
}

impl Agent {
    /// At the end of a response without calls: `None` when the run may end (verified, nothing
    /// changed, or verification off), `Some(None)` when the model was told to check and the run
    /// goes on, `Some(Some(cause))` when it ends unverified.
    pub(super) fn verify_before_answer(&mut self, nudges: &mut u32) -> Option<Option<StopCause>> {
        if !self.verify_changes {
            return None;
        }
        let items = self.transcript.items();
        let (start, prompt) = run_prompt(items);
        let answer = match items[start..].iter().rev().find(|item| matches!(item, LedgerItem::Assistant(_))) {
            Some(LedgerItem::Assistant(message)) => message.text(),
            _ => String::new(),
        };
        if let Some(word) = copied_example(&answer, &prompt) {
            let detail = format!("the answer copies the system prompt's example (\"{word}\"), not this run");
            let message = "[check] Your answer repeats the system prompt's example, which is about another \
                 project. Answer about this task: what you did in this project, or what you found."
                .to_string();
            return self.nudge_or_stop(nudges, message, detail);
        }
        let named = required_check(&prompt, &self.ctx.workspace);
        let state = state(&items[start..], named.as_deref());
        let unchanged = state == State::Unchanged && asks_for_a_change(&prompt);
        // After a check that passed, that check is the evidence for "fixed": only a file the answer
        // says it changed and did not change still counts against it.
        let mut claims = lathe_protocol::RunReport::from_ledger(items, start).claims;
        if state == State::Passed {
            claims.retain(|claim| claim.reason.ends_with("was not changed in this run"));
        }
        let message = match (&state, claims.first()) {
            (State::Unchanged, None) if unchanged => format!(
                "[check] The task asks for a change, but no file changed in this run. Make it with edit_file or \
                 write_file (read the file first), then check it; or answer that you could not.{}",
                super::stated::adding_hint(&prompt, &self.ctx.workspace).unwrap_or_default()
            ),
            (State::Unchanged | State::Passed, None) => return None,
            (State::Unchanged | State::Passed, Some(claim)) => format!(
                "[check] Your answer says \"{}\", but {}. Do what it says (and check it), or answer with what \
                 you actually did.",
                claim.sentence, claim.reason
            ),
            (State::NotRun { files }, _) => {
                let check = named.clone().or_else(|| derived_check(files, &self.ctx.workspace))?;
                format!(
                    "[check] You changed {} but have not run anything since. Run `{check}` now and read its \
                     output; answer only once it passes.",
                    files.join(", ")
                )
            }
            (State::Failed { command, exit_code, output }, _) => format!(
                "[check] `{command}` failed after your change ({}):\n{}{}\nFix the code, run it again, and \
                 answer only once it passes.",
                exit_code.map_or("no exit status".to_string(), |code| format!("exit {code}")),
                output.trim_end(),
                super::stated::adding_hint(&prompt, &self.ctx.workspace)
                    .or_else(|| super::stated::renaming_hint(&prompt, &self.ctx.workspace))
                    .unwrap_or_default()
            ),
        };
        let detail = detail(&state, &claims);
        self.nudge_or_stop(nudges, message, detail)
    }

    /// The final text of a run that stopped without a passing check after its change (the loop
    /// guards, the turn limit, a budget: `cause`), instead of the model's last words: what is not
    /// verified, with the failing check's output. `None` when verification is off, the run
    /// succeeded, or nothing is unverified.
    pub(super) fn unverified_at_stop(&self, cause: &StopCause) -> Option<String> {
        if !self.verify_changes
            || !matches!(
                cause,
                StopCause::NoProgress { .. } | StopCause::MaxTurns { .. } | StopCause::Budget { .. }
            )
        {
            return None;
        }
        let items = self.transcript.items();
        let (start, prompt) = run_prompt(items);
        let state = state(&items[start..], required_check(&prompt, &self.ctx.workspace).as_deref());
        match state {
            State::Passed => None,
            State::Unchanged if !asks_for_a_change(&prompt) => None,
            _ => Some(detail(&state, &[])),
        }
    }

    /// Tells the model `message` and goes on, or, after [`MAX_NUDGES`], ends the run unverified with
    /// `detail` as its final text.
    fn nudge_or_stop(
        &mut self,
        nudges: &mut u32,
        message: String,
        detail: String,
    ) -> Option<Option<StopCause>> {
        if *nudges >= MAX_NUDGES {
            self.unverified = Some(detail.clone());
            return Some(Some(StopCause::NoProgress { detail }));
        }
        *nudges += 1;
        self.append(LedgerItem::User(UserMessage::injected(message)));
        Some(None)
    }
}

/// What a run that ends in `state` without a passing check did not verify: its final text.
fn detail(state: &State, claims: &[lathe_protocol::report::Claim]) -> String {
    match state {
        State::Failed { command, exit_code, output } => format!(
            "the change is not verified: `{command}` failed ({})\n{}",
            exit_code.map_or("no exit status".to_string(), |code| format!("exit {code}")),
            output.trim_end()
        ),
        State::NotRun { .. } => "the change is not verified: no check ran after it".to_string(),
        State::Unchanged if claims.is_empty() => {
            "no change made: the task asks for a change and no file changed in this run".to_string()
        }
        State::Unchanged | State::Passed => format!(
            "the run does not back its answer: {}",
            claims.iter().map(|claim| claim.reason.as_str()).collect::<Vec<_>>().join("; ")
        ),
    }
}

/// Where the run's user prompt is in `items` (0 when none) and its text.
impl Agent {
    /// The files the running user turn's prompt says not to change ([`crate::kept`]), with
    /// verify-before-claiming on; none otherwise.
    pub(super) fn kept_files(&self) -> crate::kept::KeptFiles {
        if !self.verify_changes {
            return crate::kept::KeptFiles::default();
        }
        crate::kept::KeptFiles::from_prompt(&run_prompt(self.transcript.items()).1)
    }
}

fn run_prompt(items: &[LedgerItem]) -> (usize, String) {
    let start = items
        .iter()
        .rposition(|item| matches!(item, LedgerItem::User(m) if m.origin == UserOrigin::User))
        .unwrap_or(0);
    let prompt = match items.get(start) {
        Some(LedgerItem::User(message)) => message.text_content(),
        _ => String::new(),
    };
    (start, prompt)
}

#[cfg(test)]
#[path = "verify_tests.rs"]
mod tests;
