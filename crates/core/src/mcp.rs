//! MCP servers' tools as Lathe tools: [`McpToolAdapter`] wraps a [`lathe_mcp::McpTool`] in the
//! [`DynTool`] contract, so the loop validates, permits, runs, caps and spills it like a built-in.
//!
//! - effect and access: read-only when the server declares it (`readOnlyHint`), otherwise
//!   mutating; the call declares nothing else ([`Access::Undeclared`]), so the policy decides on
//!   its `mcp__server__tool` name: a deny rule denies, an allow rule (`mcp__server`,
//!   `mcp__server__tool`) or a read-only declaration allows, otherwise the mode decides (in
//!   `default` mode a call asks; headless it is denied with a hint);
//! - errors: invalid arguments, timeouts, cancel and a server that is gone become the usual
//!   [`ToolError`]s with messages naming the server;
//! - output: text beyond [`MAX_OUTPUT_CHARS`] (the `shell` cap) is cut to head and tail with the
//!   whole text spilled to the tool-results directory; images are kept;
//! - deferral: when the tools are many (more than [`DEFER_ABOVE_TOOLS`] with the built-in ones, or
//!   MCP schemas over [`DEFER_ABOVE_SCHEMA_BYTES`]), every MCP tool is registered deferred: listed
//!   by name in the system prompt, its schema loaded by `tool_search` ([`crate::tool_search`]).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use lathe_mcp::{
    McpCallError, McpConfig, McpConfigError, McpOutput, McpSettings, McpStartup, McpTool, Sources,
};
use lathe_protocol::{Content, ToolSpec};
use lathe_tools::{
    Access, DynTool, Effect, ToolContext, ToolError, ToolOutput, ToolRegistry, cap_output, summarize_args,
};
use serde_json::Value;

/// In-context cap of an MCP tool's text output, in characters (the same as `shell`'s).
pub const MAX_OUTPUT_CHARS: usize = lathe_tools::builtin::shell::MAX_OUTPUT_CHARS;

use crate::config::ConfigLayer;

/// What front ends show about MCP servers (`lathe mcp list`, `/mcp`) and how they approve project
/// servers, re-exported so they need not depend on `lathe-mcp`.
pub use lathe_mcp::{McpServers, Scope, ServerReport, ServerStatus, SkipReason, approvals};

/// The MCP configuration of a session in `project`: `<home>/mcp.json`, the project's `.mcp.json`
/// (approved servers only, unless `trust_project_mcp`), then the `--mcp-config` arguments in `flags`.
/// Errors only for a `--mcp-config` file that cannot be read.
pub fn load_config(
    home: &Path,
    project: &Path,
    flags: &[String],
    layer: &ConfigLayer,
) -> Result<McpConfig, McpConfigError> {
    let sources = Sources {
        user_file: home.join("mcp.json"),
        project_file: project.join(".mcp.json"),
        flags: flags.to_vec(),
        trust_project: layer.trust_project_mcp.unwrap_or(false),
        approved: lathe_mcp::approvals::approved(home, project),
    };
    McpConfig::load(&sources, &|name| std::env::var(name).ok())
}

/// Time limits (`layer.mcp`: config `[mcp]`, overridden by Claude Code's `MCP_TIMEOUT` /
/// `MCP_TOOL_TIMEOUT` in milliseconds through the environment layer, see
/// [`ConfigLayer::from_env`]), the stderr log directory `<home>/mcp-logs`, and the project as
/// working directory; tool lists are remembered in `<home>/mcp-cache`.
pub fn settings(home: &Path, project: &Path, layer: &ConfigLayer) -> McpSettings {
    let startup = layer.mcp.startup_timeout_ms.map(Duration::from_millis);
    let tool = layer.mcp.tool_timeout_ms.map(Duration::from_millis);
    McpSettings {
        startup_timeout: startup.unwrap_or(McpSettings::DEFAULT_STARTUP_TIMEOUT),
        tool_timeout: tool.unwrap_or(McpSettings::DEFAULT_TOOL_TIMEOUT),
        log_dir: home.join("mcp-logs"),
        cwd: project.to_path_buf(),
        cache_dir: Some(home.join("mcp-cache")),
    }
}

/// Loads the configuration and starts its servers in the background (see [`McpStartup`]).
pub fn start(
    home: &Path,
    project: &Path,
    flags: &[String],
    layer: &ConfigLayer,
) -> Result<McpStartup, McpConfigError> {
    let config = load_config(home, project, flags, layer)?;
    Ok(McpStartup::start(config, settings(home, project, layer)))
}

/// [`start`] for `lathe mcp list`: the same servers, but their tool lists are neither read from
/// nor saved to `<home>/mcp-cache` (listing servers leaves nothing behind for later sessions).
pub fn start_uncached(
    home: &Path,
    project: &Path,
    flags: &[String],
    layer: &ConfigLayer,
) -> Result<McpStartup, McpConfigError> {
    let config = load_config(home, project, flags, layer)?;
    let settings = McpSettings { cache_dir: None, ..settings(home, project, layer) };
    Ok(McpStartup::start(config, settings))
}

