//! The run report: what one run did, derived from the ledger alone, so every front end shows the
//! same thing — the files the file tools changed (with line counts), the `shell` commands run with
//! their exit codes, the goal checks, and the claims of the final answer that nothing in the run
//! backs ([`Claim`]).
//!
//! [`RunReport::from_ledger`] walks the run's items once, in order:
//! 1. a successful file change ([`Receipt::change`]) is listed, counts summed per path, and makes
//!    every test run before it stale;
//! 2. a `shell` call that ran is listed with its exit status, marked as a test when
//!    [`is_test_command`] says so (a test run, or a build, is evidence for later claims);
//! 3. a [`Meta::GoalCheck`] is listed as a check and always counts as a test run;
//! 4. then the final answer's sentences are judged against what the walk left: the last test run
//!    after the last change, the last build or test, the files changed ([`claims`]).
//!
//! Not covered: files changed by `shell` commands (Lathe does not know them), and what a
//! command's output says (a test piped into `tail` reports `tail`'s exit status).
//!
//! [`Receipt::change`]: crate::Receipt::change

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::event::StopReason;
use crate::ledger::{LedgerItem, Meta, ToolCall, ToolResult, ToolStatus, UserOrigin};

mod claims;
mod commands;
mod phrases;

pub use commands::is_test_command;

/// What one run did (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RunReport {
    /// Files changed by the file tools, in the order first changed.
    #[serde(default)]
    pub files: Vec<FileChanged>,
    /// `shell` commands that ran, in order.
    #[serde(default)]
    pub commands: Vec<CommandRun>,
    /// Goal checks Lathe ran, in order.
    #[serde(default)]
    pub checks: Vec<CheckRun>,
    /// Claims of the final answer the run does not back, in the answer's order.
    #[serde(default)]
    pub claims: Vec<Claim>,
}

/// One file changed in the run.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FileChanged {
    /// The file, relative to the workspace when inside it.
    pub path: String,
    /// Lines added, summed over the run's changes of it.
    pub added: u32,
    /// Lines removed, summed likewise.
    pub removed: u32,
}

/// One `shell` command that ran.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CommandRun {
    /// The command line, as the model wrote it.
    pub command: String,
    /// Its exit status; `None` when it was interrupted.
    pub exit_code: Option<i32>,
    /// Whether it runs tests ([`is_test_command`]).
    pub test: bool,
}

/// One goal check Lathe ran after a turn.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CheckRun {
    /// The check's command line.
    pub command: String,
    /// Its exit status; `None` when it was killed or could not run.
    pub exit_code: Option<i32>,
}

/// A sentence of the final answer that claims what the run does not show.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Claim {
    /// The whole sentence, as the answer has it.
    pub sentence: String,
    /// Why it lacks evidence: `no test ran after the last change to src/x.py`, `the last test
    /// run (`pytest -q`) exited 1`, `app.py was not changed in this run`.
    pub reason: String,
}

impl RunReport {
    /// The report of the run whose items start at index `from` of `items` (the whole ledger of a
    /// session; a continued session's run reports only on its own part).
    pub fn from_ledger(items: &[LedgerItem], from: usize) -> RunReport {
        let items = items.get(from..).unwrap_or_default();
        let mut report = RunReport::default();
        let mut evidence = Evidence::default();
        let mut calls: HashMap<&str, &ToolCall> = HashMap::new();
        for item in items {
            match item {
                LedgerItem::Assistant(message) => {
                    calls.extend(message.tool_calls().map(|call| (call.id.as_str(), call)));
                }
                LedgerItem::ToolResult(result) => {
                    report.tool_result(result, calls.get(result.call_id.as_str()).copied(), &mut evidence)
                }
                LedgerItem::Meta(Meta::GoalCheck { command, exit_code, timed_out, .. }) => {
                    report.checks.push(CheckRun { command: command.clone(), exit_code: *exit_code });
                    evidence.ran(Run {
                        command: command.clone(),
                        exit_code: *exit_code,
                        timed_out: *timed_out,
                        kind: RunKind::Check,
                    });
                }
                LedgerItem::User(_) | LedgerItem::Compaction(_) | LedgerItem::Meta(_) => {}
            }
        }
        report.claims = claims::find(&final_answer(items), &evidence);
        report
    }

