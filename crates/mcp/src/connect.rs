//! One live connection to an MCP server, over either transport, built on rmcp's client.
//!
//! Start-up of one server, all under one time limit: spawn the child (stdio: its own process group,
//! stderr appended to `<log dir>/<server>.log`) or open the HTTP transport → `initialize` handshake
//! → `tools/list` (all pages). Whatever fails or runs out of time is one error string for the user;
//! a child that was started is killed with its whole process group.
//!
//! A [`Connection`] is shared by the server's tools. Dropping the last reference (or
//! [`Connection::shutdown`]) ends the session with the server and kills a stdio server's process
//! group, so no server outlives the Lathe session that started it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{Peer, RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransport, StreamableHttpClientTransportConfig,
};
use rmcp::{ServiceExt, transport::IntoTransport};

use crate::config::{ServerConfig, Transport};

/// How long a server may take to close after the session ends before it is killed.
const SHUTDOWN_GRACE: Duration = Duration::from_millis(500);

/// Settings shared by every server of a session.
#[derive(Debug, Clone)]
pub struct McpSettings {
    /// Time allowed for start-up: spawn or connect, `initialize`, and `tools/list` (default 10 s).
    pub startup_timeout: Duration,
    /// Time allowed for one tool call before it is cancelled (default 120 s).
    pub tool_timeout: Duration,
    /// Where stdio servers' stderr is appended (`<lathe home>/mcp-logs`).
    pub log_dir: PathBuf,
    /// Working directory of stdio servers (the project).
    pub cwd: PathBuf,
    /// Where servers' tool lists are remembered between sessions (`<lathe home>/mcp-cache`);
    /// `None`: nothing is remembered and every server is waited for.
    pub cache_dir: Option<PathBuf>,
}

impl McpSettings {
    /// Default start-up time limit.
    pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
    /// Default tool-call time limit.
    pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(120);
}

/// Kills a stdio server's whole process group (the server and anything it started, e.g. `npx`'s
/// child) when dropped.
#[derive(Debug)]
struct ProcessGroup(lathe_process::Group);

impl ProcessGroup {
    fn signal(&self, signal: i32) {
        self.0.signal(signal);
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.signal(lathe_process::SIGKILL);
    }
}

/// A started server: the rmcp service and its peer handle for requests.
pub(crate) struct Connection {
    /// Server name from the configuration.
    pub server: String,
    /// Sends requests; cloned per call.
    pub peer: Peer<RoleClient>,
    service: Mutex<Option<RunningService<RoleClient, ClientConfig>>>,
    group: Option<ProcessGroup>,
    /// Where a stdio server's stderr goes.
    pub log_path: Option<PathBuf>,
    /// Set once the user has been told this server is gone.
    pub gone_reported: AtomicBool,
}

impl Connection {
    /// Whether the server has gone away (process exited, connection closed).
    pub fn is_closed(&self) -> bool {
        self.peer.is_transport_closed()
    }

    /// Whether a call already found the server gone and the user was told: from then on its
    /// tools answer at once, without sending (an HTTP server's dead session id is never reused).
    pub fn reported_gone(&self) -> bool {
        self.gone_reported.load(Ordering::SeqCst)
    }

    /// Ends the session with the server: a stdio server gets SIGTERM and, if it is still there
    /// after a short grace period, SIGKILL (for its whole process group); an HTTP session is closed.
    pub async fn shutdown(&self) {
        if let Some(group) = &self.group {
            group.signal(lathe_process::SIGTERM);
        }
        let service = self.service.lock().ok().and_then(|mut slot| slot.take());
        if let Some(service) = service {
            let _ = tokio::time::timeout(SHUTDOWN_GRACE, service.cancel()).await;
        }
        if let Some(group) = &self.group {
            group.signal(lathe_process::SIGKILL);
        }
    }
}

/// A started server and the tools it listed.
pub(crate) type Started = (Connection, Vec<rmcp::model::Tool>);

