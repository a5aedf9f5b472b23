//! The exclusive lock every write to a team's shared files takes: `flock(2)` on a `<name>.lock`
//! file beside the file it guards, tried [`LOCK_ATTEMPTS`] times with a growing pause (at most
//! [`MAX_PAUSE`]) before the write gives up with [`TeamError::Locked`].
//!
//! Stale locks: the lock is the kernel's, held by an open file; when its holder dies (a crash, a
//! SIGKILL mid-write) the kernel drops it, so a dead writer never blocks the next one. The lock
//! file itself stays and is reused; it holds the pid of its last holder, which the error names
//! when a live holder keeps it past the bounded retries.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::time::Duration;

use super::TeamError;

/// Tries to take a lock before giving up.
pub const LOCK_ATTEMPTS: u32 = 100;

/// The longest pause between two tries (the first is 1 ms, then doubling): about 2 s in all.
pub const MAX_PAUSE: Duration = Duration::from_millis(25);

/// Runs `write` holding the exclusive lock of `lock_path` (created when missing), released when
/// it returns. Blocks the thread for the pauses between tries: call it off the async runtime's
/// threads (`spawn_blocking`) where contention is possible.
pub fn locked<T>(lock_path: &Path, write: impl FnOnce() -> Result<T, TeamError>) -> Result<T, TeamError> {
    let io = |error| TeamError::Io { path: lock_path.to_path_buf(), error };
    let mut file =
        OpenOptions::new().create(true).read(true).write(true).truncate(false).open(lock_path).map_err(io)?;
    let mut pause = Duration::from_millis(1);
    for _ in 0..LOCK_ATTEMPTS {
        match file.try_lock() {
            Ok(()) => {
                note_holder(&mut file);
                let out = write();
                let _ = file.unlock();
                return out;
            }
            Err(TryLockError::WouldBlock) => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(MAX_PAUSE);
            }
            Err(TryLockError::Error(error)) => return Err(io(error)),
        }
    }
    Err(TeamError::Locked {
        path: lock_path.to_path_buf(),
        holder: holder(&mut file),
        attempts: LOCK_ATTEMPTS,
    })
}

/// Writes this process's pid into the lock file (for the error another writer may give).
fn note_holder(file: &mut File) {
    let _ = file.set_len(0);
    let _ = file.seek(SeekFrom::Start(0));
    let _ = write!(file, "{}", std::process::id());
}

fn holder(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.seek(SeekFrom::Start(0)).ok()?;
    file.read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}
