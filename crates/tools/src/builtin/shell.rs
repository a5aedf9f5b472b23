//! `shell{command, timeout_ms?, workdir?, run_in_background?}`: runs `bash -c <command>` and
//! reports its output and exit code — or, with `run_in_background`, starts it as one of the
//! session's background jobs and returns its id at once ([`super::shell_jobs`]: spawned as in
//! step 2, no timeout, read with `shell_output`, stopped with `shell_kill` or when the session
//! ends).
//!
//! Flow at a glance:
//! 1. resolve `workdir` against the workspace (default: the workspace root);
//! 2. spawn `bash -c` in a session of its own (`setsid`: its own process group and no controlling
//!    terminal, so nothing it runs can read from or write to the user's terminal — `/dev/tty`
//!    cannot even be opened), stdin null (so `cat` or `read x` finish at once), stdout and stderr
//!    both on the write end of ONE pipe (so their interleaving is kept), environment = inherited without
//!    secrets + [`NON_INTERACTIVE_ENV`] (no prompts, no pagers, no colour) + `ctx.env`, inside the
//!    context's OS sandbox when there is one ([`super::shell_env`]);
//! 3. read the pipe while waiting for bash to exit, racing the timeout and the cancel token — on
//!    either, SIGTERM the whole group and SIGKILL it shortly after; a cancel returns
//!    [`ToolError::Cancelled`], a timeout returns the output so far with exit code 124 and a
//!    "timed out after N ms" line (so the model sees where the command hung);
//! 4. when bash has exited, read on until EOF; if background processes keep the pipe open for
//!    more than [`EXIT_GRACE`], stop reading; then whatever is still in the group (a background
//!    job) is stopped (TERM, [`KILL_GRACE`], KILL) and the result names its pids — nothing a call
//!    starts outlives it (a process that left the group with `setsid` is not seen);
//! 5. clean the output ([`clean_terminal`]), keep head + tail within
//!    [`MAX_OUTPUT_CHARS`] (the whole output is spilled), and always append `exit code: N`,
//!    explaining exit 1 of `grep`/`diff`/`test`. A non-zero exit is `is_error` (still `Ok`).

use std::collections::VecDeque;
use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

use lathe_process::{Group, GroupGuard};
use lathe_protocol::ToolPreview;
use schemars::JsonSchema;
use serde::Deserialize;
use tokio::io::AsyncReadExt;
use tokio::process::Child;

use crate::context::ToolContext;
use crate::output::{cap_output, clean_terminal};
use crate::tool::{Access, Effect, Tool, ToolError, ToolOutput};

/// Longest timeout a call may ask for, in milliseconds.
pub const MAX_TIMEOUT_MS: u64 = 600_000;
/// In-context budget for a command's output, in characters.
pub const MAX_OUTPUT_CHARS: usize = 30_000;
/// How long to keep reading after bash exits while background processes hold the pipe open.
pub const EXIT_GRACE: Duration = Duration::from_millis(1_000);
/// Time between SIGTERM and SIGKILL when stopping a command.
pub const KILL_GRACE: Duration = Duration::from_millis(200);
/// Bytes kept in memory from the start of the output; beyond this only the last
/// [`TAIL_CAPTURE_BYTES`] are kept (and the count of dropped bytes is reported).
const HEAD_CAPTURE_BYTES: usize = 32 * 1024 * 1024;
const TAIL_CAPTURE_BYTES: usize = 4 * 1024 * 1024;

/// The `shell` tool. Its description states the sandbox commands run in ([`Shell::in_sandbox`]),
/// so the model knows before a download fails that the network is off.
#[derive(Debug, Clone, Copy, Default)]
pub struct Shell {
    description: Option<&'static str>,
}

macro_rules! shell_description {
    ($($sandbox:literal)?) => {
        concat!(
            "Run a bash command in the workspace (stdin is closed, no terminal: prompts fail at once; \
             stdout and stderr are combined). Long output keeps its head and tail. Prefer \
             read_file/grep/glob/edit_file for files."
            $(, " ", $sandbox)?
        )
    };
}

