//! Which `shell` command lines run tests, and which build: plain word matching, no shell parsing.
//!
//! A line is cut into simple commands at `;`, `|`, `&`, parentheses, backquotes and newlines
//! (`cd app && pytest -q` holds `pytest -q`). In each, leading variable assignments (`CI=1`) and
//! wrappers (`env`, `sudo`, `time`, `timeout 60`, `npx`, `uv run`, `poetry run`, `bundle exec`,
//! `bash -c '…'`) are skipped; the program and its subcommand decide.

/// Programs that run tests whatever their arguments.
const TEST_PROGRAMS: &[&str] =
    &["pytest", "py.test", "jest", "vitest", "mocha", "rspec", "ctest", "tox", "nox"];

/// Wrappers that run the rest of the line as a command (their own flags skipped).
const WRAPPERS: &[&str] =
    &["env", "sudo", "time", "nice", "nohup", "command", "exec", "xvfb-run", "stdbuf", "npx", "bunx", "pnpx"];

/// Python project tools whose `run` runs the rest of the line.
const RUNNERS: &[&str] = &["uv", "poetry", "pipenv", "pdm", "hatch", "rye"];

/// Whether `command` runs tests: `pytest`, `python3 -m pytest`, `python3 -m unittest`, `cargo
/// test`, `npm test`, `npm run test`, `yarn test`, `pnpm test`, `go test`, `make test`, `make
/// check`, `jest`, `vitest`, `mocha`, `rspec`, `ctest`, `tox`, `nox`.
pub fn is_test_command(command: &str) -> bool {
    simple_commands(command).iter().any(|words| runs_tests(program(words)))
}

/// Whether `command` builds (or type-checks) code: `cargo build`, `cargo check`, `go build`, `npm
/// run build`, `make`, `tsc`, a C or Java compiler, `cmake --build`, `mvn compile`…
pub(crate) fn is_build_command(command: &str) -> bool {
    simple_commands(command).iter().any(|words| builds(program(words)))
}

/// The words of each simple command of `line`, quotes removed.
fn simple_commands(line: &str) -> Vec<Vec<&str>> {
    line.split([';', '|', '&', '(', ')', '`', '\n'])
        .map(|piece| {
            piece
                .split_whitespace()
                .map(|word| word.trim_matches(['"', '\'']))
                .filter(|w| !w.is_empty())
                .collect()
        })
        .filter(|words: &Vec<&str>| !words.is_empty())
        .collect()
}

/// `words` from the program on: assignments and wrappers skipped.
fn program<'a, 'w>(mut words: &'a [&'w str]) -> &'a [&'w str] {
    loop {
        let Some((first, rest)) = words.split_first() else { return words };
        let name = basename(first);
        words = if first.contains('=') && !first.starts_with('-') {
            rest
        } else if WRAPPERS.contains(&name) {
            skip_flags(rest)
        } else if name == "timeout" {
            let rest = skip_flags(rest);
            rest.get(1..).unwrap_or_default()
        } else if (RUNNERS.contains(&name) && rest.first() == Some(&"run"))
            || (name == "bundle" && rest.first() == Some(&"exec"))
        {
            skip_flags(&rest[1..])
        } else {
            return words;
        };
    }
}

/// Whether the simple command `words` (from its program on) runs tests.
fn runs_tests(words: &[&str]) -> bool {
    let Some((first, rest)) = words.split_first() else { return false };
    let name = basename(first);
    let sub = subcommand(rest);
    match name {
        _ if TEST_PROGRAMS.contains(&name) => true,
        _ if is_python(name) => {
            python_module(rest).is_some_and(|module| module == "pytest" || module == "unittest")
        }
        "cargo" => matches!(sub, Some("test" | "nextest")),
        "go" => sub == Some("test"),
        "make" | "gmake" => rest.iter().any(|word| matches!(*word, "test" | "tests" | "check")),
        "npm" | "yarn" | "pnpm" | "bun" => match sub {
            Some("test" | "t") => true,
            Some("run" | "run-script") => script(rest).is_some_and(|script| script.starts_with("test")),
            Some("exec" | "x" | "dlx") => runs_tests(after_subcommand(rest)),
            // `yarn jest`, `pnpm vitest`: the package manager runs a binary.
            Some(_) if name != "npm" => runs_tests(skip_flags(rest)),
            _ => false,
        },
        "bash" | "sh" | "zsh" => shell_script(rest).is_some_and(|script| is_test_command(&script)),
        _ => false,
    }
}

/// Whether the simple command `words` (from its program on) builds code.
fn builds(words: &[&str]) -> bool {
    let Some((first, rest)) = words.split_first() else { return false };
    let name = basename(first);
    let sub = subcommand(rest);
    match name {
        "make" | "gmake" | "ninja" | "tsc" | "gcc" | "g++" | "cc" | "c++" | "clang" | "clang++" | "javac" => {
            true
        }
        "cargo" => matches!(sub, Some("build" | "b" | "check" | "c" | "clippy")),
        "go" | "swift" | "zig" | "dotnet" => matches!(sub, Some("build" | "vet")),
        "npm" | "yarn" | "pnpm" | "bun" => match sub {
            Some("build") => true,
            Some("run" | "run-script") => script(rest).is_some_and(|script| script.starts_with("build")),
            _ => false,
        },
        "cmake" => rest.contains(&"--build"),
        "mvn" | "gradle" | "gradlew" => {
            rest.iter().any(|word| matches!(*word, "compile" | "package" | "build" | "assemble" | "install"))
        }
        _ if is_python(name) => {
            python_module(rest).is_some_and(|module| module == "py_compile" || module == "compileall")
        }
        "bash" | "sh" | "zsh" => shell_script(rest).is_some_and(|script| is_build_command(&script)),
        _ => false,
    }
}

fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

fn is_python(name: &str) -> bool {
    name == "py"
        || name
            .strip_prefix("python")
            .is_some_and(|version| version.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// The module of `python … -m MODULE`.
fn python_module<'w>(rest: &[&'w str]) -> Option<&'w str> {
    let at = rest.iter().position(|word| *word == "-m")?;
    rest.get(at + 1).copied()
}

/// The first argument that is not a flag (`+nightly` counts as one).
fn subcommand<'w>(rest: &[&'w str]) -> Option<&'w str> {
    skip_flags(rest).first().copied()
}

fn skip_flags<'a, 'w>(words: &'a [&'w str]) -> &'a [&'w str] {
    let at = words.iter().position(|word| !word.starts_with('-') && !word.starts_with('+'));
    at.map_or(&[], |at| &words[at..])
}

/// The words after the subcommand.
fn after_subcommand<'a, 'w>(rest: &'a [&'w str]) -> &'a [&'w str] {
    let rest = skip_flags(rest);
    skip_flags(rest.get(1..).unwrap_or_default())
}

/// The script name of `npm run SCRIPT`.
fn script<'w>(rest: &[&'w str]) -> Option<&'w str> {
    after_subcommand(rest).first().copied()
}

/// The script of `bash -c SCRIPT` (its words were split; they are joined back).
fn shell_script(rest: &[&str]) -> Option<String> {
    let at = rest.iter().position(|word| *word == "-c")?;
    let script = rest.get(at + 1..)?;
    (!script.is_empty()).then(|| script.join(" "))
}

#[cfg(test)]
#[path = "commands_tests.rs"]
mod tests;
