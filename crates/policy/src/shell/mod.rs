//! Shell command analysis (FEATURES.md §D "Shell analysis with a real parser").
//!
//! A command line is parsed with tree-sitter-bash and split into its simple commands wherever bash
//! would run more than one: `&&`, `||`, `;`, `|`, `&`, newlines, subshells, `{ …; }`, `$(…)`,
//! backticks, process substitution, loops, conditions and function bodies. Wrappers that run
//! another command (`env`, `command`, `builtin`, `exec`, `timeout`, `nice`, `nohup`, `time`, `stdbuf`,
//! `sudo`, `xargs`, `find -exec`) are unwrapped, and the strings given to `bash -c`/`sh -c` and `eval`
//! are parsed in turn. Words are evaluated as bash would quote-remove them (`\rm`, `r''m`, `$'\x72m'`
//! are all `rm`); a word whose value is only known at run time (`$X`, `$(…)`) is marked dynamic.
//!
//! This module only describes a command ([`parse`] → [`Parsed`]); [`classify`] judges each part
//! (read-only, destructive, or neither) against the workspace, and the policy decides. Anything the
//! parser cannot follow is listed in [`Parsed::unknown`], which the policy turns into an ask.
//!
//! Parser creation costs more than a parse, so each thread keeps one parser, made on its first use
//! (never at start-up).

mod arith;
mod classify;
mod git;
mod options;
mod parse;
mod read_only;
mod unwrap;
mod words;

use std::cell::RefCell;

pub use classify::{Class, Classified, Place, Places, classify, classify_write};
pub(crate) use git::git_line;

/// Longest command line analysed, in bytes; longer ones are not parsed and ask.
pub const MAX_COMMAND_BYTES: usize = 64 * 1024;
/// How deeply `bash -c`, `eval` and wrappers may nest before the analysis gives up and asks.
pub const MAX_DEPTH: usize = 8;

/// One word of a command after quote removal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The value bash would pass (literal parts), or the source text for parts known only at run
    /// time.
    pub text: String,
    /// Whether any part of the word is an expansion or substitution (its value is not `text`).
    pub dynamic: bool,
}

impl Word {
    /// A literal word.
    pub fn literal(text: impl Into<String>) -> Word {
        Word { text: text.into(), dynamic: false }
    }
}

/// Where a simple command runs, as far as the analysis can follow `cd`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cwd {
    /// The directory the command line starts in.
    Start,
    /// A directory given to `cd`, relative to the start directory or absolute (`~` unexpanded).
    Path(String),
    /// A `cd` whose target is only known at run time.
    Unknown,
}

/// One simple command: a program and its arguments, after wrappers were removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// The program and its arguments (quote-removed).
    pub words: Vec<Word>,
    /// `NAME=value` prefixes and `export`/`declare` assignments, by name.
    pub assignments: Vec<String>,
    /// Wrappers that were removed, outermost first (`sudo`, `timeout`, `xargs`, `find -exec`, …).
    pub wrappers: Vec<String>,
    /// Whether the command receives arguments only known at run time (`xargs`, `find -exec {}`).
    pub runtime_args: bool,
    /// Whether the command reads its standard input from a pipe.
    pub piped_input: bool,
    /// The directory it runs in.
    pub cwd: Cwd,
}

impl SimpleCommand {
    /// The program name without its directory (`/bin/rm` → `rm`), if it is literal.
    pub fn program(&self) -> Option<&str> {
        let first = self.words.first().filter(|word| !word.dynamic)?;
        Some(first.text.rsplit('/').next().unwrap_or(&first.text))
    }

    /// Whether the program is named by a path outside the system's program directories
    /// (`./tools/git`, `/tmp/x/git`): then it is not the program its name says — a repository can
    /// ship an executable called `git` — so it is never read-only and never matches an allow rule
    /// or a scope written for the bare name.
    pub fn program_from_elsewhere(&self) -> bool {
        const SYSTEM: &[&str] = &["/usr/bin/", "/bin/", "/usr/local/bin/", "/usr/sbin/", "/sbin/"];
        self.words.first().is_some_and(|word| {
            !word.dynamic
                && word.text.contains('/')
                && !SYSTEM
                    .iter()
                    .any(|dir| word.text.strip_prefix(dir).is_some_and(|rest| !rest.contains('/')))
        })
    }

