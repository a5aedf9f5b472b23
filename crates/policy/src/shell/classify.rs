//! Judging one simple command: read-only (runs without asking in `default` mode), destructive
//! (always asks), or neither (the mode and the rules decide).
//!
//! Read-only is an allow-list of programs and subcommands whose every option is harmless
//! (`find` without `-exec`/`-delete`, `git diff` without `--output`, `sed -n Np`); anything not on
//! it is at least mutating. Destructive patterns name what the command would do, for the prompt.

use std::path::{Path, PathBuf};

use super::{Cwd, Redirect, SimpleCommand, Word};
use crate::path::{is_inside, normalize};

/// How a simple command is judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Class {
    /// Reads only: runs without asking in `default` mode.
    ReadOnly,
    /// Changes something: the mode and the rules decide.
    Mutating,
    /// Dangerous whatever the mode: asks (so it is denied headless). The text says what it does.
    Destructive(String),
}

/// A part of a command line with its judgement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classified {
    /// The part as rules see it (`git push origin main`).
    pub text: String,
    /// The judgement.
    pub class: Class,
}

/// The places a command's paths are judged against.
#[derive(Debug, Clone)]
pub struct Places<'a> {
    /// The directory the command starts in.
    pub start: &'a Path,
    /// The user's home directory (for `~`).
    pub home: Option<&'a Path>,
    /// Where commands may write: the workspace, extra roots, temp dirs (canonical).
    pub writable: &'a [PathBuf],
}

/// Where a path argument points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// Inside a writable root.
    Writable,
    /// A device file under `/dev`.
    Device(PathBuf),
    /// Outside every writable root.
    Outside(PathBuf),
    /// Only known at run time.
    Unknown,
}

impl Places<'_> {
    /// Where `word`, given to a command running in `cwd`, points (a glob by the directory before its
    /// first wildcard).
    pub fn place(&self, word: &Word, cwd: &Cwd) -> Place {
        if word.dynamic {
            return Place::Unknown;
        }
        let Some(path) = self.absolute(&word.text, cwd) else { return Place::Unknown };
        let cut = match path.to_str().and_then(|s| s.find(['*', '?', '['])) {
            Some(at) => {
                let s = path.to_string_lossy();
                let dir = s[..at].rsplit_once('/').map(|(dir, _)| dir).unwrap_or("");
                PathBuf::from(if dir.is_empty() { "/" } else { dir })
            }
            None => path,
        };
        let path = normalize(&cut);
        if path.starts_with("/dev") {
            return Place::Device(path);
        }
        if self.writable.iter().any(|root| is_inside(root, &path)) {
            Place::Writable
        } else {
            Place::Outside(path)
        }
    }

    /// The path `word` names for a command running in `cwd`, normalised; `None` when it is known
    /// only at run time.
    pub fn path_of(&self, word: &Word, cwd: &Cwd) -> Option<PathBuf> {
        if word.dynamic {
            return None;
        }
        self.absolute(&word.text, cwd).map(|path| normalize(&path))
    }

    fn absolute(&self, text: &str, cwd: &Cwd) -> Option<PathBuf> {
        if text == "~" || text.starts_with("~/") {
            return Some(self.home?.join(text.trim_start_matches('~').trim_start_matches('/')));
        }
        if text.starts_with('~') {
            return None;
        }
        if text.starts_with('/') {
            return Some(PathBuf::from(text));
        }
        let base = match cwd {
            Cwd::Start => self.start.to_path_buf(),
            Cwd::Unknown => return None,
            Cwd::Path(dir) => self.absolute(dir, &Cwd::Start)?,
        };
        Some(base.join(text))
    }
}

/// Variables that change which program runs or what it loads: setting them is never read-only.
const RISKY_VARIABLES: &[&str] = &[
    "PATH",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "LD_AUDIT",
    "BASH_ENV",
    "ENV",
    "PROMPT_COMMAND",
    "IFS",
    "SHELLOPTS",
    "BASHOPTS",
    "PAGER",
    "GIT_PAGER",
    "EDITOR",
    "VISUAL",
    "GIT_EXTERNAL_DIFF",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_CONFIG",
    "GIT_CONFIG_GLOBAL",
    "GIT_DIR",
    "GIT_EXEC_PATH",
    "HOME",
    "XDG_CONFIG_HOME",
    "SHELL",
    "MANPAGER",
    "BROWSER",
    "RIPGREP_CONFIG_PATH",
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "NODE_OPTIONS",
    "PERL5OPT",
    "RUBYOPT",
    // Prompts are expanded (PS4 by `set -x`), and bash's alias and command tables run programs.
    "PS0",
    "PS1",
    "PS2",
    "PS3",
    "PS4",
    "BASH_ALIASES",
    "BASH_CMDS",
    // Programs that read a command or a file to run from these: zgrep ($GREP), man ($MANOPT),
    // lsb_release (sources $LSB_OS_RELEASE), rustup's proxies (toolchains and homes).
    "GREP",
    "MANOPT",
    "LSB_OS_RELEASE",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "CARGO_HOME",
];

