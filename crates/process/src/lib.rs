//! Child processes in groups of their own, the one place Lathe touches process groups: the shell
//! tool's commands, hook commands, the terminal UI's `!cmd` and stdio MCP servers all start
//! through here, so that ending one ends everything it started (a background job, `npx`'s child).
//! The shell tool's background jobs (`run_in_background`) are groups of this kind too.
//!
//! - [`new_session`] makes the child lead a new session (`setsid(2)`: its own process group and no
//!   controlling terminal, so nothing it starts can open `/dev/tty`); [`new_group`] only a new
//!   process group (`setpgid(0, 0)`).
//! - [`Group`] names the group a started child leads; [`Group::signal`] sends a signal to the
//!   whole group (`killpg(2)`), [`Group::stop`] sends SIGTERM, waits up to a grace period for the
//!   leader, then SIGKILL; [`Group::terminate`] waits for the whole group before the SIGKILL (a
//!   server that closes its port on SIGTERM). A [`GroupGuard`] kills the group when dropped (a
//!   future given up on).
//!
//! - [`orphans`]: Lathe adopts what detached from its group and ends it at exit.
//!
//! The `unsafe` of this module is the `pre_exec` hook (it runs `setsid` between fork and exec) and
//! the `killpg` call; both are documented where they stand.
#![warn(missing_docs)]

use std::time::Duration;

use tokio::process::{Child, Command};

pub mod orphans;

/// `SIGTERM`: asks a group to end.
pub const SIGTERM: i32 = libc::SIGTERM;
/// `SIGKILL`: ends a group at once.
pub const SIGKILL: i32 = libc::SIGKILL;

/// Makes `command`'s child lead a new session (and so a new process group), with no controlling
/// terminal.
pub fn new_session(command: &mut Command) -> &mut Command {
    // SAFETY: `setsid` is async-signal-safe and touches no memory of the parent; the closure runs
    // in the forked child before exec. It cannot fail there: a freshly forked child is never a
    // process group leader.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command
}

/// Makes `command`'s child get SIGKILL when the thread that started it ends (`prctl(2)`
/// `PR_SET_PDEATHSIG`; Linux only, a no-op elsewhere): a child that must not outlive a parent
/// killed with SIGKILL. Start it from a thread that lives as long as the parent does (a tokio
/// worker thread, not a blocking-pool one).
pub fn die_with_parent(command: &mut Command) -> &mut Command {
    #[cfg(target_os = "linux")]
    // SAFETY: `prctl` and `getppid` are async-signal-safe and touch no memory of the parent; the
    // closure runs in the forked child before exec.
    unsafe {
        let parent = libc::getpid();
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent died between fork and prctl: the signal would never come.
            if libc::getppid() != parent {
                libc::_exit(137);
            }
            Ok(())
        });
    }
    command
}

/// Lowers the scheduling priority of the running process `pid` to niceness 10 (`setpriority(2)`):
/// work Lathe starts for itself in the background (the repository state's git commands) then
/// yields the CPU to the session. Best effort: a process that already ended, or an error, is
/// ignored.
pub fn lower_priority(pid: u32) {
    let pid: libc::id_t = pid;
    // SAFETY: `setpriority` reads and writes no memory of this process; a stale pid fails with
    // ESRCH, which is ignored.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, pid, 10);
    }
}

/// Makes `command`'s child lead a new process group (in Lathe's session).
pub fn new_group(command: &mut Command) -> &mut Command {
    command.process_group(0)
}

/// The process group a started child leads (its pid, as [`new_session`] or [`new_group`] made
/// it). Never 0 or 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Group(i32);

impl Group {
    /// The group `child` leads; `None` when it has already been reaped (no pid).
    pub fn of(child: &Child) -> Option<Group> {
        Group::from_pid(child.id()?)
    }

    /// The group led by the process `pid` (the pid of a child started in a group of its own).
    pub fn from_pid(pid: u32) -> Option<Group> {
        i32::try_from(pid).ok().filter(|pid| *pid > 1).map(Group)
    }

    /// The group's id.
    pub fn id(self) -> i32 {
        self.0
    }

    /// Sends `signal` to every process of the group; a group that is gone already is no error.
    pub fn signal(self, signal: i32) {
        // SAFETY: killpg has no memory-safety preconditions; the id is a group a child of Lathe's
        // leads, never 0 or 1 (checked when the `Group` was made), so no other group is signalled.
        let rc = unsafe { libc::killpg(self.0, signal) };
        if rc != 0 {
            tracing::debug!(group = self.0, signal, error = %std::io::Error::last_os_error(), "killpg failed (group already gone?)");
        }
    }

