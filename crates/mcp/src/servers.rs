//! The MCP servers of one session: started in parallel in the background, each within its own time
//! limit, collected once the session needs their tools.
//!
//! [`McpStartup::start`] spawns one task per configured server and returns at once, so the rest of
//! session start-up (session file, system prompt) runs while servers start. [`McpStartup::finish`]
//! waits for every task (each bounded by the start-up timeout) and yields [`McpServers`]: the tools
//! of the servers that came up, a status line per server, and one warning per problem. A server that
//! fails, exits or hangs is left out; the others are unaffected.

use std::collections::HashSet;
use std::sync::Arc;

use tokio::task::JoinHandle;

use crate::config::{McpConfig, Scope, ServerConfig, SkipReason};
use crate::connect::{Connection, McpSettings, Started, connect};
use crate::tool::McpTool;

/// What became of one configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerStatus {
    /// Connected, offering this many tools.
    Connected {
        /// Tools offered to the model.
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

/// Servers being started in the background.
pub struct McpStartup {
    tasks: Vec<(ServerConfig, JoinHandle<Result<Started, String>>)>,
    config: McpConfig,
    settings: McpSettings,
}

impl McpStartup {
    /// Spawns a start-up task for every server of `config` (must be called inside a Tokio runtime).
    /// With no servers configured this does nothing.
    pub fn start(config: McpConfig, settings: McpSettings) -> McpStartup {
        let tasks = config
            .servers
            .iter()
            .map(|server| {
                let (server_config, task_settings) = (server.clone(), settings.clone());
                let task = tokio::spawn(async move { connect(&server_config, &task_settings).await });
                (server.clone(), task)
            })
            .collect();
        McpStartup { tasks, config, settings }
    }

    /// Waits for every server to be up or to have failed.
    pub async fn finish(self) -> McpServers {
        let mut servers = McpServers { warnings: self.config.warnings.clone(), ..McpServers::default() };
        let mut names = HashSet::new();
        for (config, task) in self.tasks {
            let outcome = task.await.unwrap_or_else(|error| Err(format!("start-up task failed: {error}")));
            let status = match outcome {
                Ok((connection, listed)) => {
                    let connection = Arc::new(connection);
                    let mut offered = 0;
                    for tool in listed {
                        let remote = tool.name.to_string();
                        match McpTool::new(connection.clone(), tool, self.settings.tool_timeout) {
                            Ok(tool) if names.insert(tool.name.clone()) => {
                                offered += 1;
                                servers.tools.push(tool);
                            }
                            Ok(tool) => servers.warnings.push(format!(
                                "MCP server `{}`: tool `{remote}` left out: its name {} is already taken",
                                config.name, tool.name
                            )),
                            Err(why) => servers.warnings.push(format!(
                                "MCP server `{}`: tool `{remote}` left out: {why}",
                                config.name
                            )),
                        }
                    }
                    servers.connections.push(connection);
                    ServerStatus::Connected { tools: offered }
                }
                Err(error) => {
                    servers.warnings.push(format!(
                        "MCP server `{}` failed to start: {error}; its tools are not available",
                        config.name
                    ));
                    ServerStatus::Failed(error)
                }
            };
            servers.reports.push(ServerReport {
                name: config.name.clone(),
                scope: config.scope,
                transport: config.transport.kind(),
                status,
            });
        }
        for skipped in &self.config.skipped {
            servers.reports.push(ServerReport {
                name: skipped.name.clone(),
                scope: skipped.scope,
                transport: "",
                status: ServerStatus::Skipped(skipped.reason.clone()),
            });
        }
        servers
    }
}

/// The started servers of a session and their tools.
#[derive(Default)]
pub struct McpServers {
    connections: Vec<Arc<Connection>>,
    tools: Vec<McpTool>,
    reports: Vec<ServerReport>,
    warnings: Vec<String>,
}

impl std::fmt::Debug for McpServers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServers").field("reports", &self.reports).finish()
    }
}

impl McpServers {
    /// Tools of every connected server, in configuration order.
    pub fn tools(&self) -> &[McpTool] {
        &self.tools
    }

    /// One report per configured server (started, failed, skipped).
    pub fn reports(&self) -> &[ServerReport] {
        &self.reports
    }

    /// Problems to show the user once: bad configuration, servers that failed, tools left out.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Ends every server session (stdio servers are terminated with their process group).
    pub async fn shutdown(&self) {
        futures::future::join_all(self.connections.iter().map(|connection| connection.shutdown())).await;
    }
}
