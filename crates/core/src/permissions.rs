//! Turns configuration into a session's permission machinery: the [`Policy`] (rules from the six
//! settings files, path guard, plan file, sandbox fallback), the OS [`Sandbox`] of `shell`, and the
//! shell's environment policy. Reads nothing itself (the settings files come read and parsed, see
//! [`crate::config::SettingsSources`]): the shell parser is loaded on first use, and the sandbox
//! backend is probed in the background ([`start_sandbox_probe`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use lathe_policy::sandbox::Sandbox;
use lathe_policy::{NetworkAccess, PermissionMode, Policy, PolicyConfig, SandboxMode};
use lathe_tools::ShellEnv;

use crate::config::{ConfigLayer, SettingsSources};

/// Provider key variables Lathe reads by default (removed from commands' environment).
const PROVIDER_KEYS: &[&str] = &["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY"];

/// A session's permission machinery.
pub struct Permissions {
    /// The decision maker.
    pub policy: Arc<Policy>,
    /// The sandbox of `shell` (`None` when off).
    pub sandbox: Option<Arc<Sandbox>>,
    /// What commands inherit.
    pub shell_env: ShellEnv,
    /// Settings problems to show at start-up (each names the file and the rule).
    pub warnings: Vec<String>,
}

/// The sandbox a session in `mode` runs commands in: `[sandbox] mode` (default `workspace-write`,
/// `off` under `--yolo` unless configured) and `[sandbox] network` (default off).
pub fn sandbox_settings(layer: &ConfigLayer, mode: PermissionMode) -> (SandboxMode, NetworkAccess) {
    // `--yolo` drops the sandbox too (as Codex's does), unless the user configured one.
    let default_sandbox =
        if mode == PermissionMode::Bypass { SandboxMode::Off } else { SandboxMode::WorkspaceWrite };
    (layer.sandbox.mode.unwrap_or(default_sandbox), layer.sandbox.network.unwrap_or(NetworkAccess::Off))
}

/// Starts probing the sandbox backend on a background thread when the session will use one, so
/// the answer is ready by the time `init`, `/status` or the first command needs it.
pub fn start_sandbox_probe(layer: &ConfigLayer, mode: PermissionMode) {
    let (sandbox, network) = sandbox_settings(layer, mode);
    if sandbox != SandboxMode::Off {
        lathe_policy::sandbox::probe::start(network);
    }
}

/// One line on the sandbox for `init` and `/status`, and a warning when the backend is not the
/// first choice (see [`lathe_policy::sandbox::probe::Probed::warning`]). Waits for the probe.
pub fn sandbox_state(layer: &ConfigLayer, mode: PermissionMode) -> (String, Option<String>) {
    let (sandbox, network) = sandbox_settings(layer, mode);
    let warning = (sandbox != SandboxMode::Off)
        .then(|| lathe_policy::sandbox::probe::probed(network).warning())
        .flatten();
    (lathe_policy::sandbox::describe(sandbox, network), warning)
}

/// Builds the permission machinery of a session in `workspace` under `mode`, with the rules of
/// `settings` (the session's settings files, read once; hooks come from the same ones).
/// `lathe_home` is `~/.lathe` (or `$LATHE_HOME`); the plan file is
/// `<lathe_home>/plans/<session_id>.md`.
pub fn permissions(
    layer: &ConfigLayer,
    settings: &SettingsSources,
    mode: PermissionMode,
    workspace: &Path,
    lathe_home: &Path,
    session_id: &str,
) -> Permissions {
    let home = settings.home.clone();
    let loaded = lathe_policy::settings::load_read(&settings.files, home.as_deref());
    let warnings = loaded.problems.clone();
    let (sandbox_mode, network) = sandbox_settings(layer, mode);
    let hidden = hidden_dirs();
    let policy = Policy::new(PolicyConfig {
        mode,
        workspace: workspace.to_path_buf(),
        home,
        settings: loaded,
        protected: settings.paths().map(Path::to_path_buf).collect(),
        protected_dirs: memory_dirs(lathe_home, workspace),
        plan_file: Some(plan_file(lathe_home, session_id)),
        sandbox: sandbox_mode,
        network,
    })
    .hiding(&hidden);
    let sandbox = (sandbox_mode != SandboxMode::Off).then(|| {
        Arc::new(Sandbox::new(sandbox_mode, network, policy.guard().writable_roots()).hiding(hidden))
    });
    let mut remove: Vec<String> = PROVIDER_KEYS.iter().map(|name| name.to_string()).collect();
    remove.extend(layer.providers.values().filter_map(|entry| entry.api_key_env.clone()));
    let shell_env = ShellEnv { keep: layer.shell_env.keep.clone().unwrap_or_default(), remove };
    Permissions { policy: Arc::new(policy), sandbox, shell_env, warnings }
}

/// Directories file tools and shell commands must not see: `LATHE_SANDBOX_HIDE`, a `PATH`-style list (`lathe
/// batch` hides the other tasks' workspaces and the results folder from each task's agent).
fn hidden_dirs() -> Vec<std::path::PathBuf> {
    std::env::var_os("LATHE_SANDBOX_HIDE")
        .map(|list| std::env::split_paths(&list).filter(|path| path.is_absolute()).collect())
        .unwrap_or_default()
}

/// The memory folders of a session in `workspace` (user, project, and the repository's shared
/// one), which file tools never write.
fn memory_dirs(lathe_home: &Path, workspace: &Path) -> Vec<std::path::PathBuf> {
    let roots = crate::memory::Roots::for_workspace(lathe_home, workspace);
    [Some(roots.user), Some(roots.project), roots.shared].into_iter().flatten().collect()
}

/// Where plan mode writes its plan: `<lathe_home>/plans/<session_id>.md`.
pub fn plan_file(lathe_home: &Path, session_id: &str) -> PathBuf {
    lathe_home.join("plans").join(format!("{session_id}.md"))
}
