//! `!command`: a shell command the user runs directly from the prompt, not a tool call of the
//! model (so no permission check: the user typed it). It runs under `bash -c` in the workspace, in
//! its own process group so Ctrl+C can kill everything it started, with stdin closed and stdout and
//! stderr merged; at most [`MAX_OUTPUT_BYTES`] of output are kept. The result is shown like a tool
//! call and handed to the model as context with the next prompt.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;

/// Output kept from a command, in bytes (the rest is read and dropped).
pub const MAX_OUTPUT_BYTES: usize = 64 * 1024;
/// Output passed on to the model, in characters.
pub const MAX_CONTEXT_CHARS: usize = 10_000;

/// A running `!command`.
pub struct ShellJob {
    /// The command line.
    pub command: String,
    group: Option<lathe_process::Group>,
    task: tokio::task::JoinHandle<ShellOutcome>,
}

/// How a `!command` ended.
#[derive(Debug, Clone, PartialEq)]
pub struct ShellOutcome {
    /// Stdout and stderr, merged, cut at [`MAX_OUTPUT_BYTES`].
    pub output: String,
    /// Exit status (`None` when killed by a signal or it could not run).
    pub exit_code: Option<i32>,
    /// Wall time.
    pub elapsed: Duration,
}

impl ShellOutcome {
    /// What the model is told with the next prompt.
    pub fn context(&self, command: &str) -> String {
        let status = match self.exit_code {
            Some(code) => format!("exit code {code}"),
            None => "killed".to_string(),
        };
        let mut output: String = self.output.chars().take(MAX_CONTEXT_CHARS).collect();
        if output.len() < self.output.len() {
            output.push_str("\n[output cut]");
        }
        format!(
            "I ran a shell command myself: `{command}` ({status}). Its output:\n```\n{}\n```",
            output.trim_end()
        )
    }
}

impl ShellJob {
    /// Starts `command` in `cwd`.
    pub fn spawn(command: &str, cwd: &Path) -> std::io::Result<ShellJob> {
        let started = Instant::now();
        let mut bash = tokio::process::Command::new("bash");
        bash.arg("-c")
            .arg(format!("{{ {command}\n}} 2>&1"))
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        let mut child = lathe_process::new_group(&mut bash).spawn()?;
        let group = lathe_process::Group::of(&child);
        let mut stdout = child.stdout.take();
        let task = tokio::spawn(async move {
            let mut kept = Vec::new();
            if let Some(stdout) = &mut stdout {
                let mut chunk = vec![0u8; 8192];
                while let Ok(read) = stdout.read(&mut chunk).await {
                    if read == 0 {
                        break;
                    }
                    let room = MAX_OUTPUT_BYTES.saturating_sub(kept.len());
                    kept.extend_from_slice(&chunk[..read.min(room)]);
                }
            }
            let exit_code = child.wait().await.ok().and_then(|status| status.code());
            ShellOutcome {
                output: String::from_utf8_lossy(&kept).into_owned(),
                exit_code,
                elapsed: started.elapsed(),
            }
        });
        Ok(ShellJob { command: command.to_string(), group, task })
    }

    /// Kills the command and everything it started.
    pub fn kill(&self) {
        if let Some(group) = self.group {
            group.signal(lathe_process::SIGKILL);
        }
    }

    /// Waits for the command to end.
    pub async fn finished(&mut self) -> ShellOutcome {
        match (&mut self.task).await {
            Ok(outcome) => outcome,
            Err(error) => {
                ShellOutcome { output: error.to_string(), exit_code: None, elapsed: Duration::ZERO }
            }
        }
    }
}
