//! The MCP servers of one session: started in parallel in the background, each within its own time
//! limit; a session waits only for the servers whose tools it does not know yet.
//!
//! [`McpStartup::start`] spawns one task per configured server and returns at once, so the rest of
//! session start-up (session file, system prompt) runs while servers start. Each task connects,
//! saves the server's tool list ([`crate::cache`]) and settles the server's slot: ready or failed.
//!
//! - [`McpStartup::session`] (a session): waits for the servers without a remembered tool list
//!   (first start, or a changed configuration), so their tools are in the first request; a server
//!   whose list is remembered starts in the background and its tools are offered from that list
//!   at once. A call of such a tool waits for the server (bounded by its start-up limit). What a
//!   background server turns out to be (failed, tools changed) is said once, by
//!   [`McpServers::late_warnings`].
//! - A server whose list is remembered is not started before the session launches it
//!   ([`McpServers::launch`], [`McpServers::launch_after`]) or a call waits for it: starting
//!   a few Node.js servers takes both cores of a small machine for a while, and print mode
//!   launches them only once its first request is on its way.
//! - [`McpStartup::finish`] (`lathe mcp list`): waits for every server.
//!
//! A server that fails, exits or hangs is left out; the others are unaffected.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::task::JoinHandle;

use crate::cache;
use crate::config::{McpConfig, Scope, ServerConfig, SkipReason};
use crate::connect::{McpSettings, connect};
use crate::slot::{SettleOnDrop, Slot, State};
use crate::tool::McpTool;

/// What became of one configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerStatus {
    /// Connected, offering this many tools.
    Connected {
        /// Tools offered to the model.
        tools: usize,
    },
    /// Still starting in the background; its tools, as listed at its last start, are offered.
    Starting {
        /// Tools offered to the model (from the remembered list).
        tools: usize,
    },
    /// Did not start (no such program, exited, timed out, refused); the message says which.
    Failed(String),
    /// Not started on purpose.
    Skipped(SkipReason),
}

/// One line of `lathe mcp list` / `/mcp`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerReport {
    /// Server name.
    pub name: String,
    /// Where it was configured.
    pub scope: Scope,
    /// `stdio` or `http` (empty for a skipped, invalid entry).
    pub transport: &'static str,
    /// What became of it.
    pub status: ServerStatus,
}

/// A server's start-up task, aborted when dropped: a start-up dropped before a session takes it
/// over (session start failed) leaves no task waiting to be launched.
struct StartupTask(JoinHandle<()>);

impl Drop for StartupTask {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A server being started.
struct Starting {
    config: ServerConfig,
    slot: Arc<Slot>,
    /// Its tool list from the last start, if remembered.
    remembered: Option<Vec<rmcp::model::Tool>>,
    task: StartupTask,
}

/// Servers being started in the background.
pub struct McpStartup {
    servers: Vec<Starting>,
    config: McpConfig,
    settings: McpSettings,
}

impl McpStartup {
    /// Spawns a start-up task for every server of `config` (must be called inside a Tokio runtime).
    /// With no servers configured this does nothing.
    pub fn start(config: McpConfig, settings: McpSettings) -> McpStartup {
        let servers = config
            .servers
            .iter()
            .map(|server| {
                let cache_path =
                    settings.cache_dir.as_ref().map(|dir| cache::path(dir, server, &settings.cwd));
                let remembered = cache_path.as_deref().and_then(cache::read);
                let launched = remembered.is_none();
                let slot = Arc::new(Slot::new(server.name.clone(), settings.startup_timeout, launched));
                let (task_config, task_settings, task_slot) =
                    (server.clone(), settings.clone(), slot.clone());
                let task = tokio::spawn(async move {
                    let unsettled = SettleOnDrop(task_slot.clone());
                    task_slot.launched().await;
                    let state = match connect(&task_config, &task_settings).await {
                        Ok((connection, tools)) => {
                            if let Some(path) = &cache_path {
                                cache::write(path, &tools);
                            }
                            State::Ready { connection: Arc::new(connection), tools: Arc::new(tools) }
                        }
                        Err(error) => State::Failed(error),
                    };
                    task_slot.settle(state);
                    drop(unsettled);
                });
                Starting { config: server.clone(), slot, remembered, task: StartupTask(task) }
            })
            .collect();
        McpStartup { servers, config, settings }
    }

    /// Waits for every server to be up or to have failed.
    pub async fn finish(self) -> McpServers {
        self.collect(true).await
    }

    /// Waits for the servers whose tools are not remembered from an earlier start; the others
    /// go on starting in the background, their remembered tools offered (see the module docs).
    pub async fn session(self) -> McpServers {
        self.collect(false).await
    }

