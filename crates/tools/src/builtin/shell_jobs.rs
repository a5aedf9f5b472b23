//! The model's side of background jobs ([`super::jobs`]): `shell {run_in_background: true}`
//! starts one and returns its id at once ([`start`]); `shell_output {id, filter?, wait_ms?}`
//! returns its new output since the last read and its state; `shell_kill {id}` stops it (SIGTERM,
//! then SIGKILL) and reports how it ended. Both work on this session's jobs only, so neither needs
//! an approval: `shell_output` only reads, and `shell_kill` can end nothing the session did not
//! start. [`ForegroundShell`] is `shell` without the option, for a tool set without the other two.
//!
//! A read is capped like a foreground command's output ([`cap_output`], the whole text spilled);
//! what a chatty job wrote beyond what is kept in memory is in its log file, which the result
//! names.

use std::path::Path;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use super::jobs::{Job, JobState, Taken};
use super::shell::{MAX_OUTPUT_CHARS, Shell, ShellArgs};
use super::shell_env::Watches;
use crate::context::ToolContext;
use crate::output::{cap_output, clean_terminal};
use crate::tool::{Access, Effect, Tool, ToolError, ToolOutput, one_line};

/// Longest `wait_ms` of a `shell_output` call, in milliseconds.
pub const MAX_WAIT_MS: u64 = 30_000;
/// In-context budget of the output `shell_kill` shows, in characters.
const KILL_OUTPUT_CHARS: usize = 4_000;

/// Starts `command` in `cwd` as a background job of the session and says how to follow it.
pub(crate) fn start(
    command: &str,
    cwd: &Path,
    ctx: &ToolContext,
    watches: Watches,
) -> Result<ToolOutput, ToolError> {
    let job = ctx.jobs.start(command, cwd, ctx, watches)?;
    let pid = job.pid.map(|pid| format!(" (pid {pid})")).unwrap_or_default();
    let mut text = format!(
        "started {}{pid} in the background: {}\nRead its output with shell_output (wait_ms waits for more), stop it \
         with shell_kill; it is stopped when the session ends.",
        job.id,
        one_line(command)
    );
    if let Some(log) = &job.log {
        text.push_str(&format!(" All of its output also goes to {}.", log.display()));
    }
    if super::shell_env::network_off(ctx) {
        text.push_str(
            "\n[sandbox: NO network: a server this job starts cannot be reached from other commands]",
        );
    }
    Ok(ToolOutput::text(text))
}

/// The `shell_output` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct ShellOutput;

/// Arguments of `shell_output`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ShellOutputArgs {
    /// Job id (job1).
    pub id: String,
    /// Regex: only matching lines are shown.
    pub filter: Option<String>,
    /// Wait ms for new output or the end.
    #[schemars(range(max = 30000))]
    pub wait_ms: Option<u64>,
}

impl Tool for ShellOutput {
    type Args = ShellOutputArgs;

    fn name(&self) -> &'static str {
        "shell_output"
    }

    fn description(&self) -> &'static str {
        "New output of a background shell job since the last read, and its state."
    }

    fn effect(&self) -> Effect {
        Effect::ReadOnly
    }

    fn access(&self, _args: &ShellOutputArgs, _ctx: &ToolContext) -> Access {
        Access::Session
    }

    fn summary(&self, args: &serde_json::Value) -> String {
        job_summary(args)
    }

    async fn run(&self, args: ShellOutputArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let filter =
            match args.filter.as_deref().filter(|filter| !filter.is_empty()) {
                Some(filter) => Some(regex::Regex::new(filter).map_err(|e| {
                    ToolError::Failed(format!("shell_output: filter is not a valid regex: {e}"))
                })?),
                None => None,
            };
        let job = find(ctx, "shell_output", &args.id)?;
        let wait = Duration::from_millis(args.wait_ms.unwrap_or(0).min(MAX_WAIT_MS));
        let deadline = tokio::time::Instant::now() + wait;
        let mut changes = job.subscribe();
        let mut read = Read::default();
        loop {
            let taken = job.take(filter.is_some());
            read.add(taken, filter.as_ref());
            if !read.text.is_empty() || !read.state.is_running() || tokio::time::Instant::now() >= deadline {
                break;
            }
            tokio::select! {
                () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
                () = tokio::time::sleep_until(deadline) => {}
                changed = changes.changed() => if changed.is_err() { break },
            }
        }
        let mut output = render(&job, read, args.filter.as_deref(), MAX_OUTPUT_CHARS - 500, ctx);
        let text = output.text_content();
        if let Some(note) = output.exit_code.and_then(|code| super::shell_env::sandbox_note(ctx, code, &text))
        {
            output.content = vec![lathe_protocol::Content::text(format!("{text}\n{note}"))];
        }
        Ok(output)
    }
}