impl Shell {
    /// The tool for commands confined by `sandbox` (`None`: no sandbox), its description saying
    /// what the sandbox allows.
    pub fn in_sandbox(sandbox: Option<&lathe_policy::sandbox::Sandbox>) -> Shell {
        use lathe_policy::sandbox::Backend;
        use lathe_policy::{NetworkAccess, SandboxMode};
        let Some(sandbox) = sandbox.filter(|sandbox| sandbox.mode != SandboxMode::Off) else {
            return Shell { description: Some(shell_description!()) };
        };
        let description = match (
            lathe_policy::sandbox::backend(sandbox.network),
            sandbox.mode,
            sandbox.network,
        ) {
            (Err(_), _, _) => shell_description!(
                "No OS sandbox works here: a command that may change something needs the user's approval."
            ),
            (Ok(Backend::Landlock(abi)), SandboxMode::WorkspaceWrite, _) if *abi < 4 => shell_description!(
                "Sandbox (Landlock): writes only in the workspace and temp dirs; the network is not blocked."
            ),
            (Ok(Backend::Landlock(abi)), SandboxMode::ReadOnly, _) if *abi < 4 => shell_description!(
                "Sandbox (Landlock): read-only (no writes anywhere); the network is not blocked."
            ),
            (Ok(Backend::Landlock(_)), SandboxMode::WorkspaceWrite, NetworkAccess::Off) => {
                shell_description!(
                    "Sandbox (Landlock): writes only in the workspace and temp dirs; TCP connections are refused \
                 (downloads and package installs fail; ask the user when one is needed)."
                )
            }
            (Ok(Backend::Landlock(_)), SandboxMode::ReadOnly, NetworkAccess::Off) => shell_description!(
                "Sandbox (Landlock): read-only (no writes anywhere); TCP connections are refused."
            ),
            (Ok(Backend::Landlock(_)), SandboxMode::WorkspaceWrite, _) => {
                shell_description!(
                    "Sandbox (Landlock): writes only in the workspace and temp dirs; network on."
                )
            }
            (_, SandboxMode::WorkspaceWrite, NetworkAccess::Off) => shell_description!(
                "Sandbox: writes only in the workspace and temp dirs (.git hooks, config read-only); NO \
                 network (downloads, installs, localhost servers fail; ask the user if one is needed)."
            ),
            (_, SandboxMode::WorkspaceWrite, NetworkAccess::On) => shell_description!(
                "Sandbox: writes only in the workspace and temp dirs (.git hooks and config read-only); \
                 network on."
            ),
            (_, _, NetworkAccess::Off) => {
                shell_description!("Sandbox: read-only (no writes anywhere); NO network.")
            }
            (_, _, NetworkAccess::On) => {
                shell_description!("Sandbox: read-only (no writes anywhere); network on.")
            }
        };
        Shell { description: Some(description) }
    }
}

/// Arguments of `shell`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ShellArgs {
    /// Bash command line.
    pub command: String,
    /// Timeout in ms (default 120000, max 600000).
    #[schemars(range(min = 1))]
    pub timeout_ms: Option<u64>,
    /// Default: the workspace root.
    pub workdir: Option<String>,
    /// Background job (server, watcher): returns an id for shell_output/shell_kill.
    pub run_in_background: Option<bool>,
}

impl Tool for Shell {
    type Args = ShellArgs;

    fn name(&self) -> &'static str {
        "shell"
    }

    fn description(&self) -> &'static str {
        self.description.unwrap_or(shell_description!())
    }

    fn effect(&self) -> Effect {
        Effect::Mutating
    }

    fn access(&self, args: &ShellArgs, ctx: &ToolContext) -> Access {
        let cwd = args.workdir.as_deref().map_or_else(|| ctx.workspace.clone(), |dir| ctx.resolve(dir));
        Access::Execute { command: args.command.clone(), cwd }
    }

    /// The command line and the absolute directory it runs in.
    fn preview(&self, args: &ShellArgs, ctx: &ToolContext) -> Option<ToolPreview> {
        let cwd = args.workdir.as_deref().map_or_else(|| ctx.workspace.clone(), |dir| ctx.resolve(dir));
        Some(ToolPreview::Command { command: args.command.clone(), cwd: cwd.display().to_string() })
    }

    async fn run(&self, args: ShellArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let cwd = match &args.workdir {
            Some(dir) => ctx.resolve(dir),
            None => ctx.workspace.clone(),
        };
        if !tokio::fs::metadata(&cwd).await.is_ok_and(|m| m.is_dir()) {
            return Err(ToolError::Failed(format!(
                "shell: working directory {} does not exist",
                ctx.display_path(&cwd)
            )));
        }
        let timeout_ms = args.timeout_ms.unwrap_or(ctx.shell_default_timeout_ms).clamp(1, MAX_TIMEOUT_MS);
        let watches = super::shell_env::Watches::new(ctx);
        if args.run_in_background == Some(true) {
            return super::shell_jobs::start(&args.command, &cwd, ctx, watches);
        }
        let run = run_command(&args.command, &cwd, ctx, timeout_ms).await;
        // The command's process group is gone (and, under bubblewrap, its pid namespace).
        let watch_notes = watches.settle().await;
        let run = run?;
        // Cleaning and spilling megabytes is CPU and disk work: keep it off the async workers.
        let command = args.command;
        let spill_dir = ctx.spill_dir.clone();
        let mut output = tokio::task::spawn_blocking(move || render(&command, run, &spill_dir))
            .await
            .map_err(|e| ToolError::Failed(format!("internal error: {e}")))?;
        let text = output.text_content();
        let mut notes: Vec<String> =
            super::shell_env::sandbox_note(ctx, output.exit_code.unwrap_or(0), &text).into_iter().collect();
        notes.extend(watch_notes);
        if !notes.is_empty() {
            output.content = vec![lathe_protocol::Content::text(format!("{text}\n{}", notes.join("\n")))];
        }
        Ok(output)
    }
}

