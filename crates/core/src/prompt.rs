//! The system prompt (FEATURES.md §F): a static core kept byte-identical across turns and sessions
//! (so provider prompt caches hit), then a dynamic block gathered once per session: the environment
//! (cwd, OS, shell, date, git state) and the project's instructions (`AGENTS.md` / `CLAUDE.md` from
//! the repository root down to the working directory, plus the user's global file).

use std::path::{Path, PathBuf};
use std::time::Duration;

use lathe_protocol::SystemBlock;
use tokio::process::Command;

/// The static core: identity and tool discipline. Never interpolated, so it is byte-stable.
pub const STATIC_CORE: &str = "\
You are Lathe, a coding agent working in the user's repository from their terminal. You read code, \
edit files and run commands with the tools provided until the user's task is done, then reply with a \
short, plain summary of what you did and what you verified.

# How to work
- Understand before changing: read the relevant files (read_file, grep, glob, list_dir) first.
- Read a file before editing it. Prefer edit_file with a small, unique old_string over rewriting a \
file with write_file; use write_file for new files or complete rewrites.
- Use the dedicated tools to read and search; use shell for builds, tests, git and other commands, \
not for cat/grep/find/sed.
- Independent read-only calls may be issued together in one response; they run in parallel.
- After changing code, run the relevant tests or checks when they exist, and fix what you broke.
- Keep changes minimal and in the style of the surrounding code. Do not add unrelated refactors.
- Tool results may be truncated; follow the hints they give (offset/limit, the spill file path).
- If a tool call fails, read the error and adjust; do not repeat the same failing call.
- Never invent file contents, command output or test results. Say plainly what you could not do.
- Ask the user only when the task is ambiguous in a way you cannot resolve by reading the code.
";

/// Largest instructions text included, in bytes; beyond it the text is cut with a visible warning.
pub const MAX_INSTRUCTIONS_BYTES: usize = 40 * 1024;

/// Instruction file names read in every directory from the repository root down to the cwd.
const INSTRUCTION_FILES: [&str; 4] = ["AGENTS.md", "CLAUDE.md", "AGENTS.local.md", "CLAUDE.local.md"];

/// Builds the system blocks for a session in `cwd`: `[static core (cache breakpoint), environment +
/// instructions]`, plus any warnings (e.g. instructions cut at the size cap).
pub async fn system_blocks(cwd: &Path, home: &Path) -> (Vec<SystemBlock>, Vec<String>) {
    let mut warnings = Vec::new();
    let mut dynamic = environment_block(cwd).await;
    let instructions = instructions(cwd, home, &mut warnings);
    if !instructions.is_empty() {
        dynamic.push_str("\n# Project instructions\n");
        dynamic.push_str(&instructions);
    }
    let blocks = vec![
        SystemBlock { text: STATIC_CORE.to_string(), cache_breakpoint: true },
        SystemBlock { text: dynamic, cache_breakpoint: false },
    ];
    (blocks, warnings)
}

/// The environment block: cwd, OS, shell, date and git state (each git command limited to 3 s).
pub async fn environment_block(cwd: &Path) -> String {
    let shell = std::env::var("SHELL").unwrap_or_else(|_| "/bin/sh".into());
    let date = chrono::Local::now().format("%Y-%m-%d");
    let mut text = format!(
        "# Environment\nWorking directory: {}\nPlatform: {} {}\nShell: {shell}\nToday's date: {date}\n",
        cwd.display(),
        std::env::consts::OS,
        std::env::consts::ARCH,
    );
    // Outside a repository, spawning git would only cost start-up time.
    if repo_root(cwd).is_none() {
        text.push_str("Git: not a repository\n");
        return text;
    }
    // `status --branch` gives the branch and the changes in one process; the log runs beside it.
    let (status, log) = tokio::join!(
        git(cwd, &["status", "--porcelain=v1", "--branch", "--untracked-files=normal"]),
        git(cwd, &["log", "--oneline", "-n", "5"]),
    );
    let Some(status) = status else {
        text.push_str("Git: not a repository\n");
        return text;
    };
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

/// The nearest ancestor of `cwd` (itself included) that holds `.git`.
fn repo_root(cwd: &Path) -> Option<&Path> {
    cwd.ancestors().find(|dir| dir.join(".git").exists())
}

async fn git(cwd: &Path, args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .args(args)
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(Duration::from_secs(3), output).await.ok()?.ok()?;
    output.status.success().then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The instruction files that apply to `cwd`, outermost first: the user's global `AGENTS.md` in
/// Lathe's home, then each directory from the repository root (the nearest ancestor with `.git`, or
/// `cwd` itself) down to `cwd`.
pub fn instruction_files(cwd: &Path, home: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let global = home.join("AGENTS.md");
    if global.is_file() {
        files.push(global);
    }
    let root = repo_root(cwd).unwrap_or(cwd);
    let mut chain: Vec<&Path> = cwd.ancestors().take_while(|dir| dir.starts_with(root)).collect();
    chain.reverse();
    for dir in chain {
        for name in INSTRUCTION_FILES {
            let path = dir.join(name);
            if path.is_file() {
                files.push(path);
            }
        }
    }
    files
}

fn instructions(cwd: &Path, home: &Path, warnings: &mut Vec<String>) -> String {
    let mut text = String::new();
    for path in instruction_files(cwd, home) {
        let Ok(content) = std::fs::read_to_string(&path) else {
            warnings.push(format!("could not read instructions file {}", path.display()));
            continue;
        };
        text.push_str(&format!("\n## From {}\n{}\n", path.display(), content.trim_end()));
    }
    if text.len() > MAX_INSTRUCTIONS_BYTES {
        let mut cut = MAX_INSTRUCTIONS_BYTES;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("\n[instructions cut at the size limit]\n");
        warnings.push(format!(
            "project instructions exceed {} KiB and were cut; shorten AGENTS.md/CLAUDE.md",
            MAX_INSTRUCTIONS_BYTES / 1024
        ));
    }
    text
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn instructions_walk_from_repo_root_to_cwd() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        let sub = root.join("pkg/inner");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(dir.path().join("AGENTS.md"), "outside the repo").unwrap();
        std::fs::write(root.join("AGENTS.md"), "root rules").unwrap();
        std::fs::write(root.join("pkg/CLAUDE.md"), "pkg rules").unwrap();
        let home = dir.path().join("home");
        let files = instruction_files(&sub, &home);
        assert_eq!(files, vec![root.join("AGENTS.md"), root.join("pkg/CLAUDE.md")]);
        let mut warnings = Vec::new();
        let text = instructions(&sub, &home, &mut warnings);
        assert!(text.find("root rules").unwrap() < text.find("pkg rules").unwrap());
        assert!(!text.contains("outside the repo"));
    }

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
        let text = environment_block(dir.path()).await;
        assert!(text.contains("Git branch: trunk\n"), "{text}");
        assert!(text.contains("?? b.txt"), "{text}");
        assert!(text.contains("first commit"), "{text}");
        let outside = tempfile::tempdir().unwrap();
        assert!(environment_block(outside.path()).await.contains("Git: not a repository"));
    }

    #[tokio::test]
    async fn static_core_is_the_first_block_and_stable() {
        let dir = tempfile::tempdir().unwrap();
        let (a, _) = system_blocks(dir.path(), dir.path()).await;
        let (b, _) = system_blocks(dir.path(), dir.path()).await;
        assert_eq!(a[0], b[0]);
        assert!(a[0].cache_breakpoint);
        assert!(a[1].text.contains("Working directory"));
    }
}
