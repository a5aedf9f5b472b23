//! What a `shell` command inherits and how it is confined: the environment without secrets
//! (FEATURES.md §D), and the OS sandbox wrapper with its note on failures.
//!
//! Variables whose names contain `KEY`, `SECRET`, `TOKEN`, `PASSWORD` (see
//! [`lathe_policy::env::is_secret_name`]) and the provider key variables of the configuration are
//! removed unless listed in `shell_env.keep`; nothing else changes.

use std::ffi::OsStr;
use std::path::Path;

use crate::context::ToolContext;

/// The names of inherited variables a command must not see under `ctx`.
pub fn scrubbed_names(ctx: &ToolContext) -> Vec<String> {
    let names: Vec<String> = std::env::vars_os().filter_map(|(name, _)| name.into_string().ok()).collect();
    lathe_policy::env::to_remove(names.iter().map(String::as_str), &ctx.shell_env.remove, &ctx.shell_env.keep)
}

/// `bash -c COMMAND` in `cwd`, wrapped by the context's sandbox when there is one, with secrets
/// removed from its environment (the caller adds its own variables).
pub fn command(command: &str, cwd: &Path, ctx: &ToolContext) -> tokio::process::Command {
    let args: [&OsStr; 2] = [OsStr::new("-c"), OsStr::new(command)];
    let mut std_command = match &ctx.sandbox {
        Some(sandbox) => sandbox.command("bash", &args, cwd),
        None => {
            let mut plain = std::process::Command::new("bash");
            plain.args(args).current_dir(cwd);
            plain
        }
    };
    for name in scrubbed_names(ctx) {
        std_command.env_remove(name);
    }
    tokio::process::Command::from(std_command)
}

/// A started `bash -c COMMAND`: the child (killed when dropped), the process group it leads and
/// the read end of the one pipe its stdout and stderr share.
pub(crate) struct Spawned {
    /// bash (or the sandbox wrapper around it).
    pub child: tokio::process::Child,
    /// The group it leads; `None` when it was reaped already.
    pub group: Option<lathe_process::Group>,
    /// Output: stdout and stderr, interleaved.
    pub pipe: tokio::net::unix::pipe::Receiver,
}

/// Starts [`command`] in a session of its own (no controlling terminal), stdin null, stdout and
/// stderr on one pipe, with [`super::shell::NON_INTERACTIVE_ENV`] and then `ctx.env` set.
pub(crate) fn spawn(command_line: &str, cwd: &Path, ctx: &ToolContext) -> std::io::Result<Spawned> {
    let (reader, writer) = std::io::pipe()?;
    let writer_err = writer.try_clone()?;
    let mut cmd = command(command_line, cwd, ctx);
    cmd.stdin(std::process::Stdio::null()).stdout(writer).stderr(writer_err).kill_on_drop(true);
    lathe_process::new_session(&mut cmd);
    for (key, value) in super::shell::NON_INTERACTIVE_ENV {
        cmd.env(key, value);
    }
    for (key, value) in &ctx.env {
        cmd.env(key, value);
    }
    let child = cmd.spawn()?;
    // The Command still holds the pipe's write ends; drop it so EOF comes when the group is done.
    drop(cmd);
    let group = lathe_process::Group::of(&child);
    let pipe = tokio::net::unix::pipe::Receiver::from_owned_fd(reader.into())?;
    Ok(Spawned { child, group, pipe })
}

/// A line to append to a failed command's output when the sandbox may be why.
pub fn sandbox_note(ctx: &ToolContext, exit_code: i32, output: &str) -> Option<String> {
    let sandbox = ctx.sandbox.as_ref()?;
    if exit_code == 0
        || sandbox.mode == lathe_policy::SandboxMode::Off
        || lathe_policy::sandbox::backend(sandbox.network).is_err()
    {
        return None;
    }
    sandbox.failure_note(output)
}

/// The line saying what the sandbox undid after a command (`planted`: one entry per path, from
/// [`lathe_policy::sandbox::GitWatch::settle`]); `None` when nothing was planted.
pub(crate) fn planted_note(planted: &[String]) -> Option<String> {
    if planted.is_empty() {
        return None;
    }
    let failed = planted.iter().any(|line| line.starts_with("could not"));
    let warning = if failed {
        " — NOT everything could be undone: git run outside the sandbox in this repository may run code \
         the command planted; tell the user"
    } else {
        ""
    };
    Some(format!(
        "[sandbox: undid what this command left that git or the next session would act on outside the \
         sandbox (a git config redirect, a link git writes through, settings): {}{warning}]",
        planted.join(", ")
    ))
}

/// What a workspace-write sandbox checks around one command: the places git acts on outside the
/// sandbox ([`lathe_policy::sandbox::GitWatch`]) and the repository's index
/// ([`super::git_index::IndexWatch`]). Nothing under other sandboxes or none.
pub(crate) struct Watches {
    git: Option<lathe_policy::sandbox::GitWatch>,
    index: Option<super::git_index::IndexWatch>,
}

impl Watches {
    /// The watches for a command about to start under `ctx`'s sandbox.
    pub(crate) fn new(ctx: &ToolContext) -> Watches {
        let confined =
            ctx.sandbox.as_ref().filter(|sandbox| sandbox.mode == lathe_policy::SandboxMode::WorkspaceWrite);
        Watches {
            git: confined.map(|sandbox| sandbox.watch_git()),
            index: confined.and_then(|_| super::git_index::IndexWatch::new(&ctx.workspace)),
        }
    }

    /// Undoes what the command planted; one note per kind of thing undone, for its result. Call it
    /// once the command and everything it started have exited.
    pub(crate) async fn settle(self) -> Vec<String> {
        let planted = self.git.map(|watch| watch.settle()).unwrap_or_default();
        let mut notes = Vec::new();
        if let Some(watch) = self.index {
            notes.extend(watch.check().await);
        }
        notes.extend(planted_note(&planted));
        notes
    }
}

/// Whether a command under `ctx` runs with the network off (bubblewrap's network namespace, or
/// Landlock refusing TCP): a server it starts cannot be reached from another command.
pub(crate) fn network_off(ctx: &ToolContext) -> bool {
    use lathe_policy::sandbox::Backend;
    let Some(sandbox) = ctx.sandbox.as_ref() else { return false };
    if sandbox.mode == lathe_policy::SandboxMode::Off || sandbox.network != lathe_policy::NetworkAccess::Off {
        return false;
    }
    match lathe_policy::sandbox::backend(sandbox.network) {
        Ok(Backend::Bubblewrap(_)) => true,
        Ok(Backend::Landlock(abi)) => *abi >= 4,
        Err(_) => false,
    }
}