/// The `shell_kill` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct ShellKill;

/// Arguments of `shell_kill`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ShellKillArgs {
    /// Job id (job1).
    pub id: String,
}

impl Tool for ShellKill {
    type Args = ShellKillArgs;

    fn name(&self) -> &'static str {
        "shell_kill"
    }

    fn description(&self) -> &'static str {
        "Stop a background shell job (SIGTERM, then SIGKILL)."
    }

    fn effect(&self) -> Effect {
        Effect::Mutating
    }

    /// Ends only a job of this session: nothing to approve.
    fn access(&self, _args: &ShellKillArgs, _ctx: &ToolContext) -> Access {
        Access::Session
    }

    fn summary(&self, args: &serde_json::Value) -> String {
        job_summary(args)
    }

    async fn run(&self, args: ShellKillArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let job = find(ctx, "shell_kill", &args.id)?;
        // Once asked, the stop is finished even when the call is interrupted.
        let stopping = job.clone();
        let stopped = tokio::spawn(async move { stopping.stop().await });
        tokio::select! {
            () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
            _ = stopped => {}
        }
        let mut read = Read::default();
        read.add(job.take(false), None);
        Ok(render(&job, read, None, KILL_OUTPUT_CHARS, ctx))
    }
}

/// `job1`, or `job1 /regex/` for a filtered read.
fn job_summary(args: &serde_json::Value) -> String {
    let id = args.get("id").and_then(serde_json::Value::as_str).unwrap_or("?");
    match args.get("filter").and_then(serde_json::Value::as_str).filter(|filter| !filter.is_empty()) {
        Some(filter) => one_line(&format!("{id} /{filter}/")),
        None => one_line(id),
    }
}

/// The job `id` of this session, or an error for `tool` naming the jobs there are.
fn find(ctx: &ToolContext, tool: &str, id: &str) -> Result<std::sync::Arc<Job>, ToolError> {
    ctx.jobs.get(id).ok_or_else(|| {
        let ids = ctx.jobs.ids();
        let known = if ids.is_empty() {
            "it has none (jobs end with the session that started them)".to_string()
        } else {
            format!("its jobs are {}", ids.join(", "))
        };
        ToolError::Failed(format!("{tool}: no job {} in this session; {known}", id.trim()))
    })
}

/// What one call read of a job, over one or more takes.
#[derive(Debug)]
struct Read {
    text: String,
    dropped: u64,
    state: JobState,
    notes: Vec<String>,
}

impl Default for Read {
    fn default() -> Read {
        Read { text: String::new(), dropped: 0, state: JobState::Running, notes: Vec::new() }
    }
}

impl Read {
    /// Adds a take, cleaned for the model and, with `filter`, only its matching lines.
    fn add(&mut self, taken: Taken, filter: Option<&regex::Regex>) {
        self.dropped += taken.dropped;
        self.state = taken.state;
        self.notes.extend(taken.notes);
        let cleaned = clean_terminal(&taken.bytes);
        match filter {
            Some(filter) => {
                for line in cleaned.lines().filter(|line| filter.is_match(line)) {
                    self.text.push_str(line);
                    self.text.push('\n');
                }
            }
            None => self.text.push_str(&cleaned),
        }
    }
}

