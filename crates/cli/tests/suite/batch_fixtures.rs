//! The task set of the `lathe batch` tests: small git repositories, each with a failing test
//! (`sh check.sh`: `answer.txt` must hold `42`) and a known fix (write `42` to `answer.txt`), and a
//! scripted `lathe-mock` per task that plays the agent:
//!
//! - solvable: the model writes `42` (the test passes in a fresh checkout with the patch);
//! - unsolvable: the model writes `43` (the patch is not empty, the test stays red);
//! - hanging: the model runs `sleep 600` (far past the task's `timeout_s`).
//!
//! Half of the tasks give their repository as a local path, half as a `file://` git URL; half
//! give `base` as the commit id, half as the branch `main`. Each task names its own mock in
//! `base_url`; provider and model come from the command line (`--provider anthropic --model
//! claude-sonnet-4-5`, see [`DEFAULT_FLAGS`]).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use lathe_mock::{MockServer, Mode, Script};
use serde_json::{Value, json};

/// The flags a batch over the fixture's tasks is given for the defaults the task lines leave out.
pub const DEFAULT_FLAGS: [&str; 4] = ["--provider", "anthropic", "--model", "claude-sonnet-4-5"];

/// Wall-clock limit of a hanging task, in seconds.
pub const HANG_TIMEOUT_S: u64 = 3;

/// What kind of task a fixture task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The scripted fix is right.
    Solvable,
    /// The scripted fix is wrong: the test stays red.
    Unsolvable,
    /// The agent's command sleeps past the task's time limit.
    Hanging,
}

/// One generated task: its line of the task file, its repository and its mock.
pub struct FixtureTask {
    pub id: String,
    pub kind: Kind,
    pub repo: PathBuf,
    pub base_sha: String,
    pub line: Value,
    pub server: MockServer,
    /// The scripted turns, in the order the mock serves them.
    pub turns: Vec<Value>,
}

/// A generated task set (the temp dir lives as long as this value).
pub struct Fixture {
    pub tmp: tempfile::TempDir,
    /// The task file (one JSON object a line).
    pub tasks_file: PathBuf,
    pub tasks: Vec<FixtureTask>,
}

/// Token and cost totals.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Usage {
    pub input: u64,
    pub cached: u64,
    pub output: u64,
    /// At claude-sonnet-4-5's prices (USD 3 / 15 / 0.30 per million input / output / cache-read).
    pub cost_usd: f64,
}

impl Fixture {
    /// Ids of the tasks of one kind.
    pub fn ids(&self, kind: Kind) -> BTreeSet<String> {
        self.tasks.iter().filter(|t| t.kind == kind).map(|t| t.id.clone()).collect()
    }

    /// Every id.
    pub fn all_ids(&self) -> BTreeSet<String> {
        self.tasks.iter().map(|t| t.id.clone()).collect()
    }

    /// What the mocks served, by their request logs: the scripted usage of every turn answered
    /// with HTTP 200, summed over all mocks.
    pub fn served_usage(&self) -> Usage {
        let mut usage = Usage::default();
        for task in &self.tasks {
            let served = task.server.requests().iter().filter(|r| r.status == 200).count();
            for turn in task.turns.iter().take(served) {
                let u = &turn["usage"];
                let (input, output, cached) = (
                    u["input_tokens"].as_u64().unwrap_or(0),
                    u["output_tokens"].as_u64().unwrap_or(0),
                    u["cache_read_input_tokens"].as_u64().unwrap_or(0),
                );
                usage.input += input;
                usage.output += output;
                usage.cached += cached;
                usage.cost_usd += (input as f64 * 3.0 + output as f64 * 15.0 + cached as f64 * 0.3) / 1e6;
            }
        }
        usage
    }

    /// Model requests the mocks received, over all tasks.
    pub fn requests(&self) -> usize {
        self.tasks.iter().map(|t| t.server.requests().len()).sum()
    }

    /// Writes a task file holding only `ids` (in fixture order); returns its path.
    pub fn subset(&self, name: &str, ids: &[&str]) -> PathBuf {
        let path = self.tmp.path().join(name);
        let text: String = self
            .tasks
            .iter()
            .filter(|t| ids.contains(&t.id.as_str()))
            .map(|t| format!("{}\n", t.line))
            .collect();
        std::fs::write(&path, text).expect("task file");
        path
    }
}

/// The kind of the `n`th task (1-based) of the 20: 1–15 solvable, 16–18 unsolvable, 19–20 hang.
pub fn kind_of(n: usize) -> Kind {
    match n {
        1..=15 => Kind::Solvable,
        16..=18 => Kind::Unsolvable,
        _ => Kind::Hanging,
    }
}

/// The acceptance's 20 tasks: 15 solvable, 3 unsolvable, 2 hanging.
pub async fn twenty_tasks() -> Fixture {
    tasks((1..=20).map(|n| (format!("t{n:02}"), kind_of(n))).collect()).await
}