    /// The command as allow rules and scopes see it: [`SimpleCommand::rule_text`], except that a
    /// program from elsewhere keeps its path (`./tools/git diff`).
    pub fn allow_text(&self) -> String {
        if !self.program_from_elsewhere() {
            return self.rule_text();
        }
        self.words.iter().map(|word| word.text.as_str()).collect::<Vec<_>>().join(" ")
    }

    /// The arguments after the program.
    pub fn args(&self) -> &[Word] {
        self.words.get(1..).unwrap_or(&[])
    }

    /// The command as rules see it: the program without its directory, then the arguments, joined
    /// by single spaces (`/usr/bin/git  diff` → `git diff`).
    pub fn rule_text(&self) -> String {
        let mut text = self
            .program()
            .map(str::to_string)
            .unwrap_or_else(|| self.words.first().map(|word| word.text.clone()).unwrap_or_default());
        for word in self.args() {
            text.push(' ');
            text.push_str(&word.text);
        }
        text
    }
}

/// A redirection that writes: `>`, `>>`, `&>`, `>|`, `<>` to a file (not `2>&1`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// The target file.
    pub target: Word,
    /// The directory the redirection is made in.
    pub cwd: Cwd,
}

/// What a command line consists of.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// Every simple command, in source order (the commands inside substitutions before the command
    /// that uses their output).
    pub commands: Vec<SimpleCommand>,
    /// Redirections that write files.
    pub writes: Vec<Redirect>,
    /// Redirections that read files (`< file`), for the deny `Read(…)` rules.
    pub reads: Vec<Redirect>,
    /// Functions that call themselves in the background or through a pipe (fork bombs).
    pub fork_bombs: Vec<String>,
    /// Why (part of) the command could not be analysed; non-empty means "ask".
    pub unknown: Vec<String>,
}

thread_local! {
    static PARSER: RefCell<Option<tree_sitter::Parser>> = const { RefCell::new(None) };
}

/// Parses `command` into its simple commands. Never fails: what cannot be analysed (a syntax error,
/// a program name computed at run time, a command over [`MAX_COMMAND_BYTES`], a NUL byte) is
/// reported in [`Parsed::unknown`].
pub fn parse(command: &str) -> Parsed {
    let mut parsed = Parsed::default();
    parse_into(command, 0, Cwd::Start, &mut parsed);
    parsed
}

/// Parses `command` (a `bash -c` string at nesting `depth`) and appends what it finds.
fn parse_into(command: &str, depth: usize, cwd: Cwd, out: &mut Parsed) {
    if command.len() > MAX_COMMAND_BYTES {
        out.unknown.push(format!(
            "the command is {} bytes long, more than the {} bytes Lathe analyses",
            command.len(),
            MAX_COMMAND_BYTES
        ));
        return;
    }
    if command.contains('\0') {
        out.unknown.push("the command contains a NUL byte".into());
        return;
    }
    if depth > MAX_DEPTH {
        out.unknown.push(format!("commands nest deeper than {MAX_DEPTH} levels"));
        return;
    }
    let tree = PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut parser = tree_sitter::Parser::new();
            if parser.set_language(&tree_sitter_bash::LANGUAGE.into()).is_err() {
                return None;
            }
            *slot = Some(parser);
        }
        slot.as_mut().and_then(|parser| parser.parse(command, None))
    });
    let Some(tree) = tree else {
        out.unknown.push("the shell parser is unavailable".into());
        return;
    };
    let root = tree.root_node();
    if root.has_error() {
        out.unknown.push("the command is not valid bash syntax (or uses syntax Lathe cannot analyse)".into());
        return;
    }
    for text in arith::runtime_arithmetic(root, command) {
        // Not a program: classified as neither read-only nor destructive, so the mode decides.
        out.commands.push(SimpleCommand {
            words: vec![Word::literal(text)],
            assignments: Vec::new(),
            wrappers: Vec::new(),
            runtime_args: false,
            piped_input: false,
            cwd: cwd.clone(),
        });
    }
    let mut walker = parse::Walker { src: command, depth, cwd, out };
    walker.walk(root, false);
}

#[cfg(test)]
#[path = "shell_tests.rs"]
mod tests;
