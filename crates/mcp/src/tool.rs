//! An MCP server's tool as Lathe offers it to the model: `mcp__<server>__<tool>`, the server's
//! JSON schema, read-only when the server says so, and a call with a time limit and cancel.
//!
//! Flow of one call: the server still starting? → wait for it (bounded by its start-up limit; a
//! server that failed to start is a clear error) → the server gone? → a clear error (reported to
//! the user once) → arguments checked against the server's schema → `tools/call` raced against
//! the call's time limit and the turn's cancellation token (on either, the request future is
//! dropped, which makes rmcp send `notifications/cancelled`) → the result converted to Lathe
//! content ([`crate::result`]).

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use lathe_protocol::Content;
use rmcp::model::CallToolRequestParams;
use rmcp::service::ServiceError;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::connect::{Connection, first_report};
use crate::slot::Slot;

/// How often a pending call checks whether its connection has closed.
const CLOSED_POLL: std::time::Duration = std::time::Duration::from_millis(100);
/// The longest tool name providers accept (Anthropic and OpenAI: `^[a-zA-Z0-9_-]{1,64}$`).
pub const MAX_TOOL_NAME_CHARS: usize = 64;

/// The model-facing name of `tool` on `server`: `mcp__<server>__<tool>`, with characters outside
/// `[A-Za-z0-9_-]` replaced by `_` and cut to [`MAX_TOOL_NAME_CHARS`].
pub fn tool_name(server: &str, tool: &str) -> String {
    let name: String = format!("mcp__{server}__{tool}")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
        .collect();
    name.chars().take(MAX_TOOL_NAME_CHARS).collect()
}

/// What a completed call returned, in Lathe's terms.
#[derive(Debug, Clone, PartialEq)]
pub struct McpOutput {
    /// Text and images, in the server's order (not yet capped).
    pub content: Vec<Content>,
    /// The server flagged the result as an error (`isError`).
    pub is_error: bool,
}

/// Why a call produced no [`McpOutput`]. Each becomes a result the model can read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum McpCallError {
    /// The arguments do not match the server's schema; nothing was sent. The message lists each
    /// violation with its JSON pointer.
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    /// The call ran past its time limit and was cancelled.
    #[error("MCP server `{server}` did not answer {tool} within {} ms; the call was cancelled", timeout.as_millis())]
    TimedOut {
        /// Server name.
        server: String,
        /// The server's tool name.
        tool: String,
        /// The limit.
        timeout: Duration,
    },
    /// The server did not start: it failed, or did not finish starting within its start-up
    /// limit (a call made while it was starting waited that long). Nothing was sent.
    #[error("MCP server `{server}` failed to start ({detail}); its tools are unavailable in this session")]
    NotStarted {
        /// Server name.
        server: String,
        /// Why, with the stderr tail and log path for stdio servers.
        detail: String,
    },
    /// The turn was cancelled; the call was cancelled at the server.
    #[error("interrupted")]
    Cancelled,
    /// The server is not running any more.
    #[error(
        "MCP server `{server}` is not running ({detail}); its tools are unavailable for the rest of this session"
    )]
    ServerGone {
        /// Server name.
        server: String,
        /// What happened, with the log path for stdio servers.
        detail: String,
        /// Whether this is the first call to notice (the user should be told once).
        first: bool,
    },
    /// The server answered with a protocol error (e.g. unknown tool, invalid params).
    #[error("MCP server `{server}` returned an error for {tool}: {message}")]
    Failed {
        /// Server name.
        server: String,
        /// The server's tool name.
        tool: String,
        /// The server's message.
        message: String,
    },
}