/// An MCP tool in the [`DynTool`] contract.
pub struct McpToolAdapter(pub McpTool);

impl DynTool for McpToolAdapter {
    fn name(&self) -> &str {
        &self.0.name
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.0.name.clone(),
            description: self.0.description.clone(),
            input_schema: self.0.input_schema.clone(),
        }
    }

    fn effect(&self, _args: &Value) -> Effect {
        if self.0.read_only { Effect::ReadOnly } else { Effect::Mutating }
    }

    fn summary(&self, args: &Value) -> String {
        summarize_args(args)
    }

    fn access(&self, args: &Value, _ctx: &ToolContext) -> Result<Access, ToolError> {
        // The same checks as `McpTool::call`, before the policy judges the call.
        let problem = self.0.validate(args).err().or_else(|| match args {
            Value::Object(_) | Value::Null => None,
            other => Some(format!("expected a JSON object, got {other}")),
        });
        match problem {
            Some(message) => Err(ToolError::InvalidArguments { tool: self.0.name.clone(), message }),
            None => Ok(Access::Undeclared { read_only: self.0.read_only }),
        }
    }

    /// No preconditions of its own beyond its arguments.
    fn precheck(&self, _args: &Value, _ctx: &ToolContext) -> Result<(), ToolError> {
        Ok(())
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            match self.0.call(args, &ctx.cancel).await {
                Ok(output) => Ok(capped(output, ctx, &self.0.name)),
                Err(McpCallError::InvalidArguments(message)) => {
                    Err(ToolError::InvalidArguments { tool: self.0.name.clone(), message })
                }
                Err(McpCallError::Cancelled) => Err(ToolError::Cancelled),
                Err(McpCallError::TimedOut { timeout, .. }) => {
                    Err(ToolError::TimedOut(timeout.as_millis() as u64))
                }
                Err(
                    error @ (McpCallError::ServerGone { .. }
                    | McpCallError::Failed { .. }
                    | McpCallError::NotStarted { .. }),
                ) => Err(ToolError::Failed(error.to_string())),
            }
        })
    }
}

/// More tools than this, counting those already in the registry, and MCP tools are deferred.
pub const DEFER_ABOVE_TOOLS: usize = 40;
/// MCP tool specs (name, description, schema as JSON) over this many bytes in all, and MCP tools
/// are deferred.
pub const DEFER_ABOVE_SCHEMA_BYTES: usize = 10 * 1024;

/// Adds the tools of every server to `registry`, after the tools already there: offered, or all
/// deferred when they are many ([`DEFER_ABOVE_TOOLS`], [`DEFER_ABOVE_SCHEMA_BYTES`]). Returns
/// whether they were deferred.
pub fn register(registry: &mut ToolRegistry, servers: &McpServers) -> bool {
    let tools: Vec<Arc<dyn DynTool>> = servers
        .tools()
        .iter()
        .map(|tool| Arc::new(McpToolAdapter(tool.clone())) as Arc<dyn DynTool>)
        .collect();
    let schema_bytes: usize =
        tools.iter().map(|tool| serde_json::to_string(&tool.spec()).map_or(0, |json| json.len())).sum();
    let defer =
        registry.names().len() + tools.len() > DEFER_ABOVE_TOOLS || schema_bytes > DEFER_ABOVE_SCHEMA_BYTES;
    for tool in tools {
        if defer {
            registry.register_deferred(tool);
        } else {
            registry.register(tool);
        }
    }
    defer
}

/// Keeps the text within [`MAX_OUTPUT_CHARS`], spilling the whole of it when it is longer.
fn capped(output: McpOutput, ctx: &ToolContext, name: &str) -> ToolOutput {
    let text_chars: usize = output
        .content
        .iter()
        .map(|block| match block {
            Content::Text { text } => text.chars().count(),
            Content::Image { .. } | Content::Thinking(_) | Content::ToolCall(_) => 0,
        })
        .sum();
    if text_chars <= MAX_OUTPUT_CHARS {
        return ToolOutput { content: output.content, is_error: output.is_error, ..ToolOutput::default() };
    }
    let mut texts = Vec::new();
    let mut others = Vec::new();
    for block in output.content {
        match block {
            Content::Text { text } => texts.push(text),
            other @ (Content::Image { .. } | Content::Thinking(_) | Content::ToolCall(_)) => {
                others.push(other)
            }
        }
    }
    let (text, spill_path) = cap_output(&texts.join("\n"), MAX_OUTPUT_CHARS, &ctx.spill_dir, name);
    let mut content = vec![Content::text(text)];
    content.extend(others);
    ToolOutput { content, is_error: output.is_error, spill_path, ..ToolOutput::default() }
}
