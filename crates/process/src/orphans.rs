//! Processes that left their group and outlived their parent: a `setsid` or double-forked daemon
//! a command started, a `nohup server &`. Lathe makes itself their reaper (Linux's
//! `PR_SET_CHILD_SUBREAPER`, prctl(2)): an orphan anywhere below Lathe is re-parented to Lathe
//! instead of to init, so at exit [`end_adopted`] finds and ends every process Lathe's tree left
//! behind, however it detached.

use std::time::{Duration, Instant};

/// Makes this process the reaper of its orphaned descendants. `false` where the kernel refuses
/// (or off Linux); nothing else changes then.
pub fn adopt() -> bool {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: PR_SET_CHILD_SUBREAPER takes an integer flag and touches no memory.
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0) == 0 }
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// Ends every child this process still has (its own and adopted orphans, and theirs as they are
/// re-parented in turn): SIGTERM, up to `grace` for them to exit, then SIGKILL, and reaps them.
/// Returns the pids it ended. Call it at exit, after the session ended what it knows of (MCP
/// servers, running commands): a child still waited for elsewhere would lose its exit status.
pub fn end_adopted(grace: Duration) -> Vec<u32> {
    let mut ended = Vec::new();
    // Most runs end with no child left at all: then there is nothing to look for in /proc (a scan
    // reads the stat file of every process on the machine).
    if !has_children() {
        return ended;
    }
    // Each round ends the current children; their own children become ours when they die.
    for _ in 0..8 {
        let children = children();
        let live: Vec<u32> = children.iter().filter(|(_, zombie)| !zombie).map(|(pid, _)| *pid).collect();
        for (pid, _) in &children {
            reap(*pid);
        }
        if live.is_empty() {
            break;
        }
        signal_all(&live, libc::SIGTERM);
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline && live.iter().any(|pid| alive(*pid)) {
            std::thread::sleep(Duration::from_millis(10));
        }
        signal_all(&live, libc::SIGKILL);
        let deadline = Instant::now() + Duration::from_millis(200);
        while Instant::now() < deadline && live.iter().any(|pid| alive(*pid)) {
            for pid in &live {
                reap(*pid);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        for pid in &live {
            reap(*pid);
        }
        ended.extend(live);
    }
    ended.sort_unstable();
    ended.dedup();
    ended
}

/// Collects the exit status of `pid` if it is a child of this process that has exited, so it
/// leaves no zombie. Only for pids nobody else waits for (not a `tokio::process::Child`).
pub(crate) fn reap(pid: u32) {
    let Ok(pid) = i32::try_from(pid) else { return };
    let mut status = 0;
    // SAFETY: waitpid with WNOHANG only writes the status integer we pass.
    unsafe {
        libc::waitpid(pid, &mut status, libc::WNOHANG);
    }
}

fn signal_all(pids: &[u32], signal: i32) {
    for pid in pids {
        if let Ok(pid) = i32::try_from(*pid) {
            // SAFETY: kill(2) has no memory-safety preconditions; the pid is a child of ours
            // (never 0 or -1, which would signal groups).
            unsafe {
                libc::kill(pid, signal);
            }
        }
    }
}

/// Whether this process has any child, running or exited and not yet reaped: `waitid` on every
/// child, without waiting and without reaping (`WNOHANG | WNOWAIT`), fails with `ECHILD` only when
/// there is none. `true` when the call fails otherwise, so the caller scans anyway.
fn has_children() -> bool {
    // SAFETY: a zeroed siginfo_t is a valid out-parameter; waitid writes only to it.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: P_ALL with id 0 names every child; WNOWAIT leaves any exited child to be reaped later.
    let result =
        unsafe { libc::waitid(libc::P_ALL, 0, &mut info, libc::WEXITED | libc::WNOHANG | libc::WNOWAIT) };
    result == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ECHILD)
}

/// This process's children and whether each is a zombie (`/proc/<pid>/stat`, field 4 `ppid`).
fn children() -> Vec<(u32, bool)> {
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let (state, ppid) = stat(pid)?;
            (ppid == me).then_some((pid, state == "Z"))
        })
        .collect()
}

fn alive(pid: u32) -> bool {
    stat(pid).is_some_and(|(state, _)| state != "Z")
}

/// State and parent of `pid` (`pid (comm) state ppid …`; comm may hold spaces and parentheses).
fn stat(pid: u32) -> Option<(String, u32)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = text.rsplit_once(')')?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.to_string();
    let ppid = fields.next()?.parse().ok()?;
    Some((state, ppid))
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_detached_grandchild_is_adopted_and_ended() {
        // A process of its own for the test: a subreaper flag on the test runner would outlive it.
        if std::env::var_os("LATHE_ORPHAN_CHILD").is_none() {
            let status = std::process::Command::new(std::env::current_exe().expect("exe"))
                .args([
                    "--exact",
                    "orphans::tests::a_detached_grandchild_is_adopted_and_ended",
                    "--nocapture",
                ])
                .env("LATHE_ORPHAN_CHILD", "1")
                .status()
                .expect("run");
            assert!(status.success());
            return;
        }
        assert!(adopt(), "PR_SET_CHILD_SUBREAPER refused");
        let out = std::process::Command::new("bash")
            .args(["-c", "setsid sleep 30 >/dev/null 2>&1 & echo $!"])
            .output()
            .expect("bash");
        let pid: u32 = String::from_utf8_lossy(&out.stdout).trim().parse().expect("pid");
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(stat(pid).map(|(_, ppid)| ppid), Some(std::process::id()), "not adopted");
        let ended = end_adopted(Duration::from_millis(200));
        assert!(ended.contains(&pid), "{ended:?}");
        assert!(stat(pid).is_none(), "still there (or a zombie)");
        assert!(!has_children(), "a child is left");
        assert!(end_adopted(Duration::from_millis(200)).is_empty());
    }
}