    /// SIGTERM to the group, up to `grace` for `leader` to exit, then SIGKILL to the group, and the
    /// leader reaped (waiting at most `grace` again).
    pub async fn stop(self, leader: &mut Child, grace: Duration) {
        self.signal(SIGTERM);
        let _ = tokio::time::timeout(grace, leader.wait()).await;
        self.signal(SIGKILL);
        let _ = leader.start_kill();
        let _ = tokio::time::timeout(grace, leader.wait()).await;
    }

    /// Ends the group and gives all of it time to shut down cleanly (a dev server closing its
    /// port): SIGTERM to the group, up to `grace` for the leader and every other member to exit,
    /// then SIGKILL to what is left. The leader is reaped (waiting at most `grace` again), and so
    /// are the members that were re-parented to Lathe ([`orphans`]) when the leader exited.
    pub async fn terminate(self, leader: &mut Child, grace: Duration) {
        let members = self.members();
        self.signal(SIGTERM);
        let deadline = tokio::time::Instant::now() + grace;
        let _ = tokio::time::timeout_at(deadline, leader.wait()).await;
        while tokio::time::Instant::now() < deadline && !self.members().is_empty() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        self.signal(SIGKILL);
        let _ = leader.start_kill();
        let _ = tokio::time::timeout(grace, leader.wait()).await;
        let deadline = tokio::time::Instant::now() + Duration::from_millis(100);
        while tokio::time::Instant::now() < deadline && !self.members().is_empty() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        // The leader's status is tokio's to collect; the others have no one else to reap them.
        for pid in members.into_iter().filter(|pid| i64::from(*pid) != i64::from(self.0)) {
            orphans::reap(pid);
        }
    }

    /// Whether any process is still in the group (`killpg(2)` with signal 0; a zombie counts).
    pub fn has_members(self) -> bool {
        // SAFETY: killpg with signal 0 sends nothing and has no memory-safety preconditions; the
        // id is a group a child of Lathe's leads, never 0 or 1.
        unsafe { libc::killpg(self.0, 0) == 0 }
    }

    /// The pids of the processes in the group now (from `/proc/<pid>/stat`, field 5 `pgrp`;
    /// zombies left out). Empty where `/proc` cannot be read. A process that made a session or
    /// group of its own (`setsid`, `setpgid`) has left the group and is not listed.
    pub fn members(self) -> Vec<u32> {
        let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
        let mut pids: Vec<u32> = entries
            .flatten()
            .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| {
                let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
                // `pid (comm) state ppid pgrp …`: comm may hold spaces and parentheses.
                let Some((_, rest)) = stat.rsplit_once(')') else { return false };
                let mut fields = rest.split_whitespace();
                let state = fields.next();
                let pgrp = fields.nth(1).and_then(|field| field.parse::<i32>().ok());
                state != Some("Z") && pgrp == Some(self.0)
            })
            .collect();
        pids.sort_unstable();
        pids
    }

    /// Ends what is left of the group after its leader exited: returns the pids that were still in
    /// it, after SIGTERM, up to `grace` for them to go, then SIGKILL. Empty when nothing was left.
    pub async fn end_rest(self, grace: Duration) -> Vec<u32> {
        self.end_rest_except(grace, &[]).await
    }

    /// [`Group::end_rest`], leaving out of the returned pids the processes named `ignored`
    /// (`/proc/<pid>/comm`): a wrapper's own helper that is on its way out, such as the init
    /// process of bubblewrap's pid namespace. They are signalled like the rest.
    pub async fn end_rest_except(self, grace: Duration, ignored: &[&str]) -> Vec<u32> {
        // One syscall in the common case (the group is empty), the /proc scan only when it is not.
        if !self.has_members() {
            return Vec::new();
        }
        let left = self.members();
        if left.is_empty() {
            return left;
        }
        let reported: Vec<u32> = left
            .iter()
            .copied()
            .filter(|pid| {
                let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
                !ignored.contains(&comm.trim_end())
            })
            .collect();
        self.signal(SIGTERM);
        let deadline = tokio::time::Instant::now() + grace;
        while tokio::time::Instant::now() < deadline && !self.members().is_empty() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        self.signal(SIGKILL);
        // They were re-parented to Lathe (see [`orphans`]) when the leader exited; collect their
        // exit status so they leave no zombies. None of them is a child tokio waits for: that is
        // only the leader.
        let deadline = tokio::time::Instant::now() + Duration::from_millis(100);
        while tokio::time::Instant::now() < deadline && !self.members().is_empty() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        for pid in &left {
            orphans::reap(*pid);
        }
        reported
    }
}

