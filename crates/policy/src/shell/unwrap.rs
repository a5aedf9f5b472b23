//! Wrappers: programs whose job is to run another command (`env`, `command`, `builtin`, `exec`,
//! `timeout`, `nice`, `nohup`, `time`, `stdbuf`, `ionice`, `setsid`, `sudo`, `doas`, `xargs`,
//! `find -exec`) and the strings that `bash -c`/`sh -c` and `eval` run. Unwrapping turns one
//! command's words into the pieces the policy judges.

use super::Word;
use super::options::{long_abbrev, short_cluster};

/// What one command's words stand for.
#[derive(Debug)]
pub(super) enum Piece {
    /// A command to judge, with the wrappers removed from in front of it.
    Command { words: Vec<Word>, wrappers: Vec<String>, runtime_args: bool, assignments: Vec<String> },
    /// A script string to parse in turn (`bash -c STRING`, `eval WORDS`).
    Script(Word),
    /// Something the analysis cannot follow.
    Unknown(String),
}

/// Shells whose `-c STRING` is a script of its own.
pub(super) const SHELLS: &[&str] = &["bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "fish", "rbash"];

/// Removes wrappers from `words` and returns the pieces to judge.
pub(super) fn unwrap(words: Vec<Word>) -> Vec<Piece> {
    let mut pieces = Vec::new();
    unwrap_into(words, Vec::new(), false, &mut pieces, 0);
    pieces
}

fn unwrap_into(
    mut words: Vec<Word>,
    mut wrappers: Vec<String>,
    mut runtime_args: bool,
    pieces: &mut Vec<Piece>,
    depth: usize,
) {
    let mut assignments = Vec::new();
    let mut guard = 0;
    loop {
        guard += 1;
        if guard > 64 || depth > super::MAX_DEPTH {
            pieces.push(Piece::Unknown("wrappers nest too deeply".into()));
            return;
        }
        let Some(first) = words.first() else {
            pieces.push(Piece::Command { words, wrappers, runtime_args, assignments });
            return;
        };
        if first.dynamic {
            pieces
                .push(Piece::Unknown(format!("the program name `{}` is only known at run time", first.text)));
            return;
        }
        let program = first.text.rsplit('/').next().unwrap_or(&first.text).to_string();
        let owned: Vec<String> = words.iter().skip(1).map(|w| w.text.clone()).collect();
        let args: Vec<&str> = owned.iter().map(String::as_str).collect();
        let skip = match program.as_str() {
            "env" => match env_skip(&args, &mut assignments) {
                Ok(skip) => skip,
                Err(reason) => {
                    pieces.push(Piece::Unknown(reason));
                    return;
                }
            },
            // `command -v NAME` only prints; a `-v` after the command name is that command's.
            "command" if args.iter().take_while(|a| a.starts_with('-')).any(|a| a.contains(['v', 'V'])) => {
                None
            }
            "command" => Some(options(&args, &[], |a| a == "-p")),
            "builtin" | "nohup" | "setsid" => Some(options(&args, &[], |a| a.starts_with('-'))),
            "time" => Some(options(&args, &[], |a| a == "-p")),
            "exec" => Some(options(&args, &["-a"], |a| a == "-c" || a == "-l")),
            "nice" => Some(options(&args, &["-n", "--adjustment"], |a| {
                a.starts_with("--adjustment") || (a.starts_with('-') && a[1..].parse::<i32>().is_ok())
            })),
            "ionice" => Some(options(
                &args,
                &["-c", "-n", "-p", "-P", "-u", "--class", "--classdata", "--pid", "--pgid", "--uid"],
                |a| a == "-t" || a == "--ignore",
            )),
            "timeout" => {
                let opts = options(&args, &["-s", "-k", "--signal", "--kill-after"], |a| {
                    a.starts_with("--") || (a.starts_with('-') && a.len() > 1)
                });
                // Then the duration.
                Some(opts + 1)
            }
            "stdbuf" => Some(options(&args, &["-i", "-o", "-e", "--input", "--output", "--error"], |a| {
                a.starts_with('-') && a.len() > 2
            })),
            "sudo" | "doas" => Some(options(
                &args,
                &["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "-R"],
                |a| a.starts_with('-'),
            )),
            "xargs" => {
                runtime_args = true;
                let skip = options(
                    &args,
                    &[
                        "-a",
                        "-d",
                        "-E",
                        "-I",
                        "-L",
                        "-n",
                        "-P",
                        "-s",
                        "--arg-file",
                        "--delimiter",
                        "--max-args",
                        "--max-lines",
                        "--max-chars",
                        "--max-procs",
                        "--process-slot-var",
                    ],
                    |a| a.starts_with('-'),
                );
                if skip >= args.len() {
                    // `xargs` alone runs `echo`.
                    words.truncate(1);
                    words.push(Word::literal("echo"));
                }
                Some(skip)
            }
            "eval" => {
                let mut script = Word::literal("");
                for (i, word) in words.iter().skip(1).enumerate() {
                    if i > 0 {
                        script.text.push(' ');
                    }
                    script.text.push_str(&word.text);
                    script.dynamic |= word.dynamic;
                }
                pieces.push(Piece::Script(script));
                return;
            }
            shell if SHELLS.contains(&shell) => {
                match shell_script(&words) {
                    ShellRuns::Script(script) => pieces.push(Piece::Script(script)),
                    ShellRuns::Missing => {
                        pieces.push(Piece::Unknown(format!("`{shell} -c` without a command string")))
                    }
                    ShellRuns::FileOrStdin => {
                        pieces.push(Piece::Command { words, wrappers, runtime_args, assignments })
                    }
                }
                return;
            }
            "find" => {
                find_exec(&words, &wrappers, pieces, depth);
                None
            }
            _ => None,
        };
        match skip {
            // The wrapper runs nothing else (`env` alone prints the environment, `sudo -l`, …).
            Some(skip) if skip < args.len() => {
                wrappers.push(program);
                words.drain(..=skip);
            }
            Some(_) | None => {
                pieces.push(Piece::Command { words, wrappers, runtime_args, assignments });
                return;
            }
        }
    }
}

/// The number of leading option words in `args` (those for which `is_flag` holds, plus the value
/// of each option in `with_value` given as a separate word), stopping after `--`.
fn options(args: &[&str], with_value: &[&str], is_flag: impl Fn(&str) -> bool) -> usize {
    let mut i = 0;
    while i < args.len() {
        let arg = args[i];
        if arg == "--" {
            return i + 1;
        }
        if with_value.contains(&arg) {
            i += 2;
        } else if is_flag(arg) {
            i += 1;
        } else {
            break;
        }
    }
    i
}

/// `env [-i] [-u NAME] [-C DIR] [NAME=value]… COMMAND…`: how many words precede the command.
fn env_skip(args: &[&str], assignments: &mut Vec<String>) -> Result<Option<usize>, String> {
    let mut i = 0;
    while i < args.len() {
        let arg = args[i];
        if arg == "--" {
            i += 1;
            break;
        }
        // `-S`, also in a cluster (`-iS'cmd'`) or abbreviated (`--split=cmd`).
        if short_cluster(arg, 'S', "uC") || long_abbrev(arg, "split-string", 1) {
            return Err("`env -S` splits a string into a command line".into());
        }
        // `-u NAME`/`-C DIR`, also at the end of a cluster (`-iu NAME`).
        let value_follows = !arg.starts_with("--")
            && arg.len() > 1
            && arg[1..].find(['u', 'C']).is_some_and(|at| at + 2 == arg.len());
        if value_follows || arg == "--unset" || arg == "--chdir" {
            i += 2;
        } else if arg.starts_with('-') {
            i += 1;
        } else if let Some((name, _)) = arg.split_once('=').filter(|(name, _)| is_name(name)) {
            assignments.push(name.to_string());
            i += 1;
        } else {
            break;
        }
    }
    Ok(Some(i))
}

/// Whether `name` is a shell variable name.
pub(super) fn is_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

enum ShellRuns {
    Script(Word),
    Missing,
    FileOrStdin,
}

/// What `bash …` runs: the string of `-c` (also within combined flags such as `-lc`), or a script
/// file or its standard input.
fn shell_script(words: &[Word]) -> ShellRuns {
    let mut i = 1;
    let mut has_c = false;
    while i < words.len() {
        let arg = words[i].text.as_str();
        if words[i].dynamic || !(arg.starts_with('-') || arg.starts_with('+')) || arg == "-" {
            break;
        }
        if arg == "--" {
            i += 1;
            break;
        }
        if arg == "-o"
            || arg == "+o"
            || arg == "-O"
            || arg == "+O"
            || arg == "--rcfile"
            || arg == "--init-file"
        {
            i += 2;
            continue;
        }
        if !arg.starts_with("--") && arg[1..].contains('c') {
            has_c = true;
        }
        i += 1;
    }
    match (has_c, words.get(i)) {
        (true, Some(script)) => ShellRuns::Script(script.clone()),
        (true, None) => ShellRuns::Missing,
        (false, _) => ShellRuns::FileOrStdin,
    }
}

/// The commands that `find … -exec CMD {} ;` (also `-execdir`, `-ok`, `-okdir`) runs.
fn find_exec(words: &[Word], wrappers: &[String], pieces: &mut Vec<Piece>, depth: usize) {
    let mut i = 1;
    while i < words.len() {
        let arg = words[i].text.as_str();
        i += 1;
        if !matches!(arg, "-exec" | "-execdir" | "-ok" | "-okdir") {
            continue;
        }
        let start = i;
        while i < words.len() && !matches!(words[i].text.as_str(), ";" | "+") {
            i += 1;
        }
        let inner: Vec<Word> = words[start..i].to_vec();
        i += 1;
        if inner.is_empty() {
            continue;
        }
        let mut inner_wrappers = wrappers.to_vec();
        inner_wrappers.push(format!("find {arg}"));
        unwrap_into(inner, inner_wrappers, true, pieces, depth + 1);
    }
}
