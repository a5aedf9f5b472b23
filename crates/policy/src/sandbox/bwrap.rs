//! bubblewrap: the command line that confines one command.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::probe::BwrapFailure;
use super::{NetworkAccess, Sandbox, SandboxMode};

/// Finds `bwrap` on `PATH` and checks that it can set up the sandbox commands will run in here,
/// with the same namespaces (user namespaces may be off, a container may forbid mounts or a
/// network namespace).
pub(super) fn probe(network: NetworkAccess) -> Result<PathBuf, BwrapFailure> {
    let path = std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|dir| dir.join("bwrap")).find(|p| p.is_file()))
        .ok_or(BwrapFailure::Missing)?;
    let mut probe = std::process::Command::new(&path);
    probe.args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid"]);
    if network == NetworkAccess::Off {
        probe.arg("--unshare-net");
    }
    let output = probe
        .args(["--", "true"])
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| BwrapFailure::Spawn(e.to_string()))?;
    if output.status.success() {
        Ok(path)
    } else {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let line = stderr.lines().rev().find(|line| !line.trim().is_empty()).unwrap_or("no message");
        Err(BwrapFailure::Refused(line.trim().to_string()))
    }
}

/// The bind mounts of `sandbox`'s view for the paths `keep` accepts, in the order that makes
/// the narrower rules win: writable roots, shielded git dirs, git's writable parts, read-only
/// paths. In `read-only` mode only the workspace (the first root) is bound, read-only, and only
/// when it lies inside a hidden directory (elsewhere `/` already shows it).
fn binds(sandbox: &Sandbox, command: &mut std::process::Command, keep: impl Fn(&Path) -> bool) {
    if sandbox.mode != SandboxMode::WorkspaceWrite {
        let hidden = |path: &Path| sandbox.hidden.iter().any(|dir| path.starts_with(dir));
        if let Some(root) =
            sandbox.writable.first().filter(|root| root.is_dir() && hidden(root) && keep(root))
        {
            command.arg("--ro-bind").arg(root).arg(root);
        }
        return;
    }
    for root in sandbox.writable.iter().filter(|root| root.is_dir() && keep(root)) {
        command.arg("--bind").arg(root).arg(root);
    }
    for dir in sandbox.shield.iter().filter(|dir| dir.exists() && keep(dir)) {
        command.arg("--ro-bind").arg(dir).arg(dir);
    }
    for dir in sandbox.git_writable.iter().filter(|dir| dir.is_dir() && keep(dir)) {
        command.arg("--bind").arg(dir).arg(dir);
    }
    if keep(Path::new("/dev/shm")) {
        command.args(["--bind-try", "/dev/shm", "/dev/shm"]);
    }
    for dir in sandbox.read_only.iter().filter(|dir| dir.exists() && keep(dir)) {
        command.arg("--ro-bind").arg(dir).arg(dir);
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
    // A pid namespace: when the command exits, everything it left running inside dies with it
    // (a `setsid` or double fork cannot outlive the call).
    command.args([
        "--die-with-parent",
        "--unshare-pid",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
    ]);
    binds(sandbox, &mut command, |_| true);
    if !sandbox.hidden.is_empty() {
        // An empty tmpfs over each hidden directory, then what of the sandbox's own view lies
        // inside one bound again (the workspace of a batch task inside the hidden batch root).
        for dir in sandbox.hidden.iter().filter(|dir| dir.is_dir()) {
            command.arg("--tmpfs").arg(dir);
        }
        let inside = |path: &Path| sandbox.hidden.iter().any(|dir| path.starts_with(dir));
        binds(sandbox, &mut command, inside);
    }
    if sandbox.network == NetworkAccess::Off {
        command.arg("--unshare-net");
    }
    command.arg("--chdir").arg(cwd).arg("--").arg(program).args(args);
    command.current_dir(cwd);
    command
}
