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
