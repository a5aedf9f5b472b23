//! The read-only allow-list: programs and subcommands that only read, with the options that would
//! make them write or run other programs excluded (`find -exec`, `rg --pre`, `sort -o`,
//! `git diff --output`, `git -c`, `sed` other than `-n 'Np'`).

use super::SimpleCommand;
use super::classify::{arg_texts, git_subcommand, operands};

/// Programs that only read, whatever their arguments (within the exceptions in [`read_only`]).
const READ_ONLY: &[&str] = &[
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "echo",
    "printf",
    "pwd",
    "date",
    "true",
    "false",
    ":",
    "whoami",
    "id",
    "uname",
    "which",
    "type",
    "file",
    "stat",
    "du",
    "df",
    "tree",
    "cut",
    "tr",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "diff",
    "cmp",
    "comm",
    "nl",
    "od",
    "hexdump",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "b2sum",
    "cksum",
    "printenv",
    "test",
    "[",
    "[[",
    "seq",
    "column",
    "jq",
    "cd",
    "pushd",
    "popd",
    "less",
    "more",
    "fold",
    "fmt",
    "expand",
    "unexpand",
    "paste",
    "rev",
    "tac",
    "strings",
    "nproc",
    "free",
    "uptime",
    "locale",
    "getconf",
    "lsb_release",
    "hostnamectl",
    "tty",
    "groups",
    "env",
    "export",
    "declare",
    "typeset",
    "local",
    "readonly",
    "unset",
    "set",
    "shopt",
    "exit",
    "return",
    "sleep",
    "wait",
    "command",
    "zcat",
    "bzcat",
    "xzcat",
    "zgrep",
    "git",
    "sed",
    "sort",
    "uniq",
    "find",
    "hostname",
    "xxd",
    "base64",
    "cargo",
    "go",
];

pub(super) fn read_only(program: &str, cmd: &SimpleCommand) -> bool {
    if !READ_ONLY.contains(&program) {
        return false;
    }
    let args: Vec<&str> = arg_texts(cmd).collect();
    let ops = operands(cmd);
    match program {
        "git" => git_read_only(cmd),
        "find" => !args.iter().any(|a| {
            matches!(
                *a,
                "-exec"
                    | "-execdir"
                    | "-ok"
                    | "-okdir"
                    | "-delete"
                    | "-fls"
                    | "-fprint"
                    | "-fprint0"
                    | "-fprintf"
            )
        }),
        "rg" => !args.iter().any(|a| a.starts_with("--pre")),
        "sed" => {
            // Only `sed -n 'Np'` / `sed -n 'N,Mp'` (no w, e or in-place editing).
            args.first() == Some(&"-n")
                && ops.first().is_some_and(|script| {
                    let s = script.text.trim_end_matches('p');
                    script.text.ends_with('p')
                        && !s.is_empty()
                        && s.split(',').all(|n| n.chars().all(|c| c.is_ascii_digit() || c == '$'))
                })
        }
        "sort" => !args.iter().any(|a| a.starts_with("-o") || a.starts_with("--output")),
        "uniq" | "xxd" => ops.len() <= 1,
        "tree" => !args.contains(&"-o"),
        "date" => !args.iter().any(|a| a.starts_with("-s") || a.starts_with("--set")),
        "hostname" => ops.is_empty(),
        "file" => !args.contains(&"-C"),
        "base64" => true,
        // After unwrapping, `env` runs no command (it prints the environment) and `command` is `-v`.
        "env" | "command" => true,
        "cargo" => matches!(args.first(), Some(&"--version" | &"-V")),
        "go" => matches!(args.first(), Some(&"version" | &"env")),
        "less" | "more" => true,
        _ => true,
    }
}

fn git_read_only(cmd: &SimpleCommand) -> bool {
    let (sub, at, config) = git_subcommand(cmd);
    if config {
        return false;
    }
    let rest: Vec<&str> = arg_texts(cmd).skip(at + 1).collect();
    let writes_output =
        rest.iter().any(|a| a.starts_with("--output") || *a == "-o" || a.starts_with("--ext-diff"));
    match sub {
        None => rest.iter().all(|a| matches!(*a, "--version" | "--help")),
        Some(
            "status" | "log" | "show" | "diff" | "blame" | "shortlog" | "describe" | "rev-parse" | "ls-files"
            | "ls-tree" | "cat-file" | "grep" | "reflog" | "whatchanged" | "show-ref" | "rev-list"
            | "merge-base" | "name-rev" | "count-objects" | "check-ignore" | "version",
        ) => !writes_output,
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
        Some("stash") => matches!(rest.first(), Some(&"list" | &"show")),
        Some("config") => {
            rest.iter().any(|a| matches!(*a, "--get" | "--list" | "-l" | "--get-all" | "--get-regexp"))
        }
        Some("worktree") => rest.first() == Some(&"list"),
        Some(_) => false,
    }
}
