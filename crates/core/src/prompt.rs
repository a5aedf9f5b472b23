//! The system prompt (FEATURES.md §F): a static core kept byte-identical across turns and sessions
//! (so provider prompt caches hit), then a block gathered once per session: the stable environment
//! (cwd, OS, shell, date) and the instructions ([`crate::instructions`]). Both stay byte-identical
//! for every session started in one directory on one day while the instruction files are unchanged.
//! The repository's state (branch, changes, recent commits), which changes from one session to the
//! next, is not in the system prompt: [`RepositoryState`] gathers it in the background from the
//! session's start, and it goes to the model once, before the first user message (print mode sends
//! its first request without waiting for git: there it follows the first response).
//! For the embedded local model the host moves the environment and instructions block there too, at
//! the front of that message, in a new session: its system turn is then byte-identical in every
//! directory and on every day, and its KV state is reused from disk (`lathe-local`'s prompt cache).

use std::path::{Path, PathBuf};
use std::time::Duration;

use lathe_protocol::SystemBlock;
use tokio::process::Command;

use crate::instructions::{self, RuleSet, Sources};

/// The static core: identity and tool discipline. Never interpolated, so it is byte-stable.
pub const STATIC_CORE: &str = "\
You are Lathe, a coding agent working in the user's repository from their terminal. You read code, \
edit files and run commands with the tools until the user's task is done, then reply with a short, \
plain summary of what you did and what you verified.

# How to work
- Read the relevant files before changing them.
- Prefer edit_file with a small, unique old_string; write_file is for new files or complete rewrites.
- Use shell for builds, tests, git and other commands, not for cat/grep/find/sed.
- Independent read-only calls may go together in one response; they run in parallel.
- After changing code, run the relevant tests or checks and fix what you broke.
- Keep changes minimal and in the style of the surrounding code; no unrelated refactors.
- Truncated results say how to see the rest.
- If a call fails, read the error and adjust; do not repeat the same failing call.
- Never invent file contents, command output or test results. Say plainly what you could not do.
- Ask the user only when the task is ambiguous in a way the code cannot resolve.
";

/// The static core for the embedded local model (a 0.5B–1.5B model with an 8 192-token window):
/// short, one call per step, and one worked example of the read → edit → answer path, which small
/// models follow far more reliably than rules. The `answer` tool is the local provider's.
pub const LOCAL_CORE: &str = "\
You are Lathe, a coding agent in the user's project. Work step by step: make one tool call, read its \
result, then make the next call. When the task is done or you know the answer, call answer.

Rules:
- To change a file, first read it with read_file. Then call edit_file: old_string is one or more whole \
lines copied exactly from the file (without the line numbers), new_string is what replaces them. To add \
lines, old_string is a line next to where they go and new_string is that line plus the new ones. Use \
write_file only to create a new file.
- Use shell to run programs and tests (python3 test_x.py) and to search (grep -rn name .).
- Only change what the task asks for. Never delete code the task does not mention.
- Your answer states what was asked: the line, the number, the file name, or the change you made.