    /// Whether there is nothing to report: no file changed, no command or check ran, no claim.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.commands.is_empty() && self.checks.is_empty() && self.claims.is_empty()
    }

    fn tool_result(&mut self, result: &ToolResult, call: Option<&ToolCall>, evidence: &mut Evidence) {
        let Some(receipt) = &result.receipt else { return };
        let succeeded = result.status == ToolStatus::Completed && !result.is_error;
        if let (Some(change), true) = (&receipt.change, succeeded) {
            match self.files.iter_mut().find(|file| file.path == change.path) {
                Some(file) => {
                    file.added = file.added.saturating_add(change.added);
                    file.removed = file.removed.saturating_add(change.removed);
                }
                None => self.files.push(FileChanged {
                    path: change.path.clone(),
                    added: change.added,
                    removed: change.removed,
                }),
            }
            evidence.changed(&change.path);
        }
        // Denied and failed calls never ran; an interrupted one ran but did not finish.
        let ran = matches!(result.status, ToolStatus::Completed | ToolStatus::Interrupted);
        if receipt.tool != "shell" || !ran {
            return;
        }
        let command = call
            .and_then(|call| call.arguments.get("command"))
            .and_then(|command| command.as_str())
            .map_or_else(|| receipt.summary.clone(), str::to_string);
        let test = is_test_command(&command);
        let exit_code = if result.status == ToolStatus::Completed { receipt.exit_code } else { None };
        evidence.commands.push(command.clone());
        let kind = if test {
            Some(RunKind::Test)
        } else {
            commands::is_build_command(&command).then_some(RunKind::Build)
        };
        if let Some(kind) = kind {
            evidence.ran(Run { command: command.clone(), exit_code, timed_out: false, kind });
        }
        self.commands.push(CommandRun { command, exit_code, test });
    }
}

/// The final answer: the last assistant message's text, preceded by the parts of it that were cut
/// by the output-token limit and continued (an injected message between them).
fn final_answer(items: &[LedgerItem]) -> String {
    let Some(last) = items.iter().rposition(|item| matches!(item, LedgerItem::Assistant(_))) else {
        return String::new();
    };
    let mut parts = Vec::new();
    let mut at = last;
    while let LedgerItem::Assistant(message) = &items[at] {
        parts.push(message.text());
        let continued = at >= 2
            && matches!(&items[at - 1], LedgerItem::User(user) if user.origin == UserOrigin::Injected)
            && matches!(&items[at - 2], LedgerItem::Assistant(cut)
                if cut.stop == StopReason::MaxTokens && cut.tool_calls().next().is_none());
        if !continued {
            break;
        }
        at -= 2;
    }
    parts.reverse();
    parts.concat()
}

/// What a command or check that counts as evidence was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RunKind {
    /// A test command.
    Test,
    /// A goal check (counts as a test).
    Check,
    /// A build command (evidence for "it builds" only).
    Build,
}

/// A test, check or build that ran.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Run {
    command: String,
    exit_code: Option<i32>,
    timed_out: bool,
    kind: RunKind,
}

impl Run {
    fn passed(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out
    }

    /// Why it does not back a claim: `the last test run (`pytest`) exited 1`.
    fn failure(&self) -> String {
        let what = match self.kind {
            RunKind::Test => "the last test run",
            RunKind::Check => "the last goal check",
            RunKind::Build => "the last build",
        };
        let command = shorten(&self.command, 80);
        match (self.timed_out, self.exit_code) {
            (true, _) => format!("{what} (`{command}`) timed out"),
            (false, Some(code)) => format!("{what} (`{command}`) exited {code}"),
            (false, None) => format!("{what} (`{command}`) did not finish"),
        }
    }
}

/// What the walk over a run leaves for judging claims.
#[derive(Debug, Default)]
struct Evidence {
    /// The path of the last file change.
    last_change: Option<String>,
    /// The last test or check after the last change.
    last_test: Option<Run>,
    /// The last build, test or check after the last change.
    last_build: Option<Run>,
    /// Every path changed.
    changed: Vec<String>,
    /// Every `shell` command line that ran (a file named in one may have been changed by it).
    commands: Vec<String>,
}

impl Evidence {
    fn changed(&mut self, path: &str) {
        self.last_change = Some(path.to_string());
        self.last_test = None;
        self.last_build = None;
        if !self.changed.iter().any(|known| known == path) {
            self.changed.push(path.to_string());
        }
    }

    fn ran(&mut self, run: Run) {
        if run.kind != RunKind::Build {
            self.last_test = Some(run.clone());
        }
        self.last_build = Some(run);
    }
}

/// `text` on one line, cut to `max` characters with an ellipsis.
fn shorten(text: &str, max: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= max {
        return line;
    }
    let mut short: String = line.chars().take(max).collect();
    short.push('…');
    short
}

#[cfg(test)]
#[path = "report_tests.rs"]
mod tests;
