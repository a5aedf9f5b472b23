//! The read-only allow-list: programs and subcommands that only read, with the options that would
//! make them write, run other programs or change configuration excluded in every spelling
//! (`find -exec`, `rg --pre`, `sort -o`/`-ro`/`--out=`, `git diff --output`, `git grep -O`, `git -c`,
//! `sed` other than `-n 'Np'`, `date -s`, `go env -w`, `declare -i`, `test -v`). Pagers (`less`,
//! `more`) are not on it: they run commands typed at them.

use super::SimpleCommand;
use super::classify::{arg_texts, operands};
use super::git::git_read_only;
use super::options::{long, long_abbrev, short_cluster};

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
    let any = |f: &dyn Fn(&str) -> bool| args.iter().any(|a| f(a));
    match program {
        "git" => git_read_only(cmd),
        // Only the options that make a script stricter; `-a`, `-k` and `-x` change what later
        // commands get in their environment or expand (PS4).
        "set" => set_is_harmless(&args),
        // Printing or querying options only; `shopt -s expand_aliases` changes what runs.
        "shopt" => args.iter().all(|a| matches!(*a, "-p" | "-q" | "-o")) || args.is_empty(),
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
        // `--pre CMD` runs CMD on every file; `--hostname-bin CMD` runs CMD for hyperlinks.
        "rg" => !any(&|a| a.starts_with("--pre") || long(a, "hostname-bin")),
        "sed" => sed_prints_lines(&args),
        // `-o FILE` writes; `--compress-program=PROG` runs PROG. Value-taking shorts: -k -S -t -T.
        "sort" => !any(&|a| {
            short_cluster(a, 'o', "kStT")
                || long_abbrev(a, "output", 1)
                || long_abbrev(a, "compress-program", 2)
        }),
        "uniq" | "xxd" => ops.len() <= 1,
        // `-o FILE` writes; `-R` runs tree again in every directory with `-o 00Tree.html`.
        "tree" => {
            !any(&|a| !a.starts_with("--") && a.starts_with('-') && (a.contains('o') || a.contains('R')))
        }
        "date" => !any(&|a| short_cluster(a, 's', "dfIr") || long_abbrev(a, "set", 1)),
        "hostname" => args.iter().all(|a| HOSTNAME_SHOWS.contains(a)),
        "hostnamectl" => hostnamectl_shows(&args),
        // `-C` compiles a magic file next to it.
        "file" => !any(&|a| short_cluster(a, 'C', "efmFP") || long_abbrev(a, "compile", 2)),
        "base64" => true,
        // After unwrapping, `env` runs no command (it prints the environment) and `command` is `-v`.
        "env" | "command" => true,
        "cargo" => matches!(args.first(), Some(&"--version" | &"-V")),
        "go" => match args.first() {
            Some(&"version") => true,
            // `go env -w`/`-u` change the Go environment file.
            Some(&"env") => !any(&|a| matches!(a, "-w" | "-u" | "--w" | "--u")),
            _ => false,
        },
        // `printf -v NAME` assigns a variable, and a subscript in NAME is evaluated (runs `$(…)`).
        "printf" => !args.first().is_some_and(|a| a.starts_with("-v")),
        // `-v NAME`/`-R NAME` evaluate a subscript in NAME.
        "test" | "[" | "[[" => !any(&|a| matches!(a, "-v" | "-R")),
        // `-i` evaluates values as arithmetic, `-n` makes a reference that evaluates later; a
        // subscript in a name is evaluated.
        "declare" | "typeset" | "local" | "readonly" | "export" => {
            !any(&|a| (a.starts_with('-') && (a.contains('i') || a.contains('n'))) || a.contains('['))
        }
        "unset" => !any(&|a| a.contains('[')),
        _ => true,
    }
}

/// `hostname` options that only show a name or address (`-F FILE` and `-b NAME` set it).
const HOSTNAME_SHOWS: &[&str] = &[
    "-a",
    "-A",
    "-d",
    "-f",
    "-i",
    "-I",
    "-s",
    "-y",
    "--alias",
    "--all-fqdns",
    "--domain",
    "--fqdn",
    "--long",
    "--ip-address",
    "--all-ip-addresses",
    "--short",
    "--yp",
    "--nis",
    "-V",
    "--version",
    "-h",
    "--help",
];

/// `hostnamectl` with no verb, `status`, or a property verb without a new value (`hostname`
/// alone shows the name; `hostname NEW` sets it). `-H`/`-M` reach other machines.
fn hostnamectl_shows(args: &[&str]) -> bool {
    let verbs: Vec<&str> = args.iter().copied().filter(|a| !a.starts_with('-')).collect();
    let options_show = args.iter().filter(|a| a.starts_with('-')).all(|a| {
        matches!(*a, "--static" | "--transient" | "--pretty" | "--no-pager") || a.starts_with("--json")
    });
    options_show
        && match verbs[..] {
            [] | ["status"] => true,
            [verb] => matches!(verb, "hostname" | "icon-name" | "chassis" | "deployment" | "location"),
            _ => false,
        }
}

/// Only `sed -n 'Np'` / `sed -n 'N,Mp'` followed by files: no other option (`-i`, `-e`, `-f`,
/// `-s`, …) and no other command (`w`, `e`, `s///w`).
fn sed_prints_lines(args: &[&str]) -> bool {
    let [quiet, script, files @ ..] = args else { return false };
    let lines = script.strip_suffix('p').unwrap_or("");
    matches!(*quiet, "-n" | "--quiet" | "--silent")
        && !lines.is_empty()
        && lines.split(',').all(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit() || c == '$'))
        && files.iter().all(|f| !f.starts_with('-') || *f == "-")
}

/// Whether `set ARGS` only makes the script stricter or sets positional parameters (`set -euo
/// pipefail`, `set -- a b`).
fn set_is_harmless(args: &[&str]) -> bool {
    let mut positional = false;
    args.iter().all(|arg| {
        if positional {
            return true;
        }
        if *arg == "--" || *arg == "-" {
            positional = true;
            return true;
        }
        match arg.strip_prefix(['-', '+']) {
            Some(flags) => flags.chars().all(|flag| "euoCfb".contains(flag)),
            None => matches!(*arg, "pipefail" | "errexit" | "nounset" | "noclobber" | "noglob"),
        }
    })
}