/// What a finished command left behind.
struct Finished {
    output: Capture,
    exit_code: i32,
    signal: Option<i32>,
    /// Whether background processes held the output open past [`EXIT_GRACE`].
    held_output: bool,
    /// The pids of the processes still in the command's group when it ended (they were stopped).
    left_running: Vec<u32>,
    /// `Some(limit)` when the timeout of `limit` ms stopped the command.
    timed_out_ms: Option<u64>,
}

/// Exit code reported for a command stopped by the timeout (as coreutils `timeout` does).
pub const TIMEOUT_EXIT_CODE: i32 = 124;

async fn run_command(
    command: &str,
    cwd: &std::path::Path,
    ctx: &ToolContext,
    timeout_ms: u64,
) -> Result<Finished, ToolError> {
    let spawned = super::shell_env::spawn(command, cwd, ctx)
        .map_err(|e| ToolError::Failed(format!("shell: cannot start bash: {e}")))?;
    let super::shell_env::Spawned { mut child, group, mut pipe } = spawned;
    // If this future is dropped mid-run (the caller gave up on it), the whole group goes too.
    let mut guard = GroupGuard::new(group);

    let deadline = tokio::time::Instant::now() + Duration::from_millis(timeout_ms);
    let mut output = Capture::default();
    let mut chunk = vec![0u8; 64 * 1024];
    let mut status = None;
    let mut exited_at = None;
    let mut eof = false;
    loop {
        if eof && status.is_some() {
            break;
        }
        let grace_end = exited_at.map_or(deadline, |at: tokio::time::Instant| at + EXIT_GRACE);
        tokio::select! {
            _ = ctx.cancel.cancelled() => {
                stop_group(group, &mut child).await;
                return Err(ToolError::Cancelled);
            }
            _ = tokio::time::sleep_until(deadline) => {
                stop_group(group, &mut child).await;
                guard.disarm();
                return Ok(Finished {
                    output,
                    exit_code: TIMEOUT_EXIT_CODE,
                    signal: None,
                    held_output: false,
                    left_running: Vec::new(),
                    timed_out_ms: Some(timeout_ms),
                });
            }
            read = pipe.read(&mut chunk), if !eof => match read {
                Ok(0) => eof = true,
                Ok(n) => output.push(&chunk[..n]),
                Err(e) => {
                    tracing::warn!(error = %e, "shell: reading the output pipe failed");
                    eof = true;
                }
            },
            waited = child.wait(), if status.is_none() => {
                let waited = waited.map_err(|e| ToolError::Failed(format!("shell: waiting for bash failed: {e}")))?;
                status = Some(waited);
                exited_at = Some(tokio::time::Instant::now());
            }
            _ = tokio::time::sleep_until(grace_end), if exited_at.is_some() && !eof => break,
        }
    }
    // Nothing the command started outlives the call: what is left of its group is stopped.
    // Under bubblewrap the group also holds the init process of its pid namespace, which may
    // still be exiting when bash has: it is no job of the command's.
    let wrapper: &[&str] = if ctx.sandbox.is_some() { &["bwrap"] } else { &[] };
    let left_running = match group {
        Some(group) => group.end_rest_except(KILL_GRACE, wrapper).await,
        None => Vec::new(),
    };
    guard.disarm();
    let Some(status) = status else {
        return Err(ToolError::Failed("shell: bash did not report an exit status".to_string()));
    };
    let signal = status.signal();
    let exit_code = status.code().unwrap_or_else(|| 128 + signal.unwrap_or(0));
    Ok(Finished { output, exit_code, signal, held_output: !eof, left_running, timed_out_ms: None })
}

