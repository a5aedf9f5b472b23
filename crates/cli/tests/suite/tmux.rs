//! Driving the real `lathe` binary in a tmux pane: start a private tmux server, type into the pane,
//! and read what the pane shows (including its scrollback). Every wait polls for a condition with a
//! deadline and fails with the pane's content.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A tmux server with one pane running a script.
pub struct Tmux {
    socket: PathBuf,
}

/// Fails the test clearly when tmux is not installed.
fn require_tmux() {
    let found = Command::new("tmux").arg("-V").output().is_ok_and(|out| out.status.success());
    assert!(
        found,
        "tmux was not found: the terminal UI end-to-end tests drive lathe in a tmux pane; \
         install it with scripts/install-build-deps.sh (apt-get install tmux)"
    );
}

impl Tmux {
    /// Starts a server whose socket lives in `dir`, with a `width`×`height` pane running `script`.
    pub fn start(dir: &Path, width: u16, height: u16, script: &Path) -> Tmux {
        require_tmux();
        let tmux = Tmux { socket: dir.join("tmux.sock") };
        let status = tmux
            .command()
            .args(["-f", "/dev/null", "new-session", "-d", "-s", "ui", "-x"])
            .arg(width.to_string())
            .arg("-y")
            .arg(height.to_string())
            .arg(script)
            .status()
            .unwrap_or_else(|e| panic!("start tmux: {e}"));
        assert!(status.success(), "tmux new-session failed");
        let _ = tmux.command().args(["set-option", "-t", "ui", "history-limit", "5000"]).status();
        tmux
    }

    fn command(&self) -> Command {
        let mut command = Command::new("tmux");
        command.arg("-S").arg(&self.socket);
        command
    }

    /// Types `text` literally.
    pub fn type_text(&self, text: &str) {
        let status = self.command().args(["send-keys", "-t", "ui", "-l", text]).status();
        assert!(status.is_ok_and(|s| s.success()), "tmux send-keys -l failed");
    }

    /// Sends key names (`Enter`, `C-c`, `Escape`).
    pub fn keys(&self, keys: &[&str]) {
        let status = self.command().args(["send-keys", "-t", "ui"]).args(keys).status();
        assert!(status.is_ok_and(|s| s.success()), "tmux send-keys failed");
    }

    /// Resizes the pane's window to `width`×`height` (the program gets SIGWINCH).
    pub fn resize(&self, width: u16, height: u16) {
        let status = self
            .command()
            .args(["resize-window", "-t", "ui", "-x"])
            .arg(width.to_string())
            .arg("-y")
            .arg(height.to_string())
            .status();
        assert!(status.is_ok_and(|s| s.success()), "tmux resize-window failed");
    }

    /// The visible screen only, as text.
    pub fn screen(&self) -> String {
        let out = self
            .command()
            .args(["capture-pane", "-p", "-t", "ui"])
            .output()
            .unwrap_or_else(|e| panic!("tmux capture-pane: {e}"));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Loads `file` into tmux's paste buffer.
    pub fn load_buffer(&self, file: &Path) {
        let status = self.command().arg("load-buffer").arg(file).status();
        assert!(status.is_ok_and(|s| s.success()), "tmux load-buffer failed");
    }

    /// Pastes the buffer into the pane as a bracketed paste (when the program asked for one).
    pub fn paste(&self) {
        let status = self.command().args(["paste-buffer", "-p", "-t", "ui"]).status();
        assert!(status.is_ok_and(|s| s.success()), "tmux paste-buffer failed");
    }

    /// Pastes the buffer as a terminal without bracketed paste would: its bytes in one write,
    /// line feeds sent as `\r` (what Enter sends).
    pub fn paste_unbracketed(&self) {
        let status = self.command().args(["paste-buffer", "-t", "ui"]).status();
        assert!(status.is_ok_and(|s| s.success()), "tmux paste-buffer failed");
    }

    /// The pane's scrollback and screen as text, wrapped lines joined.
    pub fn capture(&self) -> String {
        let out = self
            .command()
            .args(["capture-pane", "-p", "-J", "-S", "-", "-t", "ui"])
            .output()
            .unwrap_or_else(|e| panic!("tmux capture-pane: {e}"));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits until the pane (with scrollback) shows `needle`; returns the capture.
    pub fn wait_for(&self, needle: &str, timeout: Duration) -> String {
        self.wait_until(timeout, &format!("`{needle}` on the pane"), |text| text.contains(needle))
    }

    /// Waits until `condition` holds for the pane's capture.
    pub fn wait_until(&self, timeout: Duration, what: &str, condition: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let text = self.capture();
            if condition(&text) {
                return text;
            }
            if Instant::now() > deadline {
                panic!("timed out after {timeout:?} waiting for {what}; the pane shows:\n{text}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.command().arg("kill-server").status();
    }
}

/// Waits until `condition` holds (not a pane check: files, processes).
pub fn wait_until(timeout: Duration, what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !condition() {
        assert!(Instant::now() < deadline, "timed out after {timeout:?} waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}
