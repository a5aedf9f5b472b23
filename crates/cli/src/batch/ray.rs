//! The Ray executor of `lathe batch --executor ray`: the pending tasks run as one Ray job.
//!
//! [`run`] stages a working directory (the driver `batch/ray_driver.py` of the repository, the
//! pending tasks as `tasks.jsonl`, and a copy of this `lathe` binary, stripped of its symbols so
//! it fits Ray's upload limit), submits it with `ray job submit --working-dir`, and reads the rows
//! the driver prints (`@@lathe-row {json}`, one per finished task) from the job's log stream. The
//! driver runs each task as `lathe batch-task` in a `@ray.remote` task; Ray retries a task whose
//! worker died, never one that failed on its own.
//!
//! Ray's job REST API (`GET /api/version`, `GET /api/jobs/{id}`, `GET /api/jobs/{id}/logs` on the
//! dashboard, port 8265 by default) tells whether a head answers and how the job ended. A Ray head
//! has no authentication: anyone who reaches its ports can run code on it.

use std::collections::HashSet;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};

/// The driver submitted as the job's entrypoint.
const DRIVER: &str = include_str!("../../../../batch/ray_driver.py");

/// The prefix of a result row in the driver's output (then the row's JSON).
pub const ROW_MARK: &str = "@@lathe-row ";

/// The dashboard address `--address auto` falls back to (Ray's default).
pub const DEFAULT_ADDRESS: &str = "http://127.0.0.1:8265";

/// The largest working directory `ray job submit` can upload, in bytes: Ray zips it uncompressed
/// and the dashboard accepts request bodies up to 100 MiB (`DASHBOARD_CLIENT_MAX_SIZE`; the GCS
/// behind it takes 512 MiB).
pub const UPLOAD_LIMIT: u64 = 100 * 1024 * 1024;

/// How long the up-front check and the job status queries wait for the dashboard.
const HTTP_TIMEOUT: Duration = Duration::from_secs(10);

/// How many of `ray job submit`'s own output lines an error quotes (the last ones).
const TAIL_LINES: usize = 20;

/// Why the Ray executor could not run a batch, or how its job ended.
#[derive(Debug, thiserror::Error)]
pub enum RayError {
    /// Nothing (or no Ray dashboard) answers at the address.
    #[error(
        "no Ray dashboard answers at {address}: {detail} (start a head with `ray start --head`, \
         or pass the dashboard's address with --address)"
    )]
    Unreachable { address: String, detail: String },
    /// The `ray` command is not installed (or `LATHE_RAY` names no executable).
    #[error(
        "cannot find the `ray` command ({detail}): install `ray[default]` from PyPI or set LATHE_RAY to its path"
    )]
    NoRayCommand { detail: String },
    /// The working directory could not be written.
    #[error("cannot stage the Ray working directory {path}: {source}")]
    Stage { path: PathBuf, source: std::io::Error },
    /// The `lathe` binary does not fit the upload even stripped.
    #[error(
        "the lathe binary is {size} bytes after stripping, more than the {limit} bytes Ray uploads \
         as a job's working directory (build with --release, or install binutils for `strip`)"
    )]
    TooLarge { size: u64, limit: u64 },
    /// `ray job submit` could not be started or read.
    #[error("cannot run `{ray} job submit`: {source}")]
    Submit { ray: String, source: std::io::Error },
    /// The job did not end SUCCEEDED (stopped, failed, or its driver printed too few rows).
    #[error("the Ray job {id} ended {status} with {rows} of {tasks} rows: {message}")]
    Job { id: String, status: String, rows: usize, tasks: usize, message: String },
}

/// The dashboard address for `address`: `auto` resolves as Ray's job CLI does
/// (`RAY_API_SERVER_ADDRESS`, then an `http(s)://` `RAY_ADDRESS`, else [`DEFAULT_ADDRESS`]); an
/// address without a scheme gets `http://`; a trailing `/` is dropped.
pub fn resolve_address(address: &str) -> String {
    let chosen = if address == "auto" {
        let from_env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        from_env("RAY_API_SERVER_ADDRESS")
            .or_else(|| {
                from_env("RAY_ADDRESS").filter(|v| v.starts_with("http://") || v.starts_with("https://"))
            })
            .unwrap_or_else(|| DEFAULT_ADDRESS.to_string())
    } else {
        address.to_string()
    };
    let chosen = chosen.trim().trim_end_matches('/');
    if chosen.contains("://") { chosen.to_string() } else { format!("http://{chosen}") }
}

