//! The background jobs of a session's `shell` calls (`run_in_background: true`): a dev server, a
//! watcher, anything that runs on past one call.
//!
//! - A [`JobTable`] belongs to the session (every clone of its [`ToolContext`] shares it, sub-agents
//!   included). At most [`MAX_RUNNING_JOBS`] run at once; ids are `job1`, `job2`, … in start order.
//! - A job is `bash -c` started as a foreground command is (a session and process group of its
//!   own, stdin closed, stdout and stderr on one pipe, the same environment and OS sandbox) and
//!   watched by a task of its own that reads the pipe: the last [`RETAINED_BYTES`] stay in memory
//!   for `shell_output`, and everything (up to [`LOG_MAX_BYTES`]) is appended to a log file in the
//!   spill directory, so a chatty server cannot grow Lathe's memory.
//! - When bash exits, the pipe is read to its end (at most [`EXIT_GRACE`] more while something
//!   holds it open), what is left of the group is stopped, and the job has exited. `shell_kill`
//!   and the end of the session ([`JobTable::end_all`]) send SIGTERM to the group, give it
//!   [`JOB_KILL_GRACE`], then SIGKILL ([`lathe_process::Group::terminate`]).
//! - Nothing outlives the session: [`JobTable::end_all`] when it ends, SIGKILL to every group when
//!   the table or a job's task is dropped (a runtime shut down), and Lathe's orphan reaper at exit.
//! - In a workspace-write sandbox, what a job planted for git outside the sandbox is undone when it
//!   ends, as after a foreground command; the next read of the job says so.

use std::collections::VecDeque;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use lathe_process::{Group, GroupGuard};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::shell::{EXIT_GRACE, KILL_GRACE};
use super::shell_env::{Spawned, Watches};
use crate::context::ToolContext;
use crate::tool::ToolError;

/// Most jobs running at once in one session; starting one more is an error.
pub const MAX_RUNNING_JOBS: usize = 8;
/// Bytes of a job's newest output kept in memory for `shell_output`.
pub const RETAINED_BYTES: usize = 256 * 1024;
/// Bytes of a job's output written to its log file at most.
pub const LOG_MAX_BYTES: u64 = 64 * 1024 * 1024;
/// Time between SIGTERM and SIGKILL when a job is stopped (a server closing its port).
pub const JOB_KILL_GRACE: Duration = Duration::from_secs(2);
/// Ended jobs kept for `shell_output`; older ones are forgotten when a new job starts.
const KEPT_ENDED_JOBS: usize = 16;

/// Where a job is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobState {
    /// Still running.
    Running,
    /// bash exited: its exit code (128 + the signal when a signal ended it).
    Exited {
        /// The exit code.
        code: i32,
        /// The signal that ended bash, if one did.
        signal: Option<i32>,
    },
    /// Stopped by `shell_kill` or at the end of the session.
    Killed,
}

impl JobState {
    /// Whether the job still runs.
    pub fn is_running(self) -> bool {
        self == JobState::Running
    }

    /// `running`, `exited 0`, `exited 137 (signal 9)`, `killed`.
    pub fn label(self) -> String {
        match self {
            JobState::Running => "running".into(),
            JobState::Exited { code, signal: None } => format!("exited {code}"),
            JobState::Exited { code, signal: Some(signal) } => format!("exited {code} (signal {signal})"),
            JobState::Killed => "killed".into(),
        }
    }
}

/// One job as `/jobs` and `/status` list it.
#[derive(Debug, Clone, PartialEq)]
pub struct JobSummary {
    /// `job1`.
    pub id: String,
    /// The command line.
    pub command: String,
    /// bash's pid (the job's process group).
    pub pid: Option<u32>,
    /// Where it is.
    pub state: JobState,
    /// Time since it started.
    pub age: Duration,
    /// How long it ran (until now while it runs).
    pub ran: Duration,
    /// The file all of its output goes to, `None` when it could not be created.
    pub log: Option<PathBuf>,
}

/// The session's background jobs (see the module docs).
#[derive(Debug, Default)]
pub struct JobTable {
    jobs: Mutex<Jobs>,
}

#[derive(Debug, Default)]
struct Jobs {
    started: u32,
    list: Vec<Arc<Job>>,
}