    async fn collect(self, wait_for_all: bool) -> McpServers {
        let mut servers = McpServers { warnings: self.config.warnings.clone(), ..McpServers::default() };
        let mut names = HashSet::new();
        for starting in self.servers {
            let Starting { config, slot, remembered, task } = starting;
            let background = !wait_for_all && remembered.is_some();
            let state = if background { slot.current() } else { slot.settled().await };
            let listed = match &state {
                State::Ready { tools, .. } => tools.as_ref().clone(),
                State::Starting => remembered.unwrap_or_default(),
                State::Failed(error) => {
                    servers.warnings.push(failed(&config.name, error));
                    Vec::new()
                }
            };
            let known: Vec<String> = listed.iter().map(|tool| tool.name.to_string()).collect();
            let mut offered = 0;
            for tool in listed {
                let remote = tool.name.to_string();
                match McpTool::new(slot.clone(), tool, self.settings.tool_timeout) {
                    Ok(tool) if names.insert(tool.name.clone()) => {
                        offered += 1;
                        servers.tools.push(tool);
                    }
                    Ok(tool) => servers.warnings.push(format!(
                        "MCP server `{}`: tool `{remote}` left out: its name {} is already taken",
                        config.name, tool.name
                    )),
                    Err(why) => servers
                        .warnings
                        .push(format!("MCP server `{}`: tool `{remote}` left out: {why}", config.name)),
                }
            }
            let told = AtomicBool::new(!matches!(state, State::Starting));
            servers.running.push(Running { config, slot, known, offered, task, told });
        }
        for skipped in &self.config.skipped {
            servers.skipped.push(ServerReport {
                name: skipped.name.clone(),
                scope: skipped.scope,
                transport: "",
                status: ServerStatus::Skipped(skipped.reason.clone()),
            });
        }
        servers
    }
}

fn failed(server: &str, error: &str) -> String {
    format!("MCP server `{server}` failed to start: {error}; its tools are not available")
}

/// A started (or starting) server of the session.
struct Running {
    config: ServerConfig,
    slot: Arc<Slot>,
    /// Names of the tools the session started with (remembered or listed).
    known: Vec<String>,
    /// How many of them are offered.
    offered: usize,
    task: StartupTask,
    /// Whether its outcome was said (servers waited for are said at start).
    told: AtomicBool,
}

/// The started servers of a session and their tools.
#[derive(Default)]
pub struct McpServers {
    running: Vec<Running>,
    skipped: Vec<ServerReport>,
    tools: Vec<McpTool>,
    warnings: Vec<String>,
}

impl std::fmt::Debug for McpServers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServers").field("reports", &self.reports()).finish()
    }
}

impl McpServers {
    /// Tools of every server, in configuration order: those listed by the servers that are up,
    /// and the remembered ones of servers still starting.
    pub fn tools(&self) -> &[McpTool] {
        &self.tools
    }

    /// One report per configured server (connected, starting, failed, skipped), as things stand.
    pub fn reports(&self) -> Vec<ServerReport> {
        let mut reports: Vec<ServerReport> = self
            .running
            .iter()
            .map(|server| ServerReport {
                name: server.config.name.clone(),
                scope: server.config.scope,
                transport: server.config.transport.kind(),
                status: match server.slot.current() {
                    State::Ready { .. } => ServerStatus::Connected { tools: server.offered },
                    State::Starting => ServerStatus::Starting { tools: server.offered },
                    State::Failed(error) => ServerStatus::Failed(error),
                },
            })
            .collect();
        reports.extend(self.skipped.iter().cloned());
        reports
    }

    /// Problems to show the user once, at start: bad configuration, servers that failed, tools
    /// left out.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// What servers that were still starting at session start turned out to be, each said once:
    /// one that failed, one whose tools changed since its last start (new tools are offered from
    /// the next session on; calls of removed ones fail). Empty while they are starting.
    pub fn late_warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        for server in &self.running {
            let state = server.slot.current();
            if matches!(state, State::Starting) || server.told.swap(true, Ordering::SeqCst) {
                continue;
            }
            match state {
                State::Failed(error) => warnings.push(failed(&server.config.name, &error)),
                State::Ready { tools, .. } => {
                    let live: Vec<String> = tools.iter().map(|tool| tool.name.to_string()).collect();
                    let added: Vec<&str> =
                        live.iter().filter(|name| !server.known.contains(name)).map(String::as_str).collect();
                    let gone: Vec<&str> =
                        server.known.iter().filter(|name| !live.contains(name)).map(String::as_str).collect();
                    if !added.is_empty() || !gone.is_empty() {
                        warnings.push(changed(&server.config.name, &added, &gone));
                    }
                }
                State::Starting => {}
            }
        }
        warnings
    }

    /// Starts the servers that wait to be launched (those whose tools are remembered); no effect
    /// on the others or a second time.
    pub fn launch(&self) {
        for server in &self.running {
            server.slot.launch();
        }
    }

    /// [`McpServers::launch`] after `delay`, in a task of its own (must be called inside a Tokio
    /// runtime); nothing when no server waits.
    pub fn launch_after(&self, delay: std::time::Duration) {
        if self.running.iter().all(|server| server.slot.is_launched()) {
            return;
        }
        let slots: Vec<Arc<Slot>> = self.running.iter().map(|server| server.slot.clone()).collect();
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            for slot in slots {
                slot.launch();
            }
        });
    }

    /// Ends every server session (stdio servers are terminated with their process group); a
    /// server still starting is stopped.
    pub async fn shutdown(&self) {
        for server in &self.running {
            server.task.0.abort();
        }
        let connections: Vec<_> = self
            .running
            .iter()
            .filter_map(|server| match server.slot.current() {
                State::Ready { connection, .. } => Some(connection),
                State::Starting | State::Failed(_) => None,
            })
            .collect();
        futures::future::join_all(connections.iter().map(|connection| connection.shutdown())).await;
    }
}

fn changed(server: &str, added: &[&str], gone: &[&str]) -> String {
    let mut parts = Vec::new();
    if !added.is_empty() {
        parts.push(format!("new: {}", added.join(", ")));
    }
    if !gone.is_empty() {
        parts.push(format!("gone: {}", gone.join(", ")));
    }
    format!(
        "MCP server `{server}` changed its tools since Lathe last started it ({}); this session offers \
         the tools it listed then, the new list from the next session on",
        parts.join("; ")
    )
}