/// One tool of a connected server.
#[derive(Clone)]
pub struct McpTool {
    server: Arc<Slot>,
    /// Model-facing name (`mcp__everything__echo`).
    pub name: String,
    /// The name the server knows it by (`echo`).
    pub remote_name: String,
    /// Description for the model (the server's, or its title).
    pub description: String,
    /// The argument schema sent to the model (the server's, with `$schema` removed).
    pub input_schema: Value,
    /// The server declares the tool read-only (`annotations.readOnlyHint`).
    pub read_only: bool,
    /// The call's time limit.
    pub timeout: Duration,
    validator: Arc<OnceLock<Result<jsonschema::Validator, String>>>,
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool").field("name", &self.name).field("read_only", &self.read_only).finish()
    }
}

impl McpTool {
    /// Converts a tool `server` listed (now, or at its last start); the error says why it cannot
    /// be offered (its schema is not valid JSON Schema).
    pub(crate) fn new(
        server: Arc<Slot>,
        tool: rmcp::model::Tool,
        timeout: Duration,
    ) -> Result<McpTool, String> {
        let mut schema = Value::Object((*tool.input_schema).clone());
        if let Err(error) = jsonschema::meta::validate(&schema) {
            return Err(format!("its input schema is not valid JSON Schema ({error})"));
        }
        if let Value::Object(map) = &mut schema {
            map.remove("$schema");
            map.entry("type").or_insert_with(|| Value::from("object"));
        }
        let description = tool
            .description
            .as_deref()
            .map(str::to_string)
            .or(tool.title.clone())
            .unwrap_or_else(|| format!("Tool {} of MCP server {}", tool.name, server.name));
        let read_only = tool.annotations.as_ref().and_then(|a| a.read_only_hint).unwrap_or(false);
        Ok(McpTool {
            name: tool_name(&server.name, &tool.name),
            remote_name: tool.name.to_string(),
            description,
            input_schema: schema,
            read_only,
            timeout,
            server,
            validator: Arc::new(OnceLock::new()),
        })
    }

    /// The server's name.
    pub fn server(&self) -> &str {
        &self.server.name
    }

    /// Checks `args` against the server's schema; the error lists each violation with its path.
    pub fn validate(&self, args: &Value) -> Result<(), String> {
        let validator = self
            .validator
            .get_or_init(|| jsonschema::validator_for(&self.input_schema).map_err(|error| error.to_string()));
        let validator = match validator {
            Ok(validator) => validator,
            Err(error) => return Err(format!("the server's schema cannot be used: {error}")),
        };
        let problems: Vec<String> = validator
            .iter_errors(args)
            .map(|error| {
                let at = error.instance_path().to_string();
                if at.is_empty() { error.to_string() } else { format!("{at}: {error}") }
            })
            .collect();
        if problems.is_empty() { Ok(()) } else { Err(problems.join("; ")) }
    }

