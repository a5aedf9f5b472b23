//! The user's own commands ([`AgentOp::RunCommand`](lathe_protocol::AgentOp::RunCommand), a
//! `!command` typed at the prompt): not a tool call of the model, so no permission check — the user
//! typed it. It runs under `bash -c` in the workspace, in its own process group so a cancel kills
//! everything it started, with stdin closed and stdout and stderr merged; at most
//! [`MAX_OUTPUT_BYTES`] of output are kept. Its output is handed to the model as context with the
//! next user message.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use lathe_protocol::{AgentEvent, Content};
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;

/// Output kept from a command, in bytes (the rest is read and dropped).
pub const MAX_OUTPUT_BYTES: usize = 64 * 1024;
/// Output passed on to the model, in characters.
pub const MAX_CONTEXT_CHARS: usize = 10_000;

/// A running command.
pub(crate) struct CommandJob {
    group: Option<lathe_process::Group>,
    task: tokio::task::JoinHandle<CommandOutcome>,
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CommandOutcome {
    /// Stdout and stderr, merged, cut at [`MAX_OUTPUT_BYTES`].
    pub output: String,
    /// Exit status (`None` when killed by a signal or it could not run).
    pub exit_code: Option<i32>,
    /// Wall time.
    pub elapsed: Duration,
}

impl CommandOutcome {
    /// What the model is told with the next prompt.
    pub(crate) fn context(&self, command: &str) -> String {
        let status = match self.exit_code {
            Some(code) => format!("exit code {code}"),
            None => "killed".to_string(),
        };
        let mut output: String = self.output.chars().take(MAX_CONTEXT_CHARS).collect();
        if output.len() < self.output.len() {
            output.push_str("\n[output cut]");
        }
        format!(
            "{}`{command}` ({status}). Its output:\n```\n{}\n```",
            crate::history::COMMAND_REPORT_PREFIX,
            output.trim_end()
        )
    }
}

impl CommandJob {
    /// Starts `command` in `cwd`.
    pub(crate) fn spawn(command: &str, cwd: &Path) -> std::io::Result<CommandJob> {
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
            CommandOutcome {
                output: String::from_utf8_lossy(&kept).into_owned(),
                exit_code,
                elapsed: started.elapsed(),
            }
        });
        Ok(CommandJob { group, task })
    }

    /// Kills the command and everything it started.
    pub(crate) fn kill(&self) {
        if let Some(group) = self.group {
            group.signal(lathe_process::SIGKILL);
        }
    }

    /// Waits for the command to end.
    pub(crate) async fn finished(&mut self) -> CommandOutcome {
        match (&mut self.task).await {
            Ok(outcome) => outcome,
            Err(error) => {
                CommandOutcome { output: error.to_string(), exit_code: None, elapsed: Duration::ZERO }
            }
        }
    }
}

/// The user's commands of one session: at most one runs at a time, beside the turns (the session
/// task polls [`UserCommands::finished`] while it waits for ops and while a turn runs), and what
/// the finished ones printed waits for the next user message.
pub(crate) struct UserCommands {
    workspace: PathBuf,
    /// The command line that runs now and its job.
    running: Option<(String, CommandJob)>,
    /// One summary line for a command line (the shell tool's, so it reads like a call of it).
    summary: Box<dyn Fn(&str) -> String + Send>,
    /// What finished commands printed, for the model with the next user message.
    context: Vec<String>,
}

impl UserCommands {
    /// Commands run in `workspace`; `summary` makes the one-line summary of a command line.
    pub(crate) fn new(workspace: PathBuf, summary: Box<dyn Fn(&str) -> String + Send>) -> UserCommands {
        UserCommands { workspace, running: None, summary, context: Vec::new() }
    }

    /// Starts `command`; refused with a warning while another runs, answered at once with a
    /// [`AgentEvent::CommandFinished`] when bash cannot start.
    pub(crate) fn start(&mut self, command: String, events: &mpsc::UnboundedSender<AgentEvent>) {
        if let Some((running, _)) = &self.running {
            let message = format!("`{command}` not run: `{running}` is still running (cancel it first)");
            let _ = events.send(AgentEvent::Warning { message });
            return;
        }
        match CommandJob::spawn(&command, &self.workspace) {
            Ok(job) => self.running = Some((command, job)),
            Err(error) => {
                let outcome = CommandOutcome {
                    output: format!("cannot run bash: {error}"),
                    exit_code: None,
                    elapsed: Duration::ZERO,
                };
                self.record(command, outcome, events);
            }
        }
    }

    /// Whether a command runs now.
    pub(crate) fn is_running(&self) -> bool {
        self.running.is_some()
    }

    /// Kills the running command, if any, and everything it started.
    pub(crate) fn kill(&self) {
        if let Some((_, job)) = &self.running {
            job.kill();
        }
    }

    /// Waits until the running command ends (forever when none runs), then records it: its
    /// context is kept for the next user message and [`AgentEvent::CommandFinished`] is sent.
    pub(crate) async fn finished(&mut self, events: &mpsc::UnboundedSender<AgentEvent>) {
        let Some((_, job)) = &mut self.running else {
            return std::future::pending().await;
        };
        let outcome = job.finished().await;
        if let Some((command, _)) = self.running.take() {
            self.record(command, outcome, events);
        }
    }

    /// Takes the context of the commands that finished since the last user message.
    pub(crate) fn take_context(&mut self) -> Vec<Content> {
        self.context.drain(..).map(Content::text).collect()
    }

    fn record(
        &mut self,
        command: String,
        outcome: CommandOutcome,
        events: &mpsc::UnboundedSender<AgentEvent>,
    ) {
        self.context.push(outcome.context(&command));
        let _ = events.send(AgentEvent::CommandFinished {
            summary: (self.summary)(&command),
            command,
            output: outcome.output,
            exit_code: outcome.exit_code,
            elapsed_ms: u64::try_from(outcome.elapsed.as_millis()).unwrap_or(u64::MAX),
        });
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn output_is_merged_and_the_exit_code_kept() {
        let dir = tempfile::tempdir().expect("dir");
        let mut job = CommandJob::spawn("echo out; echo err >&2; exit 3", dir.path()).expect("spawn");
        let outcome = job.finished().await;
        assert_eq!(outcome.output, "out\nerr\n");
        assert_eq!(outcome.exit_code, Some(3));
        assert!(outcome.context("x").contains("exit code 3"));
    }

    #[tokio::test]
    async fn a_killed_command_takes_its_children_with_it() {
        let dir = tempfile::tempdir().expect("dir");
        let mut job = CommandJob::spawn("sleep 30 & sleep 30; echo never", dir.path()).expect("spawn");
        job.kill();
        let outcome = tokio::time::timeout(Duration::from_secs(10), job.finished()).await.expect("ended");
        assert_eq!(outcome.exit_code, None);
        assert!(!outcome.output.contains("never"));
        assert!(outcome.context("sleep").contains("killed"));
    }
}