/// The result of a read: the job's state line, its new output within `budget` characters (the
/// whole text spilled), and the notes; the exit code once the job exited (non-zero is an error).
fn render(job: &Job, read: Read, filter: Option<&str>, budget: usize, ctx: &ToolContext) -> ToolOutput {
    let summary = job.summary();
    let seconds = summary.ran.as_secs();
    let state = match read.state {
        JobState::Running => format!("{} is running ({seconds} s so far)", job.id),
        JobState::Exited { code, signal: None } => {
            format!("{} exited with code {code} after {seconds} s", job.id)
        }
        JobState::Exited { code, signal: Some(signal) } => {
            format!("{} exited with code {code} (killed by signal {signal}) after {seconds} s", job.id)
        }
        JobState::Killed => format!("{} was stopped after {seconds} s", job.id),
    };
    let mut text = format!("[{state}: {}]\n", one_line(&job.command));
    if read.dropped > 0 {
        let log =
            job.log.as_ref().map(|log| format!(" (all of it is in {})", log.display())).unwrap_or_default();
        text.push_str(&format!(
            "[... {} earlier bytes of output were not kept in memory{log} ...]\n",
            read.dropped
        ));
    }
    let (shown, spill_path) = cap_output(&read.text, budget, &ctx.spill_dir, "shell_output");
    if shown.is_empty() {
        let matching = filter.map(|filter| format!(" matching /{filter}/")).unwrap_or_default();
        text.push_str(&format!("(no new output{matching})"));
    } else {
        text.push_str(shown.trim_end_matches('\n'));
    }
    for note in &read.notes {
        text.push('\n');
        text.push_str(note);
    }
    let exit_code = match read.state {
        JobState::Exited { code, .. } => Some(code),
        JobState::Running | JobState::Killed => None,
    };
    ToolOutput {
        content: vec![lathe_protocol::Content::text(text)],
        is_error: exit_code.is_some_and(|code| code != 0),
        exit_code,
        spill_path,
        ..ToolOutput::default()
    }
}

/// `shell` without `run_in_background`: for a tool set that leaves out `shell_output` and
/// `shell_kill` (the local model's), so that no job is started that the model cannot follow. A
/// failed command's `NameError` of an unimported standard-library module gets a hint with the edit
/// that adds the import ([`super::python_hint`]).
#[derive(Debug, Clone, Copy)]
pub struct ForegroundShell(pub Shell);

/// Arguments of the foreground-only `shell`: [`ShellArgs`] without `run_in_background`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ForegroundShellArgs {
    /// Bash command line.
    pub command: String,
    /// Timeout in ms (default 120000, max 600000).
    #[schemars(range(min = 1))]
    pub timeout_ms: Option<u64>,
    /// Working directory (default: workspace root).
    pub workdir: Option<String>,
}

impl ForegroundShellArgs {
    fn into_shell(self) -> ShellArgs {
        ShellArgs {
            command: self.command,
            timeout_ms: self.timeout_ms,
            workdir: self.workdir,
            run_in_background: None,
        }
    }

    fn as_shell(&self) -> ShellArgs {
        ShellArgs {
            command: self.command.clone(),
            timeout_ms: self.timeout_ms,
            workdir: self.workdir.clone(),
            run_in_background: None,
        }
    }
}

impl Tool for ForegroundShell {
    type Args = ForegroundShellArgs;

    fn name(&self) -> &'static str {
        "shell"
    }

    fn description(&self) -> &'static str {
        Tool::description(&self.0)
    }

    fn effect(&self) -> Effect {
        Effect::Mutating
    }

    fn access(&self, args: &ForegroundShellArgs, ctx: &ToolContext) -> Access {
        Tool::access(&self.0, &args.as_shell(), ctx)
    }

    fn preview(&self, args: &ForegroundShellArgs, ctx: &ToolContext) -> Option<lathe_protocol::ToolPreview> {
        Tool::preview(&self.0, &args.as_shell(), ctx)
    }

    async fn run(&self, args: ForegroundShellArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let mut output = self.0.run(args.into_shell(), ctx).await?;
        if output.exit_code != Some(0)
            && let Some(hint) = super::python_hint::name_error_hint(&output.text_content(), &ctx.workspace)
        {
            output.content.push(lathe_protocol::Content::Text { text: hint });
        }
        Ok(output)
    }
}

#[cfg(test)]
#[path = "shell_jobs_tests.rs"]
mod tests;
