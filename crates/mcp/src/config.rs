//! MCP server configuration in Claude Code's `.mcp.json` format.
//!
//! ```json
//! {"mcpServers": {
//!   "everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"],
//!                  "env": {"LOG_LEVEL": "${LOG_LEVEL:-info}"}},
//!   "github":     {"type": "http", "url": "https://api.example.com/mcp",
//!                  "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}}
//! }}
//! ```
//!
//! Sources, later ones replacing a server of the same name: the user's `~/.lathe/mcp.json`, the
//! project's `.mcp.json`, then each `--mcp-config` (a file or an inline JSON object). Project
//! servers come with the repository, so they run only once approved ([`crate::approvals`]) or when
//! the user trusts project servers; the others are listed as skipped.
//!
//! Everything here is lenient per server: a file that is not valid JSON, an entry with an unknown
//! transport or without a command, or a `${VAR}` that is not set leaves that file or server out
//! with a warning naming it, and the rest is used. Only a `--mcp-config` file that cannot be read
//! is an error (the user named it on the command line).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::expand::expand;

/// Where a server's configuration came from; decides whether it needs approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// `~/.lathe/mcp.json`.
    User,
    /// The project's `.mcp.json` (needs approval).
    Project,
    /// A `--mcp-config` argument.
    Flag,
}

impl Scope {
    /// `user`, `project` or `flag`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Flag => "flag",
        }
    }
}

/// How to reach a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking JSON-RPC over its stdin/stdout; stderr goes to a log file.
    Stdio {
        /// The program (looked up on `PATH`).
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to the inherited environment.
        env: BTreeMap<String, String>,
    },
    /// MCP streamable HTTP (`"type": "http"`).
    Http {
        /// The endpoint, e.g. `http://127.0.0.1:3001/mcp`.
        url: String,
        /// Extra request headers (e.g. `Authorization`).
        headers: BTreeMap<String, String>,
    },
}

impl Transport {
    /// `stdio` or `http`.
    pub fn kind(&self) -> &'static str {
        match self {
            Transport::Stdio { .. } => "stdio",
            Transport::Http { .. } => "http",
        }
    }
}

/// One usable server entry, with `${VAR}` references expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// The key under `mcpServers`; tools are offered as `mcp__<name>__<tool>`.
    pub name: String,
    /// How to reach it.
    pub transport: Transport,
    /// Where it was configured.
    pub scope: Scope,
    /// The file (or `--mcp-config` argument) it came from, for messages.
    pub source: String,
}

/// A configured server that will not be started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// Server name.
    pub name: String,
    /// Where it was configured.
    pub scope: Scope,
    /// Why it is not started.
    pub reason: SkipReason,
}

/// Why a configured server is not started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkipReason {
    /// A project server the user has not approved.
    NeedsApproval,
    /// The entry cannot be used (unknown transport, missing command, unset variable); the message
    /// says which.
    Invalid(String),
}

/// The servers of a session: those to start, those skipped, and warnings for the user.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpConfig {
    /// Servers to start, in configuration order.
    pub servers: Vec<ServerConfig>,
    /// Servers left out, with the reason.
    pub skipped: Vec<Skipped>,
    /// One line each: a file that is not valid JSON, an invalid entry, unapproved project servers.
    pub warnings: Vec<String>,
}

