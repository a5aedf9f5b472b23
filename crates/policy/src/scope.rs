//! Scoped tool lists: the `tools:` of an agent definition and the `allowed-tools` of a skill or a
//! custom command, written as Claude Code writes them (`Read, Grep, Bash(git diff *)`).
//!
//! An entry without parentheses grants the whole tool. An entry with a specifier grants only the
//! calls its rule matches, with the same matching as a permission rule ([`crate::rules`]): a shell
//! scope is matched against *every* simple command of the command line (`git diff && touch x` is
//! outside `Bash(git diff *)`), with the wrappers in front (`sudo git diff` is outside it too), and a
//! command line the analysis cannot follow, one that writes a file through a redirection or defines
//! a fork bomb, is outside every shell scope. Path scopes match the paths the call touches, domain
//! scopes the host it fetches. The scope is checked before the permission decision and binds in
//! every permission mode, `bypass` included: it narrows what the list grants, it never widens what
//! the policy allows.

use std::fmt;
use std::path::Path;

use crate::Access;
use crate::rules::{Anchors, Rule, RuleError, RuleKind, Specifier};
use crate::shell;

/// What one tool of a scoped list may do.
#[derive(Debug, Clone, Default)]
pub struct ToolScope {
    /// Whether an unscoped entry grants the whole tool.
    whole: bool,
    /// The scoped entries (their rules), any of which grants a call.
    rules: Vec<Rule>,
}

/// Why a call is outside its scope: the call, and the entries that would have covered it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutsideScope {
    /// What of the call no entry covers (`` `touch PWNED` ``, `/etc/hosts`).
    pub what: String,
    /// The scoped entries, as written (`Bash(git diff *)`).
    pub entries: Vec<String>,
}

impl fmt::Display for OutsideScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let entries: Vec<String> = self.entries.iter().map(|entry| format!("`{entry}`")).collect();
        write!(f, "{} is outside the scope {}", self.what, entries.join(", "))
    }
}

impl ToolScope {
    /// Adds one entry of the list: `inner` is what stood inside the parentheses (`None` for a bare
    /// name, which grants the whole tool). `text` is the entry as written and `source` the file it
    /// is in; `anchors` resolve path specifiers as in a settings file of that place.
    ///
    /// # Errors
    /// [`RuleError`] when the specifier does not parse as a permission rule's would.
    pub fn add(
        &mut self,
        text: &str,
        has_specifier: bool,
        source: &str,
        anchors: Anchors<'_>,
    ) -> Result<(), RuleError> {
        if !has_specifier {
            self.whole = true;
            return Ok(());
        }
        let rule = Rule::parse(text, RuleKind::Allow, source, anchors)?;
        if matches!(rule.specifier, Specifier::All) {
            self.whole = true;
        } else {
            self.rules.push(rule);
        }
        Ok(())
    }

    /// Whether the scope grants every call of the tool.
    pub fn is_whole(&self) -> bool {
        self.whole
    }

    /// The scoped entries, as written.
    pub fn entries(&self) -> Vec<String> {
        self.rules.iter().map(|rule| rule.text.clone()).collect()
    }

    /// Whether a call of `tool` touching `access` is inside the scope; `Err` says what is not.
    pub fn check(&self, tool: &str, access: &Access) -> Result<(), OutsideScope> {
        if self.whole {
            return Ok(());
        }
        let outside = |what: String| Err(OutsideScope { what, entries: self.entries() });
        match access {
            Access::Execute { command, .. } => match self.uncovered_command(command) {
                None => Ok(()),
                Some(what) => outside(what),
            },
            Access::Read(paths) | Access::Write(paths) => {
                let write = matches!(access, Access::Write(_));
                // As written and with links resolved: a link inside the scope to a file outside
                // it is outside.
                let covered = |path: &std::path::Path| {
                    let real = crate::path::real_path(path);
                    [path, real.as_path()]
                        .iter()
                        .all(|path| self.rules.iter().any(|rule| rule.matches_path(tool, write, &[path])))
                };
                match paths.iter().find(|path| !covered(path)) {
                    None if !paths.is_empty() => Ok(()),
                    None => outside(format!("a {tool} call without a path")),
                    Some(path) => outside(format!("`{}`", path.display())),
                }
            }
            Access::Fetch { url } => {
                let host = crate::decide::url_host(url);
                if self.rules.iter().any(|rule| rule.matches_domain(&host)) {
                    Ok(())
                } else {
                    outside(format!("fetching from {host}"))
                }
            }
            Access::Memory { path, write } => {
                if self.rules.iter().any(|rule| rule.matches_memory(path, *write) || rule.matches_tool(tool))
                {
                    Ok(())
                } else {
                    outside(format!("memory `{path}`"))
                }
            }
            Access::Session | Access::Undeclared { .. } => {
                if self.rules.iter().any(|rule| rule.matches_tool(tool)) {
                    Ok(())
                } else {
                    outside(format!("this {tool} call"))
                }
            }
        }
    }

    /// The first part of `command` no shell entry covers, if any.
    fn uncovered_command(&self, command: &str) -> Option<String> {
        let parsed = shell::parse(command);
        if let Some(why) = parsed.unknown.first() {
            return Some(format!("`{}` (Lathe cannot analyse it: {why})", one_line(command)));
        }
        if let Some(name) = parsed.fork_bombs.first() {
            return Some(format!("`{name}()` (a fork bomb)"));
        }
        if let Some(write) = parsed.writes.iter().find(|write| !harmless_target(&write.target.text)) {
            return Some(format!("the redirection writing `{}`", write.target.text));
        }
        if parsed.commands.is_empty() {
            return Some(format!("`{}` (no command in it)", one_line(command)));
        }
        parsed.commands.iter().find_map(|cmd| {
            // With its wrappers and assignments in front, and a program from elsewhere with its
            // path: `sudo git diff`, `GIT_EXTERNAL_DIFF=x git diff` and `./tools/git diff` are not
            // `git diff`.
            let mut text = cmd.allow_text();
            for wrapper in cmd.wrappers.iter().rev() {
                text = format!("{wrapper} {text}");
            }
            for assignment in cmd.assignments.iter().rev() {
                text = format!("{assignment} {text}");
            }
            (!self.rules.iter().any(|rule| rule.matches_command(&text))).then(|| format!("`{text}`"))
        })
    }
}

fn harmless_target(target: &str) -> bool {
    matches!(target, "/dev/null" | "/dev/stdout" | "/dev/stderr")
}

fn one_line(command: &str) -> String {
    let line: String = command.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(120) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line,
    }
}

/// Splits an entry of a tool list into its tool name and whether it has a specifier:
/// `Bash(git diff *)` → (`Bash`, true), `Read` → (`Read`, false).
pub fn entry_name(entry: &str) -> (&str, bool) {
    let entry = entry.trim();
    match entry.split_once('(') {
        Some((name, _)) => (name.trim(), true),
        None => (entry, false),
    }
}

/// Anchors for the path specifiers of a list in a file of `project` (its working directory).
pub fn anchors<'a>(project: &'a Path, home: Option<&'a Path>) -> Anchors<'a> {
    Anchors { root: project, cwd: project, home }
}

#[cfg(test)]
#[path = "scope_tests.rs"]
mod tests;