/// A running or ended job.
#[derive(Debug)]
pub(crate) struct Job {
    pub(crate) id: String,
    pub(crate) command: String,
    pub(crate) pid: Option<u32>,
    group: Option<Group>,
    started: Instant,
    pub(crate) log: Option<PathBuf>,
    shared: Mutex<Shared>,
    /// Bumped on new output and when the job ends.
    version: watch::Sender<u64>,
    /// Asks the job's task to stop it.
    kill: CancellationToken,
}

#[derive(Debug)]
struct Shared {
    /// The newest output, at most [`RETAINED_BYTES`].
    retained: VecDeque<u8>,
    /// Bytes received in all.
    total: u64,
    /// Bytes handed out by [`Job::take`] (or dropped from memory before they were).
    read: u64,
    state: JobState,
    ended: Option<Instant>,
    /// What the next read reports once: the log file's trouble, what the sandbox undid.
    notes: Vec<String>,
}

/// New output of a job, as [`Job::take`] hands it out.
#[derive(Debug)]
pub(crate) struct Taken {
    /// The bytes, from where the last read stopped.
    pub(crate) bytes: Vec<u8>,
    /// Bytes that left memory before anyone read them (they are in the log file).
    pub(crate) dropped: u64,
    /// The job's state when the bytes were taken.
    pub(crate) state: JobState,
    /// Notes to report once.
    pub(crate) notes: Vec<String>,
}

impl JobTable {
    /// An empty table.
    pub fn new() -> JobTable {
        JobTable::default()
    }

    fn lock(&self) -> MutexGuard<'_, Jobs> {
        self.jobs.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Starts `command` in `cwd` as the next job, its output logged in `ctx.spill_dir`; `watches`
    /// are settled when it ends. [`ToolError::Failed`] when [`MAX_RUNNING_JOBS`] already run or
    /// bash cannot start.
    pub(crate) fn start(
        &self,
        command: &str,
        cwd: &Path,
        ctx: &ToolContext,
        watches: Watches,
    ) -> Result<Arc<Job>, ToolError> {
        let mut jobs = self.lock();
        let running: Vec<&str> =
            jobs.list.iter().filter(|job| job.state().is_running()).map(|job| job.id.as_str()).collect();
        if running.len() >= MAX_RUNNING_JOBS {
            return Err(ToolError::Failed(format!(
                "shell: {MAX_RUNNING_JOBS} background jobs are running already ({}); stop one with shell_kill first",
                running.join(", ")
            )));
        }
        let spawned = super::shell_env::spawn(command, cwd, ctx)
            .map_err(|e| ToolError::Failed(format!("shell: cannot start bash: {e}")))?;
        jobs.started += 1;
        let id = format!("job{}", jobs.started);
        let (log, log_file, log_problem) = open_log(&ctx.spill_dir, &id);
        let job = Arc::new(Job {
            id,
            command: command.to_string(),
            pid: spawned.child.id(),
            group: spawned.group,
            started: Instant::now(),
            log,
            shared: Mutex::new(Shared {
                retained: VecDeque::new(),
                total: 0,
                read: 0,
                state: JobState::Running,
                ended: None,
                notes: log_problem.into_iter().collect(),
            }),
            version: watch::Sender::new(0),
            kill: CancellationToken::new(),
        });
        let wrapper: &'static [&'static str] = if ctx.sandbox.is_some() { &["bwrap"] } else { &[] };
        tokio::spawn(supervise(job.clone(), spawned, log_file, watches, wrapper));
        let ended = jobs.list.iter().filter(|job| !job.state().is_running()).count();
        let mut forget = ended.saturating_sub(KEPT_ENDED_JOBS);
        jobs.list.retain(|job| {
            let drop = forget > 0 && !job.state().is_running();
            forget -= usize::from(drop);
            !drop
        });
        jobs.list.push(job.clone());
        Ok(job)
    }

    /// The job called `id`.
    pub(crate) fn get(&self, id: &str) -> Option<Arc<Job>> {
        self.lock().list.iter().find(|job| job.id == id.trim()).cloned()
    }

    /// The ids of the jobs the table holds, in start order.
    pub(crate) fn ids(&self) -> Vec<String> {
        self.lock().list.iter().map(|job| job.id.clone()).collect()
    }

    /// Every job the table holds, in start order.
    pub fn list(&self) -> Vec<JobSummary> {
        self.lock().list.iter().map(|job| job.summary()).collect()
    }

    /// Stops every running job (SIGTERM, [`JOB_KILL_GRACE`], SIGKILL, all at once) and returns
    /// them as they were when asked to stop. Call it when the session ends.
    pub async fn end_all(&self) -> Vec<JobSummary> {
        let running: Vec<Arc<Job>> =
            self.lock().list.iter().filter(|job| job.state().is_running()).cloned().collect();
        let summaries = running.iter().map(|job| job.summary()).collect();
        futures::future::join_all(running.iter().map(|job| job.stop())).await;
        summaries
    }
}