Example, from a made-up project (zz_sample.py is not in the user's project; never copy this example's \
names or words into an answer). User: In zz_sample.py, the word Qwirk should be Quirk.
<tool_call>
{\"name\": \"read_file\", \"arguments\": {\"path\": \"zz_sample.py\"}}
</tool_call>
Result:      1\tprint(\"Qwirk mode\")
<tool_call>
{\"name\": \"edit_file\", \"arguments\": {\"path\": \"zz_sample.py\", \"old_string\": \"print(\\\"Qwirk mode\\\")\", \"new_string\": \"print(\\\"Quirk mode\\\")\"}}
</tool_call>
<tool_call>
{\"name\": \"shell\", \"arguments\": {\"command\": \"python3 zz_sample.py\"}}
</tool_call>
Result: Quirk mode
<tool_call>
{\"name\": \"answer\", \"arguments\": {\"answer\": \"zz_sample.py line 1 now says Quirk; running it printed Quirk mode.\"}}
</tool_call>
";

/// Words of [`LOCAL_CORE`]'s worked example that no answer about a user's project has (unless the
/// user's prompt has them): an answer with one of them copies the example instead of reporting the
/// run, and verify-before-claiming (`crate::agent`) sends it back.
pub const LOCAL_EXAMPLE_WORDS: [&str; 3] = ["zz_sample", "qwirk", "quirk mode"];

/// The tools the local model is not offered: a short set keeps the system turn small in its
/// 8 192-token window (`glob` and `list_dir` are covered by `shell` and `grep`, a small task needs no
/// todo list, a sub-agent would share the same small model, background jobs are more than a small
/// model follows (its `shell` runs in the foreground only), a small model asks the user instead of
/// looking, and a web page would fill the window and is no source a 1.5B model weighs well). It
/// keeps `read_file`, `write_file`, `edit_file`, `grep`, `shell`, and any MCP tool or skill the
/// user configured.
pub const LOCAL_DROPPED_TOOLS: [&str; 10] = [
    "glob",
    "list_dir",
    "shell_output",
    "shell_kill",
    "todo_write",
    "task",
    "task_output",
    "task_kill",
    "ask_user",
    "web_fetch",
];

/// The prompt of a session, gathered once when it starts.
#[derive(Debug, Clone, Default)]
pub struct Prompt {
    /// `[static core (cache breakpoint), environment + instructions]`: byte-identical for every
    /// session started in the same directory on the same day with the same instruction files.
    pub system: Vec<SystemBlock>,
    /// Path-scoped rules, loaded when a matching file is read.
    pub rules: RuleSet,
    /// Warnings to show (skipped instruction files, broken imports, what the size cap cut).
    pub warnings: Vec<String>,
}

/// Gathers the prompt for a session in `sources.cwd` (the repository's state is
/// [`RepositoryState`]'s).
pub async fn prepare(sources: &Sources) -> Prompt {
    let cwd = sources.cwd.clone();
    let instructions = tokio::task::spawn_blocking({
        let sources = sources.clone();
        move || instructions::gather(&sources)
    })
    .await
    .unwrap_or_default();
    let mut dynamic = environment_block(&cwd);
    if !instructions.text.is_empty() {
        dynamic.push_str(crate::context::fixed::INSTRUCTIONS_HEADING);
        dynamic.push_str(&instructions.text);
    }
    Prompt {
        system: vec![
            SystemBlock { text: STATIC_CORE.to_string(), cache_breakpoint: true },
            SystemBlock { text: dynamic, cache_breakpoint: false },
        ],
        rules: instructions.rules,
        warnings: instructions.warnings,
    }
}

/// The stable environment: cwd, OS, shell and date.
pub fn environment_block(cwd: &Path) -> String {
    let shell = std::env::var("SHELL").unwrap_or_else(|_| "/bin/sh".into());
    let date = chrono::Local::now().format("%Y-%m-%d");
    format!(
        "# Environment\nWorking directory: {}\nPlatform: {} {}\nShell: {shell}\nToday's date: {date}\n",
        cwd.display(),
        std::env::consts::OS,
        std::env::consts::ARCH,
    )
}

/// The repository's state at a session's start ([`git_block`]), gathered by a task that begins when
/// it is created and is aborted (its git processes killed) when this is dropped unread.
#[derive(Debug)]
pub struct RepositoryState(tokio::task::JoinHandle<String>);

impl RepositoryState {
    /// Starts gathering the state of the repository around `cwd` (nothing outside one).
    pub fn gather(cwd: PathBuf) -> RepositoryState {
        RepositoryState(tokio::spawn(async move { git_block(&cwd).await }))
    }

    /// The state's text, waiting for git if it has not finished (at most 3 s per command); empty
    /// outside a repository or when git failed.
    pub async fn text(mut self) -> String {
        (&mut self.0).await.unwrap_or_default()
    }
}

impl Drop for RepositoryState {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The repository's state when the session starts: branch, changes and recent commits (each git
/// command limited to 3 s).
pub async fn git_block(cwd: &Path) -> String {
    // Outside a repository there is nothing to say, and spawning git would only cost start-up time.
    let Some(root) = repo_root(cwd) else { return String::new() };
    let mut text = String::from("# Repository state at the start of this session\n");
    // `git status` runs the clean filter of a changed file; a filter defined in the repository's own
    // config may have been written there by a command (`git init` in a workspace that was none).
    if defines_filters(root) {
        let log = git(cwd, &["log", "--oneline", "-n", "5"]).await.unwrap_or_default();
        text.push_str(
            "Git status: not shown (the repository's own config defines filter drivers or includes \
                       other config, which git status would run)\n",
        );
        if !log.trim().is_empty() {
            text.push_str("Recent commits:\n");
            for line in log.lines() {
                text.push_str(&format!("  {line}\n"));
            }
        }
        return text;
    }
    // `status --branch` gives the branch and the changes in one process; the log runs beside it.
    let (status, log) = tokio::join!(
        git(cwd, &["status", "--porcelain=v1", "--branch", "--untracked-files=normal"]),
        git(cwd, &["log", "--oneline", "-n", "5"]),
    );
    let Some(status) = status else { return String::new() };
    let mut lines = status.lines();
    let branch = lines
        .next()
        .and_then(|header| header.strip_prefix("## "))
        .map(|header| header.split("...").next().unwrap_or(header).trim_start_matches("No commits yet on "))
        .unwrap_or("(unknown)");
    text.push_str(&format!("Git branch: {branch}\n"));
    let changes: Vec<&str> = lines.collect();
    if changes.is_empty() {
        text.push_str("Git status: clean\n");
    } else {
        text.push_str("Git status:\n");
        for line in changes.iter().take(20) {
            text.push_str(&format!("  {line}\n"));
        }
        if changes.len() > 20 {
            text.push_str(&format!("  … and {} more\n", changes.len() - 20));
        }
    }
    if let Some(log) = log.filter(|log| !log.trim().is_empty()) {
        text.push_str("Recent commits:\n");
        for line in log.lines() {
            text.push_str(&format!("  {line}\n"));
        }
    }
    text
}

use lathe_policy::sandbox::{GitDirs, SAFE_GIT_ARGS, SAFE_GIT_ENV, git_dirs};

use crate::instructions::repo_root;

/// Whether the repository at `root` has a `[filter …]` section, an include or a partial clone's
/// promisor remote (whose lazy fetch runs `uploadpack`) in its own config
/// (its git dir's, or for a linked worktree the common dir's and its own `config.worktree`).
fn defines_filters(root: &Path) -> bool {
    let Some(GitDirs { git_dir, common }) = git_dirs(&root.join(".git")) else { return false };
    // Whitespace, case and a byte-order mark do not matter to git's parser, nor here; a section
    // header may follow another on one line. A false alarm only leaves the status out.
    [common.join("config"), git_dir.join("config.worktree")].iter().any(|file| {
        std::fs::read(file).is_ok_and(|bytes| {
            let text: String = String::from_utf8_lossy(&bytes)
                .chars()
                .filter(|c| !c.is_whitespace() && *c != '\u{feff}')
                .collect::<String>()
                .to_ascii_lowercase();
            ["[filter", "[include", "partialclone", "promisor"].iter().any(|sign| text.contains(sign))
        })
    })
}

/// Runs git for the environment block, outside the sandbox, in a workspace whose files a
/// sandboxed command may have written: with nothing that runs a program on the way
/// ([`SAFE_GIT_ARGS`], and no submodules, whose own configs would run theirs).
async fn git(cwd: &Path, args: &[&str]) -> Option<String> {
    let mut args: Vec<&str> = args.to_vec();
    if args.first() == Some(&"status") {
        args.insert(1, "--ignore-submodules=all");
    }
    let child = Command::new("git")
        .args(SAFE_GIT_ARGS)
        .envs(SAFE_GIT_ENV.iter().copied())
        .args(args)
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .ok()?;
    // It runs while the session starts and its first request goes out: it yields the CPU to them.
    if let Some(pid) = child.id() {
        lathe_process::lower_priority(pid);
    }
    let output = tokio::time::timeout(Duration::from_secs(3), child.wait_with_output()).await.ok()?.ok()?;
    output.status.success().then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn environment_names_the_branch_and_the_changes() {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let status = std::process::Command::new("git")
                .args(args)
                .current_dir(dir.path())
                .env("GIT_AUTHOR_NAME", "t")
                .env("GIT_AUTHOR_EMAIL", "t@t")
                .env("GIT_COMMITTER_NAME", "t")
                .env("GIT_COMMITTER_EMAIL", "t@t")
                .status()
                .unwrap();
            assert!(status.success());
        };
        git(&["init", "-q", "-b", "trunk"]);
        std::fs::write(dir.path().join("a.txt"), "a").unwrap();
        git(&["add", "-A"]);
        git(&["commit", "-qm", "first commit"]);
        std::fs::write(dir.path().join("b.txt"), "b").unwrap();
        let text = git_block(dir.path()).await;
        assert!(text.contains("Git branch: trunk\n"), "{text}");
        assert!(text.contains("?? b.txt"), "{text}");
        assert!(text.contains("first commit"), "{text}");
        let outside = tempfile::tempdir().unwrap();
        assert_eq!(git_block(outside.path()).await, "");
    }

    fn sources(cwd: &Path, home: &Path) -> Sources {
        Sources {
            cwd: cwd.to_path_buf(),
            lathe_home: home.join(".lathe"),
            user_home: Some(home.to_path_buf()),
            max_bytes: crate::instructions::DEFAULT_MAX_BYTES,
        }
    }

    #[tokio::test]
    async fn the_system_prompt_is_byte_identical_across_sessions_in_one_directory_while_the_repository_changes()
     {
        let dir = tempfile::tempdir().unwrap();
        let (repo, home) = (dir.path().join("repo"), dir.path().join("home"));
        std::fs::create_dir_all(&repo).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let git = |args: &[&str]| {
            let status = std::process::Command::new("git")
                .args(args)
                .current_dir(&repo)
                .env("GIT_AUTHOR_NAME", "t")
                .env("GIT_AUTHOR_EMAIL", "t@t")
                .env("GIT_COMMITTER_NAME", "t")
                .env("GIT_COMMITTER_EMAIL", "t@t")
                .status()
                .unwrap();
            assert!(status.success());
        };
        git(&["init", "-q", "-b", "main"]);
        std::fs::write(repo.join("AGENTS.md"), "Run the tests.").unwrap();
        git(&["add", "-A"]);
        git(&["commit", "-qm", "first"]);
        let first = prepare(&sources(&repo, &home)).await;
        let first_state = RepositoryState::gather(repo.clone()).text().await;
        // The previous session edited files and committed: the repository state differs.
        std::fs::write(repo.join("new.rs"), "fn main() {}").unwrap();
        git(&["add", "-A"]);
        git(&["commit", "-qm", "second"]);
        std::fs::write(repo.join("dirty.txt"), "x").unwrap();
        let second = prepare(&sources(&repo, &home)).await;
        let second_state = RepositoryState::gather(repo.clone()).text().await;
        assert_eq!(first.system, second.system, "system blocks differ between sessions");
        assert!(first.system[0].cache_breakpoint && first.system[0].text == STATIC_CORE);
        assert!(first.system[1].text.contains("Run the tests."));
        assert!(!first.system[1].text.contains("first"), "no commit subjects in the system prompt");
        assert_ne!(first_state, second_state);
        assert!(second_state.contains("second") && second_state.contains("?? dirty.txt"));
    }
}