/// Families of variables that configure git (`GIT_CONFIG_COUNT`, `GIT_CONFIG_KEY_0`, …), the
/// dynamic loader, `less` (`LESSOPEN` runs a preprocessor) and exported bash functions.
const RISKY_PREFIXES: &[&str] = &["GIT_", "LD_", "DYLD_", "LESS", "BASH_FUNC_"];

/// Programs that read their program from standard input when given no script.
const INTERPRETERS: &[&str] = &[
    "bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "fish", "python", "python2", "python3", "perl",
    "ruby", "node", "php", "lua", "tclsh",
];

/// Judges one simple command.
pub fn classify(cmd: &SimpleCommand, places: &Places<'_>) -> Class {
    if let Some(wrapper) = cmd.wrappers.iter().find(|w| *w == "sudo" || *w == "doas") {
        return Class::Destructive(format!("runs a command as another user ({wrapper})"));
    }
    let risky = cmd.assignments.iter().any(|name| {
        RISKY_VARIABLES.contains(&name.as_str()) || RISKY_PREFIXES.iter().any(|p| name.starts_with(p))
    });
    let Some(program) = cmd.program() else {
        return if cmd.words.is_empty() && !risky { Class::ReadOnly } else { Class::Mutating };
    };
    if let Some(what) = destructive(program, cmd, places) {
        return Class::Destructive(what);
    }
    let from_elsewhere = cmd.program_from_elsewhere();
    if !risky && !from_elsewhere && super::read_only::read_only(program, cmd) {
        Class::ReadOnly
    } else {
        Class::Mutating
    }
}

/// Judges a redirection that writes a file: inside the writable roots it is mutating, elsewhere
/// (or to a device, or to a file named at run time) destructive.
pub fn classify_write(redirect: &Redirect, places: &Places<'_>) -> Class {
    match places.place(&redirect.target, &redirect.cwd) {
        Place::Writable => Class::Mutating,
        Place::Device(path) => Class::Destructive(format!("writes to the device {}", path.display())),
        Place::Outside(path) => {
            Class::Destructive(format!("writes outside the workspace ({})", path.display()))
        }
        Place::Unknown => {
            Class::Destructive(format!("writes to a file named at run time ({})", redirect.target.text))
        }
    }
}

pub(super) fn arg_texts(cmd: &SimpleCommand) -> impl Iterator<Item = &str> {
    cmd.args().iter().map(|w| w.text.as_str())
}

/// Short flags of `cmd` (`-rf` → `r`, `f`) and long ones, before `--`.
fn has_flag(cmd: &SimpleCommand, short: char, long: &str) -> bool {
    arg_texts(cmd).take_while(|a| *a != "--").any(|a| {
        if let Some(name) = a.strip_prefix("--") {
            name == long
        } else {
            a.starts_with('-') && a.len() > 1 && a[1..].contains(short)
        }
    })
}

/// Non-option arguments (after `--`, everything).
pub(super) fn operands(cmd: &SimpleCommand) -> Vec<&Word> {
    let mut out = Vec::new();
    let mut options_done = false;
    for word in cmd.args() {
        if !options_done && word.text == "--" {
            options_done = true;
        } else if options_done || !word.text.starts_with('-') || word.text == "-" {
            out.push(word);
        }
    }
    out
}

/// The first target that is not writable, described.
fn outside_target<'w>(
    targets: impl IntoIterator<Item = &'w Word>,
    cmd: &SimpleCommand,
    places: &Places<'_>,
) -> Option<String> {
    for word in targets {
        match places.place(word, &cmd.cwd) {
            Place::Writable => {}
            Place::Device(path) => return Some(format!("writes to the device {}", path.display())),
            Place::Outside(path) => return Some(format!("changes {} outside the workspace", path.display())),
            Place::Unknown if cmd.runtime_args || word.dynamic || cmd.cwd == Cwd::Unknown => {
                return Some(format!("changes a path known only at run time ({})", word.text));
            }
            Place::Unknown => return Some(format!("changes {} outside the workspace", word.text)),
        }
    }
    None
}