fn http_client() -> Result<reqwest::Client, String> {
    // reqwest is built without a TLS provider of its own (see the workspace manifest).
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().timeout(HTTP_TIMEOUT).build().map_err(|e| e.to_string())
}

async fn get_json(client: &reqwest::Client, url: &str) -> Result<Value, String> {
    let response = client.get(url).send().await.map_err(|e| error_chain(&e))?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("GET {url} answered HTTP {status}"));
    }
    response.json::<Value>().await.map_err(|e| format!("GET {url} answered no JSON: {e}"))
}

fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Up-front check that a Ray dashboard answers at `address` (`GET /api/version` answers JSON
/// with a `ray_version`; else [`RayError::Unreachable`]) and that the `ray` command is there
/// (`LATHE_RAY`, else PATH; else [`RayError::NoRayCommand`]). Either error: exit 2, nothing run.
pub async fn check(address: &str) -> Result<(), RayError> {
    let address = resolve_address(address);
    let unreachable = |detail: String| RayError::Unreachable { address: address.clone(), detail };
    let client = http_client().map_err(unreachable)?;
    let version = get_json(&client, &format!("{address}/api/version")).await.map_err(unreachable)?;
    if version.get("ray_version").and_then(Value::as_str).is_none() {
        return Err(unreachable(format!("{address}/api/version answered no ray_version: {version}")));
    }
    ray_command().map(|_| ())
}

/// The `ray` command: `LATHE_RAY` if set, else `ray` on PATH.
fn ray_command() -> Result<PathBuf, RayError> {
    if let Some(path) = std::env::var_os("LATHE_RAY").filter(|v| !v.is_empty()) {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(RayError::NoRayCommand { detail: format!("LATHE_RAY={} is not a file", path.display()) })
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join("ray"))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| RayError::NoRayCommand { detail: "no `ray` on PATH".to_string() })
}

/// Writes the driver, the tasks and stripped copies of this binary (and the local model's
/// process beside it, if built) into `stage`.
async fn stage_dir(stage: &Path, tasks: &[Value]) -> Result<(), RayError> {
    let failed = |source| RayError::Stage { path: stage.to_path_buf(), source };
    tokio::fs::create_dir_all(stage).await.map_err(failed)?;
    tokio::fs::write(stage.join("ray_driver.py"), DRIVER).await.map_err(failed)?;
    let mut lines = String::new();
    for task in tasks {
        lines.push_str(&task.to_string());
        lines.push('\n');
    }
    tokio::fs::write(stage.join("tasks.jsonl"), lines).await.map_err(failed)?;
    let exe = std::env::current_exe().map_err(failed)?;
    // The local model's process goes with it when it is there (it runs beside `lathe`).
    let runner = exe.with_file_name("lathe-local-model");
    let mut binaries = vec![(exe, stage.join("lathe"))];
    if runner.is_file() {
        binaries.push((runner, stage.join("lathe-local-model")));
    }
    for (exe, target) in binaries {
        // A debug build is far over the upload limit with its symbols; stripped it fits.
        let stripped = tokio::process::Command::new("strip")
            .arg("-o")
            .arg(&target)
            .arg(&exe)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .await
            .is_ok_and(|status| status.success());
        if !stripped {
            tokio::fs::copy(&exe, &target).await.map_err(failed)?;
        }
    }
    let mut size = 0;
    let mut entries = tokio::fs::read_dir(stage).await.map_err(failed)?;
    while let Some(entry) = entries.next_entry().await.map_err(failed)? {
        size += entry.metadata().await.map_err(failed)?.len();
    }
    if size >= UPLOAD_LIMIT {
        return Err(RayError::TooLarge { size, limit: UPLOAD_LIMIT });
    }
    Ok(())
}

/// The rows the driver printed in `text`, in order (lines that are not rows are skipped).
pub fn rows_in(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|line| line.strip_prefix(ROW_MARK))
        .filter_map(|json| serde_json::from_str::<Value>(json).ok())
        .filter(|row| row.get("id").and_then(Value::as_str).is_some())
        .collect()
}