impl Drop for JobTable {
    /// The last word: a job still running when the session is gone is killed.
    fn drop(&mut self) {
        for job in self.lock().list.iter().filter(|job| job.state().is_running()) {
            if let Some(group) = job.group {
                group.signal(lathe_process::SIGKILL);
            }
        }
    }
}

impl Job {
    fn shared(&self) -> MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Where the job is now.
    pub(crate) fn state(&self) -> JobState {
        self.shared().state
    }

    /// The job as `/jobs` lists it.
    pub(crate) fn summary(&self) -> JobSummary {
        let shared = self.shared();
        let now = Instant::now();
        JobSummary {
            id: self.id.clone(),
            command: self.command.clone(),
            pid: self.pid,
            state: shared.state,
            age: now.duration_since(self.started),
            ran: shared.ended.unwrap_or(now).duration_since(self.started),
            log: self.log.clone(),
        }
    }

    /// Changes whenever output comes or the job ends: wait on it between [`Job::take`]s.
    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.version.subscribe()
    }

    /// The output since the last take. While the job runs, an incomplete UTF-8 character at the
    /// end is left for the next take, and so is an incomplete last line when `whole_lines`.
    pub(crate) fn take(&self, whole_lines: bool) -> Taken {
        let mut shared = self.shared();
        let in_memory_from = shared.total - shared.retained.len() as u64;
        let dropped = in_memory_from.saturating_sub(shared.read);
        let start = (shared.read.max(in_memory_from) - in_memory_from) as usize;
        let mut bytes: Vec<u8> = shared.retained.range(start..).copied().collect();
        if shared.state.is_running() {
            let complete = match std::str::from_utf8(&bytes) {
                Err(error) if error.error_len().is_none() => error.valid_up_to(),
                Ok(_) | Err(_) => bytes.len(),
            };
            let end = if whole_lines {
                bytes[..complete].iter().rposition(|byte| *byte == b'\n').map_or(0, |at| at + 1)
            } else {
                complete
            };
            bytes.truncate(end);
        }
        shared.read = shared.read.max(in_memory_from) + bytes.len() as u64;
        Taken { bytes, dropped, state: shared.state, notes: std::mem::take(&mut shared.notes) }
    }

    /// Asks the job's task to stop the job and waits until it has (or gives up after twice
    /// [`JOB_KILL_GRACE`] and a second, then kills the group itself).
    pub(crate) async fn stop(&self) {
        let mut changes = self.subscribe();
        self.kill.cancel();
        let ended = async {
            while self.state().is_running() {
                if changes.changed().await.is_err() {
                    return;
                }
            }
        };
        if tokio::time::timeout(JOB_KILL_GRACE * 2 + Duration::from_secs(1), ended).await.is_err()
            && let Some(group) = self.group
        {
            group.signal(lathe_process::SIGKILL);
        }
    }

    fn push(&self, bytes: &[u8]) {
        let mut shared = self.shared();
        shared.total += bytes.len() as u64;
        let keep = bytes.len().min(RETAINED_BYTES);
        shared.retained.extend(&bytes[bytes.len() - keep..]);
        let excess = shared.retained.len().saturating_sub(RETAINED_BYTES);
        shared.retained.drain(..excess);
        drop(shared);
        self.version.send_modify(|version| *version += 1);
    }

    fn finish(&self, state: JobState, notes: Vec<String>) {
        let mut shared = self.shared();
        shared.state = state;
        shared.ended = Some(Instant::now());
        shared.notes.extend(notes);
        drop(shared);
        self.version.send_modify(|version| *version += 1);
    }
}

/// The job's log file `<spill_dir>/shell-<id>-<unix ms>-<pid>.log`: its path, the open file, or
/// why there is none.
fn open_log(spill_dir: &Path, id: &str) -> (Option<PathBuf>, Option<std::fs::File>, Option<String>) {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_millis())
        .unwrap_or(0);
    let path = spill_dir.join(format!("shell-{id}-{ms}-{}.log", std::process::id()));
    match std::fs::create_dir_all(spill_dir).and_then(|()| std::fs::File::create(&path)) {
        Ok(file) => (Some(path), Some(file), None),
        Err(e) => (None, None, Some(format!("[the job's output is not logged to a file: {e}]"))),
    }
}

