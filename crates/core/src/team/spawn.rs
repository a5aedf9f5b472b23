//! Starting a teammate's process: `lathe [the lead's provider flags] -C <workspace> --model <m>
//! teammate --team <t> --name <n> --attached`, in a session and process group of its own (so the
//! lead can end all of it), its stdin a pipe from the lead (closed when the lead exits, however it
//! exits: the teammate takes that as the end) and its stderr in `<team>/logs/<name>.log`; and the
//! git worktree of a teammate started with `isolation: worktree`.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use tokio::process::{Child, Command};

use super::TeamError;

/// How the lead starts teammates.
#[derive(Debug, Clone, Default)]
pub struct Launch {
    /// The `lathe` executable.
    pub exe: PathBuf,
    /// The flags that give a teammate the lead's provider, limits and permission settings
    /// (`--provider X --base-url U --sandbox S …`); the model and the mode are added per start.
    pub args: Vec<String>,
    /// The lead's model (a teammate's agent type may name another).
    pub model: String,
    /// The lead has a person at hand: teammates put their permission prompts to it
    /// (`--lead-approves`, [`super::approval`]).
    pub lead_approves: bool,
}

/// Starts the teammate `name` of the team `team` (folder `dir`) in `workspace`.
pub(crate) fn start(
    launch: &Launch,
    dir: &Path,
    team: &str,
    name: &str,
    workspace: &Path,
    model: &str,
    mode: &str,
) -> Result<Child, TeamError> {
    let logs = dir.join("logs");
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |error| TeamError::Io { path, error }
    };
    std::fs::create_dir_all(&logs).map_err(io(&logs))?;
    let log_path = logs.join(format!("{name}.log"));
    let log = std::fs::OpenOptions::new().create(true).append(true).open(&log_path).map_err(io(&log_path))?;
    let mut command = Command::new(&launch.exe);
    command
        .args(&launch.args)
        .arg("-C")
        .arg(workspace)
        .args(["--model", model, "--permission-mode", mode])
        .args(["teammate", "--team", team, "--name", name, "--attached"])
        .args(launch.lead_approves.then_some("--lead-approves"))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::from(log))
        .kill_on_drop(true);
    lathe_process::new_session(&mut command);
    command.spawn().map_err(io(&launch.exe))
}

/// Makes the git worktree `<dir>/worktrees/<name>` of the repository at `workspace`, on a new
/// branch `team/<team>/<name>` from its `HEAD`.
pub(crate) async fn worktree(
    workspace: &Path,
    dir: &Path,
    team: &str,
    name: &str,
) -> Result<PathBuf, TeamError> {
    let path = dir.join("worktrees").join(name);
    if path.exists() {
        return Ok(path);
    }
    let branch = format!("team/{team}/{name}");
    let output = Command::new("git")
        .arg("-C")
        .arg(workspace)
        .args(["worktree", "add", "-b", &branch])
        .arg(&path)
        .arg("HEAD")
        .stdin(Stdio::null())
        .output()
        .await
        .map_err(|error| TeamError::Io { path: PathBuf::from("git"), error })?;
    if !output.status.success() {
        return Err(TeamError::Invalid(format!(
            "isolation: worktree needs a git repository with a commit at {}: git worktree add failed: {}",
            workspace.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    Ok(path)
}