/// Runs `tasks` (merged task objects, as given to batch-task) as one Ray job; calls `on_row` with
/// each result row (parsed JSON) the driver streams back, in the order they end, once per id;
/// `on_row` answering `Break` (the row could not be written) stops the job.
/// `out` is the results directory; the tasks write their files under it from whichever node runs
/// them, so on a cluster it must be a path every node shares. `cpus_per_task` is each Ray task's
/// `num_cpus`. Errors: no `ray` command, staging, or a job that did not end SUCCEEDED with a row
/// for every task ([`RayError::Job`]: the rows seen until then were given to `on_row`).
pub async fn run(
    address: &str,
    tasks: &[Value],
    out: &Path,
    cpus_per_task: f64,
    on_row: &mut (dyn FnMut(Value) -> ControlFlow<()> + Send),
) -> Result<(), RayError> {
    let address = resolve_address(address);
    let ray = ray_command()?;
    let out =
        std::path::absolute(out).map_err(|source| RayError::Stage { path: out.to_path_buf(), source })?;
    let millis = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or_default();
    let id = format!("lathe-batch-{millis}-{}", std::process::id());
    let stage = std::env::temp_dir().join(&id);
    let result = match stage_dir(&stage, tasks).await {
        Ok(()) => submit(&ray, &address, &id, &stage, tasks, &out, cpus_per_task, on_row).await,
        Err(err) => Err(err),
    };
    let _ = tokio::fs::remove_dir_all(&stage).await;
    result
}

#[allow(clippy::too_many_arguments)]
async fn submit(
    ray: &Path,
    address: &str,
    id: &str,
    stage: &Path,
    tasks: &[Value],
    out: &Path,
    cpus_per_task: f64,
    on_row: &mut (dyn FnMut(Value) -> ControlFlow<()> + Send),
) -> Result<(), RayError> {
    let python = std::env::var("LATHE_RAY_PYTHON").unwrap_or_else(|_| "python3".to_string());
    let submit_error = |source| RayError::Submit { ray: ray.display().to_string(), source };
    let mut child = tokio::process::Command::new(ray)
        .args(["job", "submit", "--address", address, "--submission-id", id, "--working-dir"])
        .arg(stage)
        .args(["--", &python, "ray_driver.py", "--tasks", "tasks.jsonl", "--job", id])
        .arg(format!("--cpus-per-task={cpus_per_task}"))
        .arg("--out")
        .arg(out)
        // The flag is the address; Ray's CLI would let these override it.
        .env_remove("RAY_ADDRESS")
        .env_remove("RAY_API_SERVER_ADDRESS")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(submit_error)?;
    eprintln!("lathe batch: Ray job {id} at {address} ({} tasks; `ray job stop {id}` stops it)", tasks.len());
    let wanted: HashSet<&str> = tasks.iter().filter_map(|t| t.get("id").and_then(Value::as_str)).collect();
    let mut seen: HashSet<String> = HashSet::new();
    // Whether a row could not be taken (the job is then stopped).
    let mut refused = false;
    let mut deliver = |row: Value, seen: &mut HashSet<String>| -> bool {
        let Some(row_id) = row.get("id").and_then(Value::as_str) else { return false };
        if !refused && wanted.contains(row_id) && seen.insert(row_id.to_string()) {
            refused = on_row(row).is_break();
        }
        refused
    };
    let mut stderr = child.stderr.take().map(BufReader::new);
    let stderr_text = tokio::spawn(async move {
        let mut text = String::new();
        if let Some(stderr) = stderr.as_mut() {
            let mut bytes = Vec::new();
            let _ = stderr.read_to_end(&mut bytes).await;
            text = String::from_utf8_lossy(&bytes).into_owned();
        }
        text
    });
    let mut tail: Vec<String> = Vec::new();
    let stdout = child.stdout.take();
    let read = async {
        let Some(stdout) = stdout else { return Ok(false) };
        let mut stdout = BufReader::new(stdout);
        let mut line = Vec::new();
        loop {
            line.clear();
            if stdout.read_until(b'\n', &mut line).await? == 0 {
                return Ok(false);
            }
            let text = String::from_utf8_lossy(&line);
            let text = text.trim_end();
            match rows_in(text).pop() {
                Some(row) => {
                    if deliver(row, &mut seen) {
                        return Ok(true);
                    }
                }
                None => {
                    tail.push(text.to_string());
                    if tail.len() > TAIL_LINES {
                        tail.remove(0);
                    }
                }
            }
        }
    };
    let (interrupted, full) = tokio::select! {
        read = read => {
            let full = read.map_err(submit_error)?;
            (full, full)
        }
        () = stop_signal() => (true, false),
    };
    if interrupted {
        // Ctrl-C, SIGTERM or a row that could not be written: the job would go on without anyone
        // to write its rows.
        let why = if full { "a result row could not be written" } else { "interrupted" };
        eprintln!("lathe batch: {why}, stopping the Ray job {id}");
        stop_job(ray, address, id).await;
        let _ = child.start_kill();
    }
    let exit = child.wait().await.map_err(submit_error)?;
    let stderr_text = stderr_text.await.unwrap_or_default();
    // The job's status decides (`ray job submit` exits 0 for a stopped job too), and its full log
    // gives any row the live stream missed.
    let (status, message) = match job_status(address, id).await {
        Ok((status, message, logs)) => {
            for row in rows_in(&logs) {
                if deliver(row, &mut seen) {
                    break;
                }
            }
            (status, message)
        }
        Err(detail) if !interrupted => {
            let mut lines: Vec<&str> = stderr_text.lines().collect();
            lines.extend(tail.iter().map(String::as_str));
            let start = lines.len().saturating_sub(TAIL_LINES);
            (format!("UNKNOWN ({detail}; `ray job submit` {exit})"), lines[start..].join("\n"))
        }
        Err(detail) => (format!("UNKNOWN ({detail})"), String::new()),
    };
    let message = match (interrupted, full) {
        (true, true) => format!("a result row could not be written; {message}"),
        (true, false) => format!("lathe batch was interrupted; {message}"),
        _ => message,
    };
    if status == "SUCCEEDED" && seen.len() == wanted.len() {
        return Ok(());
    }
    Err(RayError::Job { id: id.to_string(), status, rows: seen.len(), tasks: wanted.len(), message })
}