/// Kills a group (SIGKILL) when dropped, unless disarmed: what a started child leaves behind
/// when the future running it is dropped mid-run.
#[derive(Debug)]
pub struct GroupGuard(Option<Group>);

impl GroupGuard {
    /// A guard for `group` (`None` guards nothing).
    pub fn new(group: Option<Group>) -> GroupGuard {
        GroupGuard(group)
    }

    /// The group, while armed.
    pub fn group(&self) -> Option<Group> {
        self.0
    }

    /// Lets the group live on (it was stopped or reaped some other way).
    pub fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(group) = self.0 {
            group.signal(SIGKILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alive(pid: i32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|stat| stat.split_whitespace().nth(2) != Some("Z"))
    }

    #[tokio::test]
    async fn stopping_a_group_ends_a_background_child_too() {
        let dir = std::env::temp_dir().join(format!("lathe-process-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_default();
        let pid_file = dir.join("bg.pid");
        let mut command = Command::new("bash");
        command.arg("-c").arg(format!("sleep 30 & echo $! > {}; wait", pid_file.display()));
        new_session(&mut command);
        let Ok(mut child) = command.spawn() else { panic!("bash starts") };
        let group = Group::of(&child);
        let mut background = None;
        for _ in 0..500 {
            background =
                std::fs::read_to_string(&pid_file).ok().and_then(|pid| pid.trim().parse::<i32>().ok());
            if background.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let Some(background) = background else { panic!("the background child started") };
        let Some(group) = group else { panic!("the child leads a group") };
        group.stop(&mut child, Duration::from_millis(500)).await;
        for _ in 0..250 {
            if !alive(background) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(!alive(background), "the background sleep {background} outlived its group");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn what_a_group_leaves_behind_is_listed_and_ended() {
        let mut command = Command::new("bash");
        command.arg("-c").arg("sleep 30 >/dev/null 2>&1 & echo $!");
        command.stdout(std::process::Stdio::piped());
        new_session(&mut command);
        let Ok(child) = command.spawn() else { panic!("bash starts") };
        let Some(group) = Group::of(&child) else { panic!("the child leads a group") };
        let Ok(output) = child.wait_with_output().await else { panic!("bash ends") };
        let background: u32 = String::from_utf8_lossy(&output.stdout).trim().parse().unwrap_or(0);
        assert_eq!(group.members(), vec![background]);
        assert_eq!(group.end_rest(Duration::from_millis(500)).await, vec![background]);
        for _ in 0..250 {
            if group.members().is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(group.members(), Vec::<u32>::new(), "the background sleep outlived end_rest");
        assert_eq!(group.end_rest(Duration::from_millis(10)).await, Vec::<u32>::new());
    }

    #[tokio::test]
    async fn terminating_a_group_lets_a_term_handler_finish_then_ends_the_rest() {
        let dir = std::env::temp_dir().join(format!("lathe-terminate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_default();
        let (cleaned, stubborn_pid) = (dir.join("cleaned"), dir.join("stubborn.pid"));
        // One member cleans up on SIGTERM (after a moment), another ignores SIGTERM.
        let script = format!(
            "sh -c 'trap \"sleep 0.1; touch {}; exit 0\" TERM; while :; do sleep 0.05; done' & \
             sh -c 'trap \"\" TERM; sleep 30' & echo $! > {}; wait",
            cleaned.display(),
            stubborn_pid.display()
        );
        let mut command = Command::new("bash");
        command.arg("-c").arg(script);
        new_session(&mut command);
        let Ok(mut child) = command.spawn() else { panic!("bash starts") };
        let Some(group) = Group::of(&child) else { panic!("the child leads a group") };
        let mut stubborn = None;
        for _ in 0..500 {
            stubborn =
                std::fs::read_to_string(&stubborn_pid).ok().and_then(|pid| pid.trim().parse::<i32>().ok());
            if stubborn.is_some() && group.members().len() >= 3 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let Some(stubborn) = stubborn else { panic!("the members started") };
        group.terminate(&mut child, Duration::from_millis(1_000)).await;
        assert!(cleaned.exists(), "the TERM handler did not get to run");
        assert!(!alive(stubborn), "the member that ignored SIGTERM outlived the group");
        assert_eq!(group.members(), Vec::<u32>::new());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn pids_0_and_1_are_never_a_group() {
        assert_eq!(Group::from_pid(0), None);
        assert_eq!(Group::from_pid(1), None);
        assert_eq!(Group::from_pid(42).map(Group::id), Some(42));
    }
}
