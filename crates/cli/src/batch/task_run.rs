//! One task end to end (`lathe batch-task`): a fresh clone at `base`, the agent as `lathe -p …
//! --output-format stream-json` in it (sandbox on, memory read-only, its own session and process
//! group, killed at the wall-clock limit and when this process dies), the patch against `base`,
//! the test in a second fresh clone with only the patch applied, and the result row.
//!
//! Files under `OUT/tasks/<id>/`: `agent.jsonl` (the agent's stream-json), `agent.log` (its
//! stderr), `session.jsonl` (its session file), `patch.diff`, `test.log`.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use lathe_policy::sandbox::{NetworkAccess, Sandbox, SandboxMode};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

use super::tasks::Task;

/// How long a killed agent or test gets between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_secs(2);

/// A failure that leaves no row (the task's folder cannot be written).
#[derive(Debug, thiserror::Error)]
#[error("{what}: {source}")]
pub struct TaskError {
    what: String,
    source: std::io::Error,
}

fn io_err(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> TaskError {
    let what = what.into();
    move |source| TaskError { what, source }
}

/// The folder every task's scratch clones live under; hidden from each agent's commands except
/// its own workspace.
pub fn scratch_root() -> PathBuf {
    std::env::temp_dir().join("lathe-batch")
}

/// What the agent's stream said.
#[derive(Default)]
struct Stream {
    model: Option<String>,
    session_id: Option<String>,
    result: Option<Value>,
    input: u64,
    cached: u64,
    output: u64,
    cost: f64,
    turns: u64,
    tool_calls: u64,
}

impl Stream {
    fn take(&mut self, line: &Value) {
        let top = line.get("parent_tool_use_id").is_none();
        match line["type"].as_str() {
            Some("init") => {
                self.model = line["model"].as_str().map(str::to_string);
                self.session_id = line["session_id"].as_str().map(str::to_string);
            }
            Some("usage") if top => {
                self.input += line["input_tokens"].as_u64().unwrap_or(0);
                self.cached += line["cache_read_tokens"].as_u64().unwrap_or(0);
                self.output += line["output_tokens"].as_u64().unwrap_or(0);
                self.cost = line["total_cost_usd"].as_f64().unwrap_or(self.cost);
                self.turns += 1;
            }
            Some("tool_call") if top => self.tool_calls += 1,
            Some("result") => self.result = Some(line.clone()),
            _ => {}
        }
    }
}

/// Runs `task`, writing its files under `out/tasks/<id>/`, and returns its result row.
pub async fn run(task: &Task, out: &Path, attempt: u32, node: &str) -> Result<Value, TaskError> {
    let started = Instant::now();
    // Absolute: the test runs in another directory and reads the patch from here.
    let out = &std::path::absolute(out).map_err(io_err(format!("cannot resolve {}", out.display())))?;
    let dir = out.join("tasks").join(&task.id);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(io_err(format!("cannot clear {}", dir.display())))?;
    }
    std::fs::create_dir_all(&dir).map_err(io_err(format!("cannot create {}", dir.display())))?;
    let root = scratch_root();
    clear_stale(&root, &task.id);
    let scratch = root.join(format!("{}.{}.{attempt}", task.id, std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).map_err(io_err(format!("cannot create {}", scratch.display())))?;
    let mut row = json!({
        "id": task.id, "status": "error", "subtype": Value::Null, "turns": 0, "tool_calls": 0,
        "input_tokens": 0, "cached_tokens": 0, "output_tokens": 0, "cost_usd": 0.0,
        "agent_s": 0.0, "test_s": Value::Null, "patch_bytes": 0, "attempt": attempt, "node": node,
        "model": task.model,
    });
    let outcome = steps(task, out, &dir, &scratch, &root, &mut row).await;
    if let Err(message) = outcome {
        row["status"] = json!("error");
        if row["subtype"].is_null() {
            row["subtype"] = json!("error_workspace");
        }
        row["error"] = json!(message);
    }
    let _ = std::fs::remove_dir_all(&scratch);
    row["wall_s"] = json!(started.elapsed().as_secs_f64());
    Ok(row)
}

/// Removes the scratch folders `<id>.<pid>.<attempt>` of this task left by a `batch-task` that
/// no longer runs (one killed with its batch).
fn clear_stale(root: &Path, id: &str) {
    let Ok(entries) = std::fs::read_dir(root) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let mut parts = name.rsplitn(3, '.');
        let (Some(_attempt), Some(pid), Some(owner)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else { continue };
        if owner != id {
            continue;
        }
        // Gone, or a zombie nobody reaps (a container whose init does not).
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next());
        if stat.is_empty() || state == Some("Z") {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

async fn steps(
    task: &Task,
    out: &Path,
    dir: &Path,
    scratch: &Path,
    root: &Path,
    row: &mut Value,
) -> Result<(), String> {
    let ws = scratch.join("ws");
    let base = checkout(&task.repo, &task.base, &ws).await?;
    let agent_started = Instant::now();
    let (stream, timed_out, code) = agent(task, out, dir, &ws, root).await?;
    row["agent_s"] = json!(agent_started.elapsed().as_secs_f64());
    if let Some(model) = &stream.model {
        row["model"] = json!(model);
    }
    fill_usage(row, &stream);
    if let Some(session) = &stream.session_id {
        let home = lathe_core::paths::lathe_home();
        let canonical = std::fs::canonicalize(&ws).unwrap_or_else(|_| ws.clone());
        let file = lathe_core::paths::sessions_dir(&home, &canonical).join(format!("{session}.jsonl"));
        let _ = std::fs::copy(file, dir.join("session.jsonl"));
    }
    let patch = diff(&ws, &base).await?;
    std::fs::write(dir.join("patch.diff"), &patch).map_err(|e| format!("cannot write patch.diff: {e}"))?;
    row["patch_bytes"] = json!(patch.len());
    let subtype = stream.result.as_ref().and_then(|r| r["subtype"].as_str()).map(str::to_string);
    row["subtype"] = json!(subtype);
    let status = if timed_out {
        row["subtype"] = json!("error_timeout");
        "timeout"
    } else if code == Some(4) {
        "limits"
    } else if code != Some(0) {
        "error"
    } else if patch.is_empty() {
        "empty_patch"
    } else if let Some(test) = &task.test {
        let test_started = Instant::now();
        let passed = check(task, test, &base, &patch, dir, &scratch.join("check")).await?;
        row["test_s"] = json!(test_started.elapsed().as_secs_f64());
        if passed { "resolved" } else { "unresolved" }
    } else {
        "unresolved"
    };
    row["status"] = json!(status);
    Ok(())
}

fn fill_usage(row: &mut Value, stream: &Stream) {
    let (turns, calls, input, cached, output, cost) = match &stream.result {
        Some(result) => (
            result["turns"].as_u64().unwrap_or(stream.turns),
            result["tool_calls"].as_u64().unwrap_or(stream.tool_calls),
            result["usage"]["input_tokens"].as_u64().unwrap_or(stream.input),
            result["usage"]["cache_read_tokens"].as_u64().unwrap_or(stream.cached),
            result["usage"]["output_tokens"].as_u64().unwrap_or(stream.output),
            result["cost_usd"].as_f64().unwrap_or(stream.cost),
        ),
        None => (stream.turns, stream.tool_calls, stream.input, stream.cached, stream.output, stream.cost),
    };
    row["turns"] = json!(turns);
    row["tool_calls"] = json!(calls);
    row["input_tokens"] = json!(input);
    row["cached_tokens"] = json!(cached);
    row["output_tokens"] = json!(output);
    row["cost_usd"] = json!(cost);
}

/// `git ARGS` in `cwd` (no prompts, no signing); stdout on success, else git's stderr.
pub async fn git(cwd: Option<&Path>, args: &[&str]) -> Result<Vec<u8>, String> {
    let mut command = Command::new("git");
    command.args(["-c", "user.name=lathe", "-c", "user.email=lathe@localhost", "-c", "commit.gpgsign=false"]);
    command.args(args).env("GIT_TERMINAL_PROMPT", "0").stdin(Stdio::null()).kill_on_drop(true);
    if let Some(cwd) = cwd {
        command.current_dir(cwd);
    }
    let output = command.output().await.map_err(|e| format!("cannot run git: {e}"))?;
    if output.status.success() {
        Ok(output.stdout)
    } else {
        Err(format!("git {}: {}", args.join(" "), String::from_utf8_lossy(&output.stderr).trim()))
    }
}

/// A fresh clone of `repo` at `ws`, detached at `base`; returns `base`'s commit id.
async fn checkout(repo: &str, base: &str, ws: &Path) -> Result<String, String> {
    let target = ws.display().to_string();
    git(None, &["clone", "-q", "--no-checkout", repo, &target]).await?;
    // A branch other than the cloned one is there only as `origin/<branch>`.
    let mut sha = Err(format!("`{base}` is not a revision of {repo}"));
    for name in [base.to_string(), format!("origin/{base}")] {
        if let Ok(found) = git(Some(ws), &["rev-parse", "--verify", &format!("{name}^{{commit}}")]).await {
            sha = Ok(found);
            break;
        }
    }
    let sha = sha?;
    let sha = String::from_utf8_lossy(&sha).trim().to_string();
    git(Some(ws), &["checkout", "-q", "--detach", &sha]).await?;
    Ok(sha)
}

/// Everything that differs from `base` in `ws` (new files included, binary-safe).
async fn diff(ws: &Path, base: &str) -> Result<Vec<u8>, String> {
    git(Some(ws), &["add", "-A"]).await?;
    git(Some(ws), &["diff", "--cached", "--binary", base]).await
}

/// What the agent's commands and file tools, and the test, must not see: the scratch root
/// (every task's clones but the own one), the results folder, Lathe's home (other tasks'
/// sessions, the user's config) and the task's source repository when it is a local path (the
/// agent works on its own clone). Resolved paths.
fn hidden(task: &Task, out: &Path, root: &Path) -> Vec<PathBuf> {
    let real = |path: &Path| std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let mut dirs = vec![real(root), real(out), real(&lathe_core::paths::lathe_home())];
    if !super::tasks::is_url(&task.repo) {
        dirs.push(real(Path::new(&task.repo)));
    }
    dirs
}

/// Runs the agent; returns what its stream said, whether the wall-clock limit ended it, and its
/// exit code.
async fn agent(
    task: &Task,
    out: &Path,
    dir: &Path,
    ws: &Path,
    root: &Path,
) -> Result<(Stream, bool, Option<i32>), String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the lathe binary: {e}"))?;
    let mut command = Command::new(exe);
    // `--print=…`: a prompt may start with `-` (a Markdown list) and is never taken for a flag.
    command.arg(format!("--print={}", task.prompt));
    command.args(["--output-format", "stream-json", "--sandbox", "workspace-write"]);
    command.args(["--memory", "read-only", "--permission-mode", &task.permission_mode, "-C"]).arg(ws);
    let optional = [
        ("--provider", task.provider.clone()),
        ("--model", task.model.clone()),
        ("--base-url", task.base_url.clone()),
        ("--max-turns", task.max_turns.map(|n| n.to_string())),
        ("--max-cost", task.max_cost.map(|usd| usd.to_string())),
    ];
    for (flag, value) in optional {
        if let Some(value) = value {
            command.arg(flag).arg(value);
        }
    }
    let hide = std::env::join_paths(hidden(task, out, root)).map_err(|e| e.to_string())?;
    command.env("LATHE_SANDBOX_HIDE", hide);
    let log =
        std::fs::File::create(dir.join("agent.log")).map_err(|e| format!("cannot write agent.log: {e}"))?;
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(log).kill_on_drop(true);
    lathe_process::new_session(&mut command);
    lathe_process::die_with_parent(&mut command);
    let mut child = command.spawn().map_err(|e| format!("cannot start the agent: {e}"))?;
    let group = lathe_process::Group::of(&child);
    let mut guard = lathe_process::GroupGuard::new(group);
    let stdout = child.stdout.take().ok_or("the agent has no stdout")?;
    let mut transcript = tokio::fs::File::create(dir.join("agent.jsonl"))
        .await
        .map_err(|e| format!("cannot write agent.jsonl: {e}"))?;
    let mut stream = Stream::default();
    let read = async {
        let mut lines = BufReader::new(stdout).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let _ = transcript.write_all(format!("{line}\n").as_bytes()).await;
            if let Ok(value) = serde_json::from_str::<Value>(&line) {
                stream.take(&value);
            }
        }
        child.wait().await
    };
    let limit = Duration::from_secs_f64(task.timeout_s);
    let (timed_out, code) = match tokio::time::timeout(limit, read).await {
        Ok(status) => (false, status.ok().and_then(|s| s.code())),
        Err(_) => {
            if let Some(group) = group {
                group.stop(&mut child, GRACE).await;
            }
            (true, None)
        }
    };
    if let Some(group) = group {
        group.end_rest(Duration::from_millis(200)).await;
    }
    guard.disarm();
    let _ = transcript.flush().await;
    Ok((stream, timed_out, code))
}

/// Applies `patch` to a fresh clone at `base` in `check` and runs `test` there (its own process
/// group, the task's time limit); returns whether it exited 0. Its output goes to `test.log`.
async fn check(
    task: &Task,
    test: &str,
    base: &str,
    patch: &[u8],
    dir: &Path,
    check: &Path,
) -> Result<bool, String> {
    checkout(&task.repo, base, check).await?;
    let patch_file = dir.join("patch.diff");
    let mut log =
        std::fs::File::create(dir.join("test.log")).map_err(|e| format!("cannot write test.log: {e}"))?;
    let patch_path = patch_file.display().to_string();
    if let Err(error) = git(Some(check), &["apply", "--whitespace=nowarn", &patch_path]).await {
        use std::io::Write;
        let _ = writeln!(log, "the patch ({} bytes) does not apply to {base}: {error}", patch.len());
        return Ok(false);
    }
    let err = log.try_clone().map_err(|e| format!("cannot write test.log: {e}"))?;
    let mut note = log.try_clone().map_err(|e| format!("cannot write test.log: {e}"))?;
    // Sandboxed as the agent was (the patch may have changed what the test runs): writes only in
    // the check clone and the temp dirs, no network, the same folders hidden.
    let real = |path: &Path| std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    // A home and temp folder of its own, made now: nothing the agent left in the user's home or
    // the temp folder (a Python user site, a config file) decides the test's outcome.
    let mut private = Vec::new();
    for (var, name) in [("HOME", "test-home"), ("TMPDIR", "test-tmp")] {
        let path = check.with_file_name(name);
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).map_err(|e| format!("cannot make {}: {e}", path.display()))?;
        private.push((var, real(&path)));
    }
    let mut writable = vec![real(check), real(&std::env::temp_dir()), real(Path::new("/tmp"))];
    writable.extend(private.iter().map(|(_, path)| path.clone()));
    let sandbox = Sandbox::new(SandboxMode::WorkspaceWrite, NetworkAccess::Off, writable).hiding(hidden(
        task,
        dir.parent().and_then(Path::parent).unwrap_or(dir),
        &scratch_root(),
    ));
    let mut command = Command::from(sandbox.command("sh", &[OsStr::new("-c"), OsStr::new(test)], check));
    for (var, path) in private {
        command.env(var, path);
    }
    for var in ["XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "PYTHONPATH", "PYTHONSTARTUP"] {
        command.env_remove(var);
    }
    command.stdin(Stdio::null()).stdout(log).stderr(err);
    command.kill_on_drop(true);
    lathe_process::new_session(&mut command);
    lathe_process::die_with_parent(&mut command);
    let mut child = command.spawn().map_err(|e| format!("cannot run the test: {e}"))?;
    let group = lathe_process::Group::of(&child);
    let limit = Duration::from_secs_f64(task.timeout_s);
    let passed = match tokio::time::timeout(limit, child.wait()).await {
        Ok(status) => status.is_ok_and(|s| s.success()),
        Err(_) => {
            if let Some(group) = group {
                group.stop(&mut child, GRACE).await;
            }
            use std::io::Write;
            let _ = writeln!(
                note,
                "lathe batch: the test ran past timeout_s ({} s) and was killed",
                task.timeout_s
            );
            false
        }
    };
    if let Some(group) = group {
        group.end_rest(Duration::from_millis(200)).await;
    }
    Ok(passed)
}
