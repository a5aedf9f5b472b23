//! `git` command lines: where the subcommand is after the global options, and which subcommands
//! only read. An option that runs a program (`grep -O`, `diff --ext-diff`, a pager or diff driver
//! set through `-c`), writes a file (`--output`) or points git at other configuration
//! (`--config-env`, `--exec-path=`, `--git-dir`) makes the command not read-only.

use super::SimpleCommand;
use super::classify::arg_texts;
use super::options::{long, long_abbrev, short_cluster};

/// Where the subcommand of a `git` command line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GitLine<'a> {
    /// The subcommand (`diff` in `git -C x diff`), if there is one.
    pub sub: Option<&'a str>,
    /// Its index among the arguments (after the program).
    pub at: usize,
    /// Whether a global option changes the configuration or which programs git runs (`-c`,
    /// `--config-env`, `--exec-path=DIR`, `--git-dir`), or is one Lathe does not know.
    pub reconfigured: bool,
}

/// Global options that take the next argument as their value.
const WITH_VALUE: &[&str] =
    &["-C", "--git-dir", "--work-tree", "--namespace", "--attr-source", "-c", "--config-env"];

/// Global options without a value that change nothing git runs.
const PLAIN: &[&str] = &[
    "--no-pager",
    "-P",
    "-p",
    "--paginate",
    "--bare",
    "--no-replace-objects",
    "--no-lazy-fetch",
    "--no-optional-locks",
    "--no-advice",
    "--literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
    "--html-path",
    "--man-path",
    "--info-path",
    "--exec-path",
    "--version",
    "--help",
    "-v",
    "-h",
];

/// Global options written `--name=value` whose value changes nothing git runs.
const PLAIN_ATTACHED: &[&str] =
    &["--work-tree=", "--namespace=", "--attr-source=", "--list-cmds=", "--super-prefix="];

/// Splits a `git` command line (arguments of `cmd`) at its subcommand, as git's own option loop does.
pub(crate) fn git_line<'a>(args: &[&'a str]) -> GitLine<'a> {
    let mut i = 0;
    let mut reconfigured = false;
    while i < args.len() {
        let arg = args[i];
        if WITH_VALUE.contains(&arg) {
            reconfigured |= matches!(arg, "-c" | "--config-env" | "--git-dir");
            i += 2;
        } else if PLAIN.contains(&arg) || PLAIN_ATTACHED.iter().any(|p| arg.starts_with(p)) {
            i += 1;
        } else if arg.starts_with('-') {
            // `--config-env=…`, `--exec-path=DIR`, `--git-dir=…`, and options Lathe does not know.
            reconfigured = true;
            i += 1;
        } else {
            return GitLine { sub: Some(arg), at: i, reconfigured };
        }
    }
    GitLine { sub: None, at: i, reconfigured }
}

/// Options of the diff machinery (`diff`, `log`, `show`, `stash show`, …) that write a file or run
/// an external diff or text-conversion driver. These are not abbreviated by git.
fn diff_runs_or_writes(options: &[&str]) -> bool {
    options.iter().any(|a| long(a, "output") || long(a, "ext-diff") || long(a, "textconv"))
}

/// Whether `git …` in `cmd` only reads.
pub(super) fn git_read_only(cmd: &SimpleCommand) -> bool {
    let args: Vec<&str> = arg_texts(cmd).collect();
    let line = git_line(&args);
    if line.reconfigured {
        return false;
    }
    let rest: Vec<&str> = args.iter().skip(line.at + 1).copied().collect();
    // Options end at `--`; what follows are paths.
    let options: Vec<&str> = rest.iter().copied().take_while(|a| *a != "--").collect();
    match line.sub {
        None => rest.iter().all(|a| matches!(*a, "--version" | "--help")),
        Some("log" | "show" | "diff" | "shortlog" | "whatchanged" | "rev-list") => {
            !diff_runs_or_writes(&options)
        }
        Some("reflog") => {
            !matches!(options.first(), Some(&("expire" | "delete" | "drop")))
                && !diff_runs_or_writes(&options)
        }
        Some("grep") => !options.iter().any(|a| {
            // parse-options accepts unambiguous abbreviations (`--op`) and clusters (`-iOvim`).
            long_abbrev(a, "open-files-in-pager", 2)
                || long_abbrev(a, "textconv", 5)
                || short_cluster(a, 'O', "ABCefm")
        }),
        Some("cat-file") => {
            !options.iter().any(|a| long_abbrev(a, "textconv", 3) || long_abbrev(a, "filters", 2))
        }
        Some("blame") => !options.iter().any(|a| long(a, "textconv")),
        Some(
            "status" | "describe" | "rev-parse" | "ls-files" | "ls-tree" | "show-ref" | "merge-base"
            | "name-rev" | "count-objects" | "check-ignore" | "version",
        ) => true,
        Some("branch") => rest.iter().all(|a| {
            matches!(
                *a,
                "-a" | "-r"
                    | "-v"
                    | "-vv"
                    | "--all"
                    | "--remotes"
                    | "--list"
                    | "-l"
                    | "--show-current"
                    | "--verbose"
            ) || a.starts_with("--contains")
                || a.starts_with("--merged")
                || a.starts_with("--no-merged")
                || a.starts_with("--sort")
                || a.starts_with("--format")
        }),
        Some("tag") => {
            rest.is_empty() || rest.iter().all(|a| matches!(*a, "-l" | "--list") || a.starts_with("--sort"))
        }
        Some("remote") => {
            rest.iter().all(|a| matches!(*a, "-v" | "--verbose" | "show" | "get-url")) || rest.is_empty()
        }
        Some("stash") => matches!(rest.first(), Some(&"list" | &"show")) && !diff_runs_or_writes(&options),
        Some("config") => config_reads(&options),
        Some("worktree") => rest.first() == Some(&"list"),
        Some(_) => false,
    }
}

/// `git config` that only reads: `get`/`list`, or a reading action, and nothing that writes or
/// opens an editor.
fn config_reads(options: &[&str]) -> bool {
    let writes = options.iter().any(|a| {
        matches!(
            *a,
            "set"
                | "unset"
                | "edit"
                | "rename-section"
                | "remove-section"
                | "-e"
                | "--edit"
                | "--add"
                | "--unset"
                | "--unset-all"
                | "--replace-all"
                | "--rename-section"
                | "--remove-section"
        )
    });
    let reads = matches!(options.first(), Some(&("get" | "list")))
        || options.iter().any(|a| matches!(*a, "--get" | "--list" | "-l" | "--get-all" | "--get-regexp"));
    reads && !writes
}