/// A task set of the given ids and kinds.
pub async fn tasks(specs: Vec<(String, Kind)>) -> Fixture {
    let specs =
        specs.into_iter().enumerate().map(|(n, (id, kind))| (id, kind, turns_for(kind, n as u64))).collect();
    custom(specs).await
}

/// A task set of the given ids and kinds with their mocks' turns given (`kind` sets only the
/// time limit: [`HANG_TIMEOUT_S`] for [`Kind::Hanging`]).
pub async fn custom(specs: Vec<(String, Kind, Vec<Value>)>) -> Fixture {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().canonicalize().expect("canonical");
    let mut tasks = Vec::new();
    for (n, (id, kind, turns)) in specs.into_iter().enumerate() {
        let repo = root.join("repos").join(&id);
        let base_sha = make_repo(&repo, &id);
        let script = Script::from_json(&json!({ "turns": turns }).to_string()).expect("script");
        let server = MockServer::start(Mode::Scripted(script)).await.expect("mock");
        let repo_field =
            if n % 2 == 0 { repo.display().to_string() } else { format!("file://{}", repo.display()) };
        let base = if n % 2 == 0 { base_sha.clone() } else { "main".to_string() };
        let mut line = json!({
            "id": id, "repo": repo_field, "base": base,
            "prompt": "Make the test `sh check.sh` pass.", "test": "sh check.sh",
            "base_url": server.url(), "timeout_s": 60,
        });
        if kind == Kind::Hanging {
            line["timeout_s"] = json!(HANG_TIMEOUT_S);
        }
        tasks.push(FixtureTask { id, kind, repo, base_sha, line, server, turns });
    }
    let tasks_file = root.join("tasks.jsonl");
    let text: String = tasks.iter().map(|t| format!("{}\n", t.line)).collect();
    std::fs::write(&tasks_file, text).expect("tasks file");
    Fixture { tmp, tasks_file, tasks }
}

/// The scripted turns of a task of `kind`; usage numbers differ per task (`n`).
pub fn turns_for(kind: Kind, n: u64) -> Vec<Value> {
    let usage = |turn: u64| {
        json!({"input_tokens": 1000 + 10 * n + turn, "output_tokens": 50 + n + turn,
               "cache_read_input_tokens": 200 + n})
    };
    let first = match kind {
        Kind::Solvable => json!({"id": "call_1", "name": "write_file",
                                 "arguments": {"path": "answer.txt", "content": "42\n"}}),
        Kind::Unsolvable => json!({"id": "call_1", "name": "write_file",
                                   "arguments": {"path": "answer.txt", "content": "43\n"}}),
        Kind::Hanging => json!({"id": "call_1", "name": "shell",
                                "arguments": {"command": "sleep 600", "timeout_ms": 600_000}}),
    };
    vec![
        json!({"tool_calls": [first], "usage": usage(1)}),
        json!({"text": "Done: answer.txt holds the answer.", "usage": usage(2)}),
    ]
}

/// A repository at `dir` on branch `main` with one commit: `check.sh` fails until `answer.txt`
/// holds 42. Returns the commit id.
pub fn make_repo(dir: &Path, id: &str) -> String {
    std::fs::create_dir_all(dir).expect("repo dir");
    git(dir, &["init", "-q", "-b", "main"]);
    std::fs::write(dir.join("check.sh"), "test \"$(cat answer.txt 2>/dev/null)\" = 42\n").expect("check");
    std::fs::write(dir.join("README.md"), format!("# {id}\n\nanswer.txt must hold the answer.\n"))
        .expect("readme");
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "a failing check"]);
    let out = Command::new("git").args(["rev-parse", "HEAD"]).current_dir(dir).output().expect("git");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// `git ARGS` in `dir` with a test identity; panics with git's stderr on failure.
pub fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// Whether `patch` applied to a fresh clone of `repo` at `base` makes `sh check.sh` pass.
pub fn patch_passes(repo: &Path, base: &str, patch: &str) -> bool {
    let tmp = tempfile::tempdir().expect("tempdir");
    let ws = tmp.path().join("ws");
    let clone = Command::new("git").args(["clone", "-q"]).arg(repo).arg(&ws).output().expect("git clone");
    assert!(clone.status.success(), "{}", String::from_utf8_lossy(&clone.stderr));
    git(&ws, &["checkout", "-q", "--detach", base]);
    std::fs::write(tmp.path().join("p.diff"), patch).expect("patch");
    let apply = Command::new("git")
        .args(["apply", "--whitespace=nowarn"])
        .arg(tmp.path().join("p.diff"))
        .current_dir(&ws)
        .output()
        .expect("git apply");
    if !apply.status.success() {
        return false;
    }
    Command::new("sh").arg("check.sh").current_dir(&ws).status().expect("sh").success()
}