/// The job's task: reads its output until bash has exited and the pipe is done (or the kill
/// token fires), then stops what is left of the group, settles the sandbox's watches and
/// records the end.
async fn supervise(
    job: Arc<Job>,
    spawned: Spawned,
    log: Option<std::fs::File>,
    watches: Watches,
    wrapper: &'static [&'static str],
) {
    let Spawned { mut child, group, mut pipe } = spawned;
    // Dropped mid-run (the runtime shut down), the task takes the whole group with it.
    let mut guard = GroupGuard::new(group);
    let mut log = Log { file: log.map(tokio::fs::File::from_std), written: 0 };
    let mut chunk = vec![0u8; 64 * 1024];
    let (mut status, mut exited_at, mut eof) = (None, None, false);
    let killed = loop {
        if eof && status.is_some() {
            break false;
        }
        let grace_end = exited_at.map(|at: tokio::time::Instant| at + EXIT_GRACE);
        tokio::select! {
            () = job.kill.cancelled() => break true,
            read = pipe.read(&mut chunk), if !eof => match read {
                Ok(0) | Err(_) => eof = true,
                Ok(n) => {
                    job.push(&chunk[..n]);
                    log.write(&chunk[..n], &job).await;
                }
            },
            waited = child.wait(), if status.is_none() => {
                status = Some(waited);
                exited_at = Some(tokio::time::Instant::now());
            }
            () = sleep_until(grace_end), if !eof => break false,
        }
    };
    let state = if killed {
        match group {
            Some(group) => group.terminate(&mut child, JOB_KILL_GRACE).await,
            None => {
                let _ = child.start_kill();
                let _ = child.wait().await;
            }
        }
        // What the job wrote while it shut down (bounded: a process that left the group may
        // hold the pipe open).
        let deadline = tokio::time::Instant::now() + EXIT_GRACE;
        while let Ok(Ok(n)) = tokio::time::timeout_at(deadline, pipe.read(&mut chunk)).await {
            if n == 0 {
                break;
            }
            job.push(&chunk[..n]);
            log.write(&chunk[..n], &job).await;
        }
        JobState::Killed
    } else {
        if let Some(group) = group {
            group.end_rest_except(KILL_GRACE, wrapper).await;
        }
        match status {
            Some(Ok(status)) => JobState::Exited {
                code: status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0)),
                signal: status.signal(),
            },
            Some(Err(e)) => {
                job.shared().notes.push(format!("[waiting for bash failed: {e}]"));
                JobState::Exited { code: 1, signal: None }
            }
            None => JobState::Exited { code: 1, signal: None },
        }
    };
    guard.disarm();
    log.flush().await;
    // The job's process group is gone (and, under bubblewrap, its pid namespace).
    let notes = watches.settle().await;
    job.finish(state, notes);
}

/// Sleeps until `at`; never wakes without one.
async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// A job's log file and how much went into it.
struct Log {
    file: Option<tokio::fs::File>,
    written: u64,
}

impl Log {
    /// Appends `bytes` up to [`LOG_MAX_BYTES`]; a failed write ends the log with a note for `job`.
    async fn write(&mut self, bytes: &[u8], job: &Job) {
        let Some(file) = &mut self.file else { return };
        let room = LOG_MAX_BYTES.saturating_sub(self.written);
        let now = &bytes[..bytes.len().min(usize::try_from(room).unwrap_or(usize::MAX))];
        let mut result = file.write_all(now).await;
        self.written += now.len() as u64;
        if result.is_ok() && now.len() < bytes.len() {
            let marker = format!("\n[lathe: the log stops here, at {LOG_MAX_BYTES} bytes]\n");
            result = file.write_all(marker.as_bytes()).await;
            let _ = file.flush().await;
            self.file = None;
            job.shared()
                .notes
                .push(format!("[the job's log file is full: it keeps the first {LOG_MAX_BYTES} bytes]"));
        }
        if let Err(e) = result {
            self.file = None;
            job.shared().notes.push(format!("[writing the job's log file failed: {e}; it stops there]"));
        }
    }

    async fn flush(&mut self) {
        if let Some(file) = &mut self.file {
            let _ = file.flush().await;
        }
    }
}

#[cfg(test)]
#[path = "jobs_tests.rs"]
mod tests;