/// A `--mcp-config` argument that cannot be used at all.
#[derive(Debug, thiserror::Error)]
pub enum McpConfigError {
    /// The file named by `--mcp-config` cannot be read.
    #[error("--mcp-config {path}: {source}")]
    Unreadable {
        /// The argument.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

/// Where to look for server configuration, and which project servers may run.
#[derive(Debug, Clone)]
pub struct Sources {
    /// `~/.lathe/mcp.json` (or under `$LATHE_HOME`).
    pub user_file: PathBuf,
    /// `<project>/.mcp.json`.
    pub project_file: PathBuf,
    /// `--mcp-config` arguments: file paths or inline JSON objects, in order.
    pub flags: Vec<String>,
    /// Whether project servers run without approval (`trust_project_mcp = true`).
    pub trust_project: bool,
    /// Names of project servers the user approved for this project.
    pub approved: Vec<String>,
}

impl McpConfig {
    /// Reads every source, expanding `${VAR}` / `${VAR:-default}` with `env`.
    pub fn load(
        sources: &Sources,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<McpConfig, McpConfigError> {
        let mut entries: Vec<(String, Scope, String, Value)> = Vec::new();
        let mut config = McpConfig::default();
        let mut read = |text: Option<String>, scope: Scope, label: String, config: &mut McpConfig| {
            if let Some(text) = text {
                entries.extend(
                    parse_file(&text, &label, config)
                        .into_iter()
                        .map(|(name, value)| (name, scope, label.clone(), value)),
                );
            }
        };
        read(read_optional(&sources.user_file), Scope::User, display(&sources.user_file), &mut config);
        read(
            read_optional(&sources.project_file),
            Scope::Project,
            display(&sources.project_file),
            &mut config,
        );
        for flag in &sources.flags {
            let text = if flag.trim_start().starts_with('{') {
                flag.clone()
            } else {
                std::fs::read_to_string(flag)
                    .map_err(|source| McpConfigError::Unreadable { path: flag.clone(), source })?
            };
            let label =
                if flag.trim_start().starts_with('{') { "--mcp-config".to_string() } else { flag.clone() };
            read(Some(text), Scope::Flag, label, &mut config);
        }

        // A later source replaces a server of the same name.
        let mut by_name: Vec<(String, Scope, String, Value)> = Vec::new();
        for entry in entries {
            by_name.retain(|(name, ..)| *name != entry.0);
            by_name.push(entry);
        }
        let mut unapproved = Vec::new();
        for (name, scope, source, value) in by_name {
            if scope == Scope::Project && !sources.trust_project && !sources.approved.contains(&name) {
                unapproved.push(name.clone());
                config.skipped.push(Skipped { name, scope, reason: SkipReason::NeedsApproval });
                continue;
            }
            match parse_server(&value, env) {
                Ok(transport) => config.servers.push(ServerConfig { name, transport, scope, source }),
                Err(reason) => {
                    config
                        .warnings
                        .push(format!("MCP server `{name}` ({source}): {reason}; it was not started"));
                    config.skipped.push(Skipped { name, scope, reason: SkipReason::Invalid(reason) });
                }
            }
        }
        if !unapproved.is_empty() {
            config.warnings.push(format!(
                "project MCP servers in {} were skipped because they are not approved: {} (approve them with \
                 `lathe mcp approve`, or set trust_project_mcp = true in ~/.lathe/config.toml)",
                display(&sources.project_file),
                unapproved.join(", ")
            ));
        }
        Ok(config)
    }

    /// Whether nothing is configured at all (no server to start, none skipped).
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty() && self.skipped.is_empty()
    }
}

fn display(path: &Path) -> String {
    path.display().to_string()
}

/// The file's text; `None` when it does not exist (an unreadable file is read as absent: it is
/// the user's own and shows up in `lathe mcp list` as having no servers).
fn read_optional(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// The `mcpServers` entries of one file, in file order; problems become warnings.
fn parse_file(text: &str, label: &str, config: &mut McpConfig) -> Vec<(String, Value)> {
    let value: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(error) => {
            config
                .warnings
                .push(format!("{label}: not valid JSON ({error}); its MCP servers were not loaded"));
            return Vec::new();
        }
    };
    let Some(servers) = value.get("mcpServers") else {
        if !value.is_object() {
            config.warnings.push(format!("{label}: expected a JSON object with \"mcpServers\""));
        }
        return Vec::new();
    };
    let Some(servers) = servers.as_object() else {
        config.warnings.push(format!("{label}: \"mcpServers\" must be an object of servers by name"));
        return Vec::new();
    };
    servers.iter().map(|(name, entry)| (name.clone(), entry.clone())).collect()
}

/// One entry's transport, expanded. The error names the field.
fn parse_server(value: &Value, env: &dyn Fn(&str) -> Option<String>) -> Result<Transport, String> {
    let Some(entry) = value.as_object() else {
        return Err("the entry must be a JSON object".into());
    };
    let kind = match entry.get("type") {
        None => None,
        Some(Value::String(kind)) => Some(kind.as_str()),
        Some(other) => return Err(format!("\"type\" must be a string, not {other}")),
    };
    let kind = kind.unwrap_or(if entry.contains_key("url") { "http" } else { "stdio" });
    match kind {
        "stdio" => {
            let command = string_field(entry, "command")?
                .ok_or_else(|| "a stdio server needs a \"command\"".to_string())?;
            let args = match entry.get("args") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|item| {
                        item.as_str()
                            .map(str::to_string)
                            .ok_or_else(|| "\"args\" must be strings".to_string())
                    })
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err("\"args\" must be an array of strings".into()),
            };
            let env_map = string_map(entry, "env")?;
            Ok(Transport::Stdio {
                command: expand(&command, env)?,
                args: args.iter().map(|arg| expand(arg, env)).collect::<Result<_, _>>()?,
                env: expand_map(env_map, env)?,
            })
        }
        "http" | "streamable-http" | "streamableHttp" | "streamable_http" => {
            let url =
                string_field(entry, "url")?.ok_or_else(|| "an http server needs a \"url\"".to_string())?;
            let headers = string_map(entry, "headers")?;
            Ok(Transport::Http { url: expand(&url, env)?, headers: expand_map(headers, env)? })
        }
        "sse" => Err("the legacy SSE transport is not supported (the MCP SDK Lathe uses speaks stdio and \
                      streamable HTTP); use the server's streamable HTTP endpoint with \"type\": \"http\""
            .into()),
        other => Err(format!("unknown transport \"type\": \"{other}\" (expected \"stdio\" or \"http\")")),
    }
}

fn string_field(entry: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match entry.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) if !text.trim().is_empty() => Ok(Some(text.clone())),
        Some(Value::String(_)) => Err(format!("\"{key}\" is empty")),
        Some(other) => Err(format!("\"{key}\" must be a string, not {other}")),
    }
}

fn string_map(entry: &Map<String, Value>, key: &str) -> Result<BTreeMap<String, String>, String> {
    match entry.get(key) {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(name, value)| match value {
                Value::String(text) => Ok((name.clone(), text.clone())),
                other => Err(format!("\"{key}\".{name} must be a string, not {other}")),
            })
            .collect(),
        Some(_) => Err(format!("\"{key}\" must be an object of strings")),
    }
}

fn expand_map(
    map: BTreeMap<String, String>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<BTreeMap<String, String>, String> {
    map.into_iter().map(|(key, value)| Ok((key, expand(&value, env)?))).collect()
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