/// Environment that keeps commands from waiting on a person: no credential or passphrase prompts
/// (git, ssh, Git Credential Manager), no pagers, no colour codes, no interactive editors or
/// package-manager questions. Applied over the inherited environment, before `ctx.env`.
pub const NON_INTERACTIVE_ENV: &[(&str, &str)] = &[
    ("GIT_TERMINAL_PROMPT", "0"),
    // Empty: git asks no askpass helper (not even SSH_ASKPASS) and fails at once instead.
    ("GIT_ASKPASS", ""),
    ("SSH_ASKPASS", ""),
    ("SSH_ASKPASS_REQUIRE", "never"),
    ("GCM_INTERACTIVE", "never"),
    ("GIT_EDITOR", "true"),
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    ("GH_PAGER", "cat"),
    ("MANPAGER", "cat"),
    ("SYSTEMD_PAGER", ""),
    ("NO_COLOR", "1"),
    ("TERM", "dumb"),
    ("DEBIAN_FRONTEND", "noninteractive"),
];

/// Ends the command's whole process group (TERM, [`KILL_GRACE`], KILL) and reaps bash.
async fn stop_group(group: Option<Group>, child: &mut Child) {
    match group {
        Some(group) => group.stop(child, KILL_GRACE).await,
        None => {
            let _ = child.start_kill();
            let _ = tokio::time::timeout(KILL_GRACE, child.wait()).await;
        }
    }
}

/// The command's output bytes: the first [`HEAD_CAPTURE_BYTES`], then a ring of the last
/// [`TAIL_CAPTURE_BYTES`], and how many bytes fell between them.
#[derive(Default)]
struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    dropped: u64,
}

impl Capture {
    fn push(&mut self, mut bytes: &[u8]) {
        let room = HEAD_CAPTURE_BYTES.saturating_sub(self.head.len());
        let now = room.min(bytes.len());
        self.head.extend_from_slice(&bytes[..now]);
        bytes = &bytes[now..];
        self.tail.extend(bytes);
        let excess = self.tail.len().saturating_sub(TAIL_CAPTURE_BYTES);
        if excess > 0 {
            self.tail.drain(..excess);
            self.dropped += excess as u64;
        }
    }

    fn into_bytes(self) -> Vec<u8> {
        let mut all = self.head;
        if self.dropped > 0 {
            all.extend_from_slice(
                format!("\n[... {} bytes of output dropped ...]\n", self.dropped).as_bytes(),
            );
        }
        all.extend(self.tail);
        all
    }
}

fn render(command: &str, run: Finished, spill_dir: &std::path::Path) -> ToolOutput {
    let cleaned = clean_terminal(&run.output.into_bytes());
    let (shown, spill_path) = cap_output(&cleaned, MAX_OUTPUT_CHARS - 500, spill_dir, "shell");
    let mut text = if shown.is_empty() { "(no output)\n".to_string() } else { shown };
    if !text.ends_with('\n') {
        text.push('\n');
    }
    if !run.left_running.is_empty() {
        let pids: Vec<String> = run.left_running.iter().map(u32::to_string).collect();
        let held = if run.held_output { ", holding the output open" } else { "" };
        text.push_str(&format!(
            "[left running when the command ended{held}, and stopped: pid {}; nothing a call starts \
             outlives it: to keep a server or watcher running, start it with run_in_background: true]\n",
            pids.join(", ")
        ));
    } else if run.held_output {
        text.push_str("[the output was held open after the command ended; the rest was not read]\n");
    }
    if let Some(limit) = run.timed_out_ms {
        text.push_str(&format!(
            "[timed out after {limit} ms; the command and its child processes were killed. Pass a larger \
             timeout_ms (max {MAX_TIMEOUT_MS}), or start a long-running command (a server, a watcher) with \
             run_in_background: true and read it with shell_output]\n"
        ));
    }
    match run.signal {
        Some(signal) => text.push_str(&format!("exit code: {} (killed by signal {signal})", run.exit_code)),
        None => text.push_str(&format!("exit code: {}", run.exit_code)),
    }
    if let Some(meaning) = explain_exit_1(command).filter(|_| run.exit_code == 1) {
        text.push_str(&format!(" ({meaning})"));
    }
    ToolOutput {
        content: vec![lathe_protocol::Content::text(text)],
        is_error: run.exit_code != 0,
        exit_code: Some(run.exit_code),
        spill_path,
        todos: None,
        view: None,
        ledger: Vec::new(),
        change: None,
        ends_run: false,
    }
}

pub use super::shell_exit::explain_exit_1;

#[cfg(test)]
#[path = "shell_tests.rs"]
mod tests;