/// Starts `config` within `settings.startup_timeout`. The error is one line for the user.
pub(crate) async fn connect(config: &ServerConfig, settings: &McpSettings) -> Result<Started, String> {
    let limit = settings.startup_timeout;
    let timed_out =
        || format!("did not finish starting within {} ms (initialize and tools/list)", limit.as_millis());
    match &config.transport {
        Transport::Stdio { command, args, env } => {
            let log_path = settings.log_dir.join(format!("{}.log", safe_file_name(&config.name)));
            let stderr = open_log(&log_path, command, args)?;
            let mut child = tokio::process::Command::new(command);
            child.args(args).envs(env).current_dir(&settings.cwd).kill_on_drop(true);
            lathe_process::new_group(&mut child);
            let (transport, _) = TokioChildProcess::builder(child)
                .stderr(stderr)
                .spawn()
                .map_err(|error| spawn_error(command, &error))?;
            let group = transport.id().and_then(lathe_process::Group::from_pid).map(ProcessGroup);
            let started = tokio::time::timeout(limit, handshake(transport)).await;
            let with_log = |message: String| with_stderr_tail(message, &log_path);
            let (service, tools) = match started {
                Ok(Ok(done)) => done,
                Ok(Err(message)) => return Err(with_log(message)),
                Err(_) => return Err(with_log(timed_out())),
            };
            Ok((finish(config, service, group, Some(log_path)), tools))
        }
        Transport::Http { url, headers } => {
            ensure_tls_provider();
            let mut custom = HashMap::new();
            for (name, value) in headers {
                let header = http::HeaderName::from_bytes(name.as_bytes())
                    .map_err(|_| format!("header name {name:?} is not valid"))?;
                let value = http::HeaderValue::from_str(value)
                    .map_err(|_| format!("the value of header {name} is not valid in HTTP"))?;
                custom.insert(header, value);
            }
            let client = crate::http::McpHttpClient::new().map_err(|e| format!("{url}: {e}"))?;
            let transport = StreamableHttpClientTransport::with_client(
                client,
                StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(custom),
            );
            let (service, tools) = match tokio::time::timeout(limit, handshake(transport)).await {
                Ok(Ok(done)) => done,
                Ok(Err(message)) => return Err(format!("{url}: {message}")),
                Err(_) => return Err(format!("{url}: {}", timed_out())),
            };
            Ok((finish(config, service, None, None), tools))
        }
    }
}

fn finish(
    config: &ServerConfig,
    service: RunningService<RoleClient, ClientConfig>,
    group: Option<ProcessGroup>,
    log_path: Option<PathBuf>,
) -> Connection {
    Connection {
        server: config.name.clone(),
        peer: service.peer().clone(),
        service: Mutex::new(Some(service)),
        group,
        log_path,
        gone_reported: AtomicBool::new(false),
    }
}

/// `initialize`, then every page of `tools/list`.
async fn handshake<T, E, A>(
    transport: T,
) -> Result<(RunningService<RoleClient, ClientConfig>, Vec<rmcp::model::Tool>), String>
where
    T: IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let client = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("lathe", env!("CARGO_PKG_VERSION")),
    );
    let service = client
        .serve(transport)
        .await
        .map_err(|error| format!("initialize failed: {}", crate::tool::describe(&error)))?;
    let tools = service
        .peer()
        .list_all_tools()
        .await
        .map_err(|error| format!("tools/list failed: {}", crate::tool::describe(&error)))?;
    Ok((service, tools))
}

/// rmcp's HTTP client (reqwest with rustls, built without a crypto provider of its own) needs a
/// process-wide one: ring, the one the provider crate installs too. Installing twice is harmless.
fn ensure_tls_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

fn open_log(path: &Path, command: &str, args: &[String]) -> Result<std::fs::File, String> {
    use std::io::Write;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|error| format!("cannot create {}: {error}", dir.display()))?;
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|error| format!("cannot open the log {}: {error}", path.display()))?;
    let _ = writeln!(file, "--- {} {command} {}", unix_ms(), args.join(" "));
    Ok(file)
}

fn unix_ms() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0)
}

fn spawn_error(command: &str, error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::NotFound => {
            format!("cannot run `{command}`: no such program (not found on PATH)")
        }
        std::io::ErrorKind::PermissionDenied => format!("cannot run `{command}`: permission denied"),
        _ => format!("cannot run `{command}`: {error}"),
    }
}

/// Appends the last lines the server wrote to stderr (from its log), and where the log is.
fn with_stderr_tail(message: String, log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let session = text.rsplit_once("\n--- ").map_or(text.as_str(), |(_, last)| last);
    let lines: Vec<&str> = session.lines().skip(1).filter(|line| !line.trim().is_empty()).collect();
    let tail = &lines[lines.len().saturating_sub(3)..];
    let mut message = message;
    if !tail.is_empty() {
        let joined = tail.join(" | ");
        let short: String = joined.chars().take(300).collect();
        message.push_str(&format!("; its stderr said: {short}"));
    }
    message.push_str(&format!(" (log: {})", log.display()));
    message
}

pub(crate) fn safe_file_name(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect()
}

/// Marks a connection's failure as reported; returns whether this was the first report.
pub(crate) fn first_report(connection: &Connection) -> bool {
    !connection.gone_reported.swap(true, Ordering::SeqCst)
}
