//! Running one hook command: `sh -c <command>` in the project directory, in its own process group,
//! with the event as JSON on stdin, `CLAUDE_PROJECT_DIR` and `LATHE_PROJECT_DIR` set, stdout and
//! stderr collected, and the whole group killed when the time limit passes or the turn is cancelled.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use super::settings::HookCommand;

/// Most bytes kept of a hook's stdout or stderr.
const MAX_OUTPUT_BYTES: usize = 64 * 1024;

/// How one hook command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// It exited with this code.
    Exited(i32),
    /// A signal ended it (number).
    Signalled(i32),
    /// It ran past its time limit and was killed.
    TimedOut(Duration),
    /// The turn was cancelled; it was killed.
    Cancelled,
    /// It could not be started.
    NotStarted(String),
}

/// What one hook command did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ran {
    /// The command as configured.
    pub command: String,
    /// Whether it came from a project's settings file ([`HookCommand::project`]).
    pub project: bool,
    /// How it ended.
    pub ended: Ended,
    /// Its standard output (at most 64 KiB, lossily UTF-8).
    pub stdout: String,
    /// Its standard error (at most 64 KiB, lossily UTF-8).
    pub stderr: String,
}

/// How long what a hook left running gets between SIGTERM and SIGKILL.
const LEFT_RUNNING_GRACE: Duration = Duration::from_millis(200);

/// Runs `hook` with `input` on stdin; when it exits, whatever it left running in its process
/// group is stopped.
pub async fn run(hook: &HookCommand, input: &[u8], project_dir: &Path, cancel: &CancellationToken) -> Ran {
    let ran = |ended: Ended, stdout: Vec<u8>, stderr: Vec<u8>| Ran {
        command: hook.command.clone(),
        project: hook.project,
        ended,
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    };
    let mut command = tokio::process::Command::new("sh");
    command
        .arg("-c")
        .arg(&hook.command)
        .current_dir(project_dir)
        .env("CLAUDE_PROJECT_DIR", project_dir)
        .env("LATHE_PROJECT_DIR", project_dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    lathe_process::new_group(&mut command);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(error) => return ran(Ended::NotStarted(error.to_string()), Vec::new(), Vec::new()),
    };
    let group = lathe_process::Group::of(&child);
    let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let input = input.to_vec();
    // A hook that does not read its stdin must not block: write from a task, ignore broken pipes.
    let writer = tokio::spawn(async move {
        if let Some(mut stdin) = stdin {
            let _ = stdin.write_all(&input).await;
            let _ = stdin.shutdown().await;
        }
    });
    let out = tokio::spawn(read_capped(stdout));
    let err = tokio::spawn(read_capped(stderr));
    let ended = tokio::select! {
        status = child.wait() => match status {
            Ok(status) => match (status.code(), std::os::unix::process::ExitStatusExt::signal(&status)) {
                (Some(code), _) => Ended::Exited(code),
                (None, Some(signal)) => Ended::Signalled(signal),
                (None, None) => Ended::Exited(-1),
            },
            Err(error) => Ended::NotStarted(error.to_string()),
        },
        () = tokio::time::sleep(hook.timeout) => Ended::TimedOut(hook.timeout),
        () = cancel.cancelled() => Ended::Cancelled,
    };
    if matches!(ended, Ended::TimedOut(_) | Ended::Cancelled) {
        if let Some(group) = group {
            group.signal(lathe_process::SIGKILL);
        }
        let _ = child.wait().await;
    } else if let Some(group) = group {
        // Nothing a hook started outlives it: a background job it left is stopped now.
        let left = group.end_rest(LEFT_RUNNING_GRACE).await;
        if !left.is_empty() {
            tracing::info!(hook = %hook.command, ?left, "stopped the processes a hook left running");
        }
    }
    writer.abort();
    // Output pipes may be held open by a background grandchild; do not wait for them forever.
    let collect = |task: tokio::task::JoinHandle<Vec<u8>>| async move {
        tokio::time::timeout(Duration::from_millis(500), task)
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default()
    };
    let (stdout, stderr) = tokio::join!(collect(out), collect(err));
    ran(ended, stdout, stderr)
}

async fn read_capped<R: tokio::io::AsyncRead + Unpin>(reader: Option<R>) -> Vec<u8> {
    let Some(mut reader) = reader else { return Vec::new() };
    let mut out = Vec::new();
    let mut buffer = [0u8; 8192];
    loop {
        match reader.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = MAX_OUTPUT_BYTES.saturating_sub(out.len());
                out.extend_from_slice(&buffer[..n.min(room)]);
            }
        }
    }
    out
}