/// Resolves on the first SIGINT or SIGTERM of this process (never, if they cannot be watched).
async fn stop_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    match (signal(SignalKind::interrupt()), signal(SignalKind::terminate())) {
        (Ok(mut interrupt), Ok(mut terminate)) => {
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {}
            }
        }
        _ => std::future::pending().await,
    }
}

/// `ray job stop ID` (it waits until the job has stopped); a failure is only reported.
async fn stop_job(ray: &Path, address: &str, id: &str) {
    let stopped = tokio::process::Command::new(ray)
        .args(["job", "stop", "--address", address, id])
        .env_remove("RAY_ADDRESS")
        .env_remove("RAY_API_SERVER_ADDRESS")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .await;
    match stopped {
        Ok(output) if output.status.success() => {}
        Ok(output) => eprintln!(
            "lathe batch: `ray job stop {id}` failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ),
        Err(error) => eprintln!("lathe batch: cannot run `ray job stop {id}`: {error}"),
    }
}

/// The job's terminal status, message and log text; waits while it is still PENDING or RUNNING.
async fn job_status(address: &str, id: &str) -> Result<(String, String, String), String> {
    let client = http_client()?;
    loop {
        let job = get_json(&client, &format!("{address}/api/jobs/{id}")).await?;
        let status = job.get("status").and_then(Value::as_str).unwrap_or("UNKNOWN").to_string();
        if status == "PENDING" || status == "RUNNING" {
            tokio::time::sleep(Duration::from_millis(500)).await;
            continue;
        }
        let message = job.get("message").and_then(Value::as_str).unwrap_or_default().to_string();
        let logs = get_json(&client, &format!("{address}/api/jobs/{id}/logs")).await?;
        let logs = logs.get("logs").and_then(Value::as_str).unwrap_or_default().to_string();
        return Ok((status, message, logs));
    }
}

#[cfg(test)]
#[path = "ray_tests.rs"]
mod tests;
