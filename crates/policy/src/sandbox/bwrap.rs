//! bubblewrap: the command line that confines one command.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::{NetworkAccess, Sandbox, SandboxMode};

/// Finds `bwrap` on `PATH` and checks that it can set up a sandbox here (user namespaces may be
/// off, or a container may forbid mounts).
pub(super) fn probe() -> Result<PathBuf, String> {
    let path = std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|dir| dir.join("bwrap")).find(|p| p.is_file()))
        .ok_or_else(|| "bubblewrap (bwrap) is not installed".to_string())?;
    let output = std::process::Command::new(&path)
        .args(["--ro-bind", "/", "/", "--dev", "/dev", "--unshare-net", "--", "true"])
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("bwrap cannot start: {e}"))?;
    if output.status.success() {
        Ok(path)
    } else {
        let stderr = String::from_utf8_lossy(&output.stderr);
        Err(format!("bwrap cannot create a sandbox here: {}", stderr.trim()))
    }
}

pub(super) fn command(
    sandbox: &Sandbox,
    bwrap: &Path,
    program: &str,
    args: &[&OsStr],
    cwd: &Path,
) -> std::process::Command {
    let mut command = std::process::Command::new(bwrap);
    command.args(["--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]);
    if sandbox.mode == SandboxMode::WorkspaceWrite {
        for root in sandbox.writable.iter().filter(|root| root.is_dir()) {
            command.arg("--bind").arg(root).arg(root);
        }
        command.args(["--bind-try", "/dev/shm", "/dev/shm"]);
        for dir in sandbox.read_only.iter().filter(|dir| dir.exists()) {
            command.arg("--ro-bind").arg(dir).arg(dir);
        }
    }
    if sandbox.network == NetworkAccess::Off {
        command.arg("--unshare-net");
    }
    command.arg("--chdir").arg(cwd).arg("--").arg(program).args(args);
    command.current_dir(cwd);
    command
}