fn destructive(program: &str, cmd: &SimpleCommand, places: &Places<'_>) -> Option<String> {
    let args: Vec<&str> = arg_texts(cmd).collect();
    match program {
        "su" | "sudo" | "doas" | "pkexec" => Some(format!("runs commands as another user ({program})")),
        "rm" | "rmdir" | "unlink" | "shred" => {
            let forced = has_flag(cmd, 'r', "recursive")
                || has_flag(cmd, 'R', "recursive")
                || has_flag(cmd, 'f', "force");
            let targets = operands(cmd);
            if cmd.runtime_args && forced {
                return Some(format!("{program} -rf on paths known only at run time"));
            }
            outside_target(targets, cmd, places).map(|what| format!("{program}: {what}"))
        }
        "git" => git_destructive(cmd),
        "dd" if args.iter().any(|a| a.starts_with("of=")) => {
            Some("dd writes raw data to a file or device (of=)".into())
        }
        p if p.starts_with("mkfs")
            || matches!(p, "mke2fs" | "mkswap" | "fdisk" | "sfdisk" | "parted" | "wipefs") =>
        {
            Some(format!("{program} rewrites a file system or partition table"))
        }
        "chmod" | "chown" | "chgrp" => {
            let recursive = has_flag(cmd, 'R', "recursive");
            let world =
                args.iter().any(|a| *a == "777" || *a == "0777" || a.contains("a+rwx") || *a == "o+w");
            if recursive && world {
                return Some(format!("{program} -R opens everything to everyone"));
            }
            let targets = operands(cmd).into_iter().skip(1);
            outside_target(targets, cmd, places).map(|what| format!("{program}: {what}"))
        }
        "kill" => {
            let mut rest = args.iter().skip_while(|a| a.starts_with('-') && **a != "-1" && **a != "--");
            let mut rest: Vec<&&str> = rest.by_ref().collect();
            if rest.first().is_some_and(|a| **a == "--") {
                rest.remove(0);
            }
            let signal_then_all = args.len() >= 2 && rest.iter().any(|a| **a == "-1");
            signal_then_all.then(|| "kill -1 signals every process of the user".to_string())
        }
        "shutdown" | "reboot" | "halt" | "poweroff" | "telinit" => {
            Some(format!("{program} stops the machine"))
        }
        "init" if args.first().is_some_and(|a| matches!(*a, "0" | "6")) => {
            Some("init changes the run level".into())
        }
        "systemctl"
            if args.iter().any(|a| {
                matches!(*a, "poweroff" | "reboot" | "halt" | "kexec" | "suspend" | "hibernate")
            }) =>
        {
            Some("systemctl stops the machine".into())
        }
        p if INTERPRETERS.contains(&p) && cmd.piped_input && reads_program_from_stdin(cmd) => Some(format!(
            "pipes data into {program}, which runs it as a program (download-and-execute or decode-and-execute)"
        )),
        "cp" | "mv" | "install" | "ln" | "rsync" | "scp" => {
            let ops = operands(cmd);
            let target_dir = args
                .iter()
                .position(|a| *a == "-t" || *a == "--target-directory")
                .and_then(|i| cmd.args().get(i + 1));
            let dest: Vec<&Word> = match target_dir {
                Some(dir) => vec![dir],
                None => ops.last().copied().into_iter().collect(),
            };
            let mut what = outside_target(dest, cmd, places);
            if what.is_none() && program == "mv" {
                // Moving a file away from outside the workspace changes that place too.
                what = outside_target(ops.iter().rev().skip(1).copied(), cmd, places);
            }
            what.map(|what| format!("{program}: {what}"))
        }
        "touch" | "mkdir" | "truncate" | "tee" | "mkfifo" | "mknod" => {
            outside_target(operands(cmd), cmd, places).map(|what| format!("{program}: {what}"))
        }
        "sed" | "perl" if args.iter().any(|a| *a == "-i" || a.starts_with("-i") || *a == "--in-place") => {
            let files = operands(cmd).into_iter().skip(1);
            outside_target(files, cmd, places).map(|what| format!("{program} -i: {what}"))
        }
        _ => None,
    }
}

fn reads_program_from_stdin(cmd: &SimpleCommand) -> bool {
    let ops = operands(cmd);
    let has_inline = arg_texts(cmd).any(|a| matches!(a, "-c" | "-e" | "-m" | "-E"));
    !has_inline && (ops.is_empty() || ops[0].text == "-" || arg_texts(cmd).any(|a| a == "-s"))
}

fn git_destructive(cmd: &SimpleCommand) -> Option<String> {
    let args: Vec<&str> = arg_texts(cmd).collect();
    let line = super::git::git_line(&args);
    let (sub, at) = (line.sub, line.at);
    let rest: Vec<&str> = args.iter().skip(at + 1).copied().collect();
    let flag = |short: char, long: &str| {
        rest.iter().any(|a| {
            a.strip_prefix("--").map_or(a.starts_with('-') && a[1..].contains(short), |name| name == long)
        })
    };
    match sub? {
        "push" => Some("git push publishes commits to a remote".into()),
        "reset" if rest.contains(&"--hard") => Some("git reset --hard discards uncommitted changes".into()),
        "clean" if flag('f', "force") => Some("git clean -f deletes untracked files".into()),
        "checkout" | "restore" if rest.iter().any(|a| *a == "." || *a == "--") && flag('f', "force") => {
            Some("git checkout -f discards uncommitted changes".into())
        }
        _ => None,
    }
}
