//! The run report ([`RunReport`]) as short lines of text: print mode's text format writes them to
//! stderr after the answer (`lathe: report: …`), the terminal UI's `/report` shows them as a
//! notice. One line for the files changed, one for the commands, one for the checks, one per claim
//! without evidence; a part with nothing in it has no line, so an empty report has none.

use lathe_protocol::{CheckRun, CommandRun, RunReport};

/// Files or commands listed on a line at most; the rest are counted.
const MAX_LISTED: usize = 6;

/// Characters of a command line shown.
const MAX_COMMAND_CHARS: usize = 60;

/// Characters of a claimed sentence shown.
const MAX_SENTENCE_CHARS: usize = 200;

/// The report's lines (none when it is empty).
pub fn lines(report: &RunReport) -> Vec<String> {
    let mut lines = Vec::new();
    if !report.files.is_empty() {
        let added: u32 = report.files.iter().map(|file| file.added).sum();
        let removed: u32 = report.files.iter().map(|file| file.removed).sum();
        let listed: Vec<String> = report
            .files
            .iter()
            .take(MAX_LISTED)
            .map(|file| format!("{} (+{} −{})", file.path, file.added, file.removed))
            .collect();
        let more = report.files.len().saturating_sub(MAX_LISTED);
        let more = if more > 0 { format!(", and {more} more") } else { String::new() };
        lines.push(format!(
            "{} changed (+{added} −{removed}): {}{more}",
            counted(report.files.len(), "file"),
            listed.join(", ")
        ));
    }
    if !report.commands.is_empty() {
        lines.push(runs(&report.commands, "command", |run: &CommandRun| (&run.command, run.exit_code)));
    }
    if !report.checks.is_empty() {
        lines.push(runs(&report.checks, "check", |run: &CheckRun| (&run.command, run.exit_code)));
    }
    for claim in &report.claims {
        lines.push(format!(
            "claim without evidence: \"{}\" — {}",
            crate::print::cut(&claim.sentence, MAX_SENTENCE_CHARS),
            claim.reason
        ));
    }
    lines
}

/// `3 commands: `a` → exit 0, …`: the last [`MAX_LISTED`] runs, an ellipsis first when there
/// were more.
fn runs<T>(all: &[T], noun: &str, parts: impl Fn(&T) -> (&String, Option<i32>)) -> String {
    let skipped = all.len().saturating_sub(MAX_LISTED);
    let listed: Vec<String> = all[skipped..]
        .iter()
        .map(|run| {
            let (command, exit_code) = parts(run);
            let status =
                exit_code.map_or_else(|| "no exit status".to_string(), |code| format!("exit {code}"));
            format!("`{}` → {status}", crate::print::cut(command, MAX_COMMAND_CHARS))
        })
        .collect();
    let lead = if skipped > 0 { "…, " } else { "" };
    format!("{}: {lead}{}", counted(all.len(), noun), listed.join(", "))
}

/// `1 file`, `2 files`.
fn counted(count: usize, noun: &str) -> String {
    if count == 1 { format!("1 {noun}") } else { format!("{count} {noun}s") }
}

#[cfg(test)]
#[path = "report_tests.rs"]
mod tests;
