//! Piped stdin for headless mode, without ever waiting on a pipe that stays silent.
//!
//! `git diff | lathe -p "review this"` appends what was piped to the prompt. But a script or an
//! IDE may start Lathe with stdin an open pipe that is never written or closed; reading it to the
//! end would wait forever before the first request. So stdin is read only when it is not a
//! terminal and, within [`STDIN_WAIT`], has data or is at its end (a closed pipe, `/dev/null`, a
//! file); otherwise it is left alone and the caller says so on stderr. Once data has arrived,
//! stdin is read to its end.

use std::io::Read;
use std::os::fd::AsRawFd;
use std::time::Duration;

/// How long to wait for piped stdin to become readable.
pub const STDIN_WAIT: Duration = Duration::from_millis(1_000);

/// What stdin gave.
#[derive(Debug, PartialEq, Eq)]
pub enum Piped {
    /// Stdin is a terminal: nothing is piped.
    Terminal,
    /// The piped text (possibly empty).
    Text(String),
    /// Stdin was not read; the reason says why.
    NotRead {
        /// One line for stderr.
        reason: String,
    },
}

/// Reads piped stdin as described in the module docs.
pub fn read_piped(wait: Duration) -> Piped {
    use std::io::IsTerminal;
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Piped::Terminal;
    }
    let mut poll = libc::pollfd { fd: stdin.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    let timeout_ms = i32::try_from(wait.as_millis()).unwrap_or(i32::MAX);
    // SAFETY: `poll` reads and writes exactly the one `pollfd` passed (count 1), which lives on
    // this stack frame for the whole call.
    let ready = unsafe { libc::poll(&mut poll, 1, timeout_ms) };
    if ready < 0 {
        let error = std::io::Error::last_os_error();
        return Piped::NotRead { reason: format!("stdin was not read: cannot wait on it ({error})") };
    }
    if ready == 0 {
        return Piped::NotRead {
            reason: format!(
                "stdin was not read: it is not a terminal, but no data and no end of input arrived within {} ms \
                 (close the pipe or redirect stdin from /dev/null to silence this)",
                wait.as_millis()
            ),
        };
    }
    if poll.revents & libc::POLLNVAL != 0 {
        return Piped::Text(String::new());
    }
    let mut bytes = Vec::new();
    match stdin.lock().read_to_end(&mut bytes) {
        Ok(_) => Piped::Text(String::from_utf8_lossy(&bytes).into_owned()),
        Err(error) => Piped::NotRead { reason: format!("stdin was not read: {error}") },
    }
}