    /// Calls the tool with `args` (an object), within [`McpTool::timeout`], until `cancel` fires.
    /// A call made while the server is still starting waits for it first (at most its start-up
    /// limit).
    pub async fn call(&self, args: Value, cancel: &CancellationToken) -> Result<McpOutput, McpCallError> {
        let server = self.server().to_string();
        let (connection, listed) = self.server.ready(cancel).await?;
        let connection = connection.as_ref();
        if connection.is_closed() {
            return Err(gone(connection, "the connection is closed"));
        }
        // Said to be unavailable once: nothing more is sent on its dead session.
        if connection.reported_gone() {
            return Err(gone(connection, "it stopped answering earlier in this session"));
        }
        // Offered from the list the server gave at its last start, and not in today's.
        if !listed.iter().any(|tool| tool.name == self.remote_name) {
            return Err(McpCallError::Failed {
                server,
                tool: self.remote_name.clone(),
                message: "the server does not offer this tool any more (its tool list changed since \
                          Lathe last started it)"
                    .into(),
            });
        }
        self.validate(&args).map_err(McpCallError::InvalidArguments)?;
        let arguments = match args {
            Value::Object(map) => map,
            Value::Null => serde_json::Map::new(),
            other => {
                return Err(McpCallError::InvalidArguments(format!("expected a JSON object, got {other}")));
            }
        };
        let params = CallToolRequestParams::new(self.remote_name.clone()).with_arguments(arguments);
        let peer = connection.peer.clone();
        let request = peer.call_tool(params);
        // A transport that fails under a pending request (an HTTP server restarted and refused
        // the old session, a stdio server that died) leaves the request unanswered: the call
        // ends as soon as the connection is seen closed, not at the timeout.
        let closed = async {
            while !connection.is_closed() {
                tokio::time::sleep(CLOSED_POLL).await;
            }
        };
        let outcome = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(McpCallError::Cancelled),
            () = closed => return Err(gone(connection, "the connection closed during the call")),
            outcome = tokio::time::timeout(self.timeout, request) => outcome,
        };
        match outcome {
            Err(_) => {
                Err(McpCallError::TimedOut { server, tool: self.remote_name.clone(), timeout: self.timeout })
            }
            Ok(Ok(result)) => Ok(crate::result::convert(result)),
            Ok(Err(ServiceError::McpError(error))) => Err(McpCallError::Failed {
                server,
                tool: self.remote_name.clone(),
                message: error.message.to_string(),
            }),
            Ok(Err(error @ (ServiceError::TransportClosed | ServiceError::TransportSend(_)))) => {
                Err(gone(connection, &describe(&error)))
            }
            Ok(Err(error)) => {
                if connection.is_closed() {
                    Err(gone(connection, &describe(&error)))
                } else {
                    Err(McpCallError::Failed {
                        server,
                        tool: self.remote_name.clone(),
                        message: describe(&error),
                    })
                }
            }
        }
    }
}

/// The error for a call that found `connection`'s server gone (`first`: the first to notice).
fn gone(connection: &Connection, why: &str) -> McpCallError {
    let mut detail = why.to_string();
    if let Some(log) = &connection.log_path {
        detail.push_str(&format!("; its stderr is in {}", log.display()));
    }
    McpCallError::ServerGone { server: connection.server.clone(), detail, first: first_report(connection) }
}

/// What went wrong, in words: the innermost cause of `error` (rmcp's wrappers name Rust types,
/// `Transport [rmcp::transport::worker::WorkerTransport<…>] error`), with any Rust path left in
/// it taken out.
pub(crate) fn describe(error: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = error;
    while let Some(next) = cause.source() {
        cause = next;
    }
    let text = without_type_names(&cause.to_string());
    if text.is_empty() { without_type_names(&error.to_string()) } else { text }
}

/// `text` without bracketed groups that hold a Rust path and without words that are one.
fn without_type_names(text: &str) -> String {
    let mut kept = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find(']').map(|at| open + at) else { break };
        kept.push_str(&rest[..open]);
        if !rest[open..close].contains("::") {
            kept.push_str(&rest[open..=close]);
        }
        rest = &rest[close + 1..];
    }
    kept.push_str(rest);
    let words: Vec<&str> = kept.split_whitespace().filter(|word| !word.contains("::")).collect();
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_type_names_are_taken_out_of_error_text() {
        assert_eq!(
            without_type_names(
                "Transport [rmcp::transport::worker::WorkerTransport<rmcp::transport::streamable_http_client::Worker>] error: session expired [404]"
            ),
            "Transport error: session expired [404]"
        );
        assert_eq!(without_type_names("connection refused"), "connection refused");
    }

    #[test]
    fn tool_names_follow_the_providers_rules() {
        assert_eq!(tool_name("everything", "get-sum"), "mcp__everything__get-sum");
        assert_eq!(tool_name("my server", "do.it/now"), "mcp__my_server__do_it_now");
        let long = tool_name("a-very-long-server-name", &"x".repeat(80));
        assert_eq!(long.chars().count(), MAX_TOOL_NAME_CHARS);
        assert!(long.starts_with("mcp__a-very-long-server-name__xxx"));
    }
}
