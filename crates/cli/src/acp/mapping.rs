//! Lathe's data in the Agent Client Protocol's shapes (schema v1, the `agent-client-protocol`
//! crate's types): tool kinds, titles and locations, stop reasons, prompt content, permission modes
//! as session modes, the todo list as a plan, commands, MCP servers. Pure functions, no I/O.

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema as acp;
use lathe_protocol::extensions::UserCommand;
use lathe_protocol::{Content, PermissionMode, StopCause, StopReason};
use serde_json::{Map, Value, json};

/// The `_meta` object `{"lathe": value}` that carries what only Lathe knows (cost, tokens,
/// receipts); plain clients ignore it.
pub fn lathe_meta(value: Value) -> acp::Meta {
    let mut meta = Map::new();
    meta.insert("lathe".into(), value);
    meta
}

/// The ACP kind of a Lathe tool, by its model-facing name (MCP tools are `other`).
pub fn tool_kind(tool: &str) -> acp::ToolKind {
    match tool {
        "read_file" | "shell_output" => acp::ToolKind::Read,
        "write_file" | "edit_file" => acp::ToolKind::Edit,
        "grep" | "glob" | "list_dir" | "tool_search" => acp::ToolKind::Search,
        "shell" | "shell_kill" => acp::ToolKind::Execute,
        "web_fetch" | "web_search" => acp::ToolKind::Fetch,
        "todo_write" | "task" => acp::ToolKind::Think,
        "exit_plan_mode" => acp::ToolKind::SwitchMode,
        _ => acp::ToolKind::Other,
    }
}

/// The title a client shows for a call: the tool's verb and its one-line summary (`Edit src/a.rs`),
/// a shell command as itself, the bare tool name when there is no summary.
pub fn tool_title(tool: &str, summary: &str) -> String {
    let verb = match tool {
        "shell" => return if summary.is_empty() { "shell".into() } else { summary.to_string() },
        "read_file" => "Read",
        "write_file" => "Write",
        "edit_file" => "Edit",
        "grep" => "Grep",
        "glob" => "Glob",
        "list_dir" => "List",
        "web_fetch" => "Fetch",
        "todo_write" => "Update the task list",
        "task" => "Sub-agent",
        other => other,
    };
    if summary.is_empty() { verb.to_string() } else { format!("{verb} {summary}") }
}

/// The file a call's `path` argument names, absolute (relative paths are the workspace's).
pub fn call_path(arguments: &Value, workspace: &Path) -> Option<PathBuf> {
    let path = arguments.get("path").and_then(Value::as_str).filter(|path| !path.is_empty())?;
    let path = Path::new(path);
    Some(if path.is_absolute() { path.to_path_buf() } else { workspace.join(path) })
}

/// The locations a client can follow for a call: its `path`, at `offset` (1-based line) for a read.
pub fn tool_locations(arguments: &Value, workspace: &Path) -> Vec<acp::ToolCallLocation> {
    let Some(path) = call_path(arguments, workspace) else { return Vec::new() };
    let line = arguments.get("offset").and_then(Value::as_u64).and_then(|line| u32::try_from(line).ok());
    vec![acp::ToolCallLocation::new(path).line(line)]
}

/// The stop reason of a prompt turn from how Lathe's run ended. `last_stop` is the last response's
/// own stop reason (an answer cut by the output limit ends the run `Completed`); `cancelled`: the
/// client sent `session/cancel` during the turn, which ACP requires to end `cancelled`. An error
/// of the provider or of Lathe is `Err` with its message (answered as a JSON-RPC error).
pub fn stop_reason(
    cause: &StopCause,
    last_stop: Option<StopReason>,
    cancelled: bool,
) -> Result<acp::StopReason, String> {
    if cancelled || matches!(cause, StopCause::Cancelled) {
        return Ok(acp::StopReason::Cancelled);
    }
    Ok(match cause {
        StopCause::Completed if last_stop == Some(StopReason::MaxTokens) => acp::StopReason::MaxTokens,
        StopCause::Completed | StopCause::Hook { .. } | StopCause::Cancelled => acp::StopReason::EndTurn,
        StopCause::MaxTurns { .. }
        | StopCause::Budget { .. }
        | StopCause::NoProgress { .. }
        | StopCause::AutoBlocked { .. } => acp::StopReason::MaxTurnRequests,
        StopCause::ContextExhausted { .. } => acp::StopReason::MaxTokens,
        StopCause::Refused => acp::StopReason::Refusal,
        StopCause::Error { kind, message } => return Err(format!("{kind}: {message}")),
    })
}

/// A prompt's content blocks as Lathe's user message: text and images as they are, an embedded
/// text resource as `<context ref="URI">` text, a resource link as a Markdown link the model can
/// read with its tools. Audio and binary resources other than images are named, not sent; blank
/// text is left out (a prompt of only blank text is empty).
pub fn prompt_content(blocks: &[acp::ContentBlock]) -> Vec<Content> {
    let mut content = Vec::new();
    for block in blocks {
        match block {
            // Blank text is no message: the provider drops it (or rejects it).
            acp::ContentBlock::Text(text) if text.text.trim().is_empty() => {}
            acp::ContentBlock::Text(text) => content.push(Content::text(text.text.clone())),
            acp::ContentBlock::Image(image) => {
                content.push(Content::Image { media_type: image.mime_type.clone(), data: image.data.clone() })
            }
            acp::ContentBlock::ResourceLink(link) => {
                content.push(Content::text(format!("[@{}]({})", link.name, link.uri)));
            }
            acp::ContentBlock::Resource(resource) => match &resource.resource {
                acp::EmbeddedResourceResource::TextResourceContents(text) => content.push(Content::text(
                    format!("<context ref=\"{}\">\n{}\n</context>", text.uri, text.text),
                )),
                acp::EmbeddedResourceResource::BlobResourceContents(blob) => {
                    match blob.mime_type.as_deref().filter(|mime| mime.starts_with("image/")) {
                        Some(mime) => content
                            .push(Content::Image { media_type: mime.to_string(), data: blob.blob.clone() }),
                        None => {
                            content.push(Content::text(format!("[binary resource {} not shown]", blob.uri)))
                        }
                    }
                }
                _ => {}
            },
            acp::ContentBlock::Audio(_) => content.push(Content::text("[audio not supported]")),
            _ => {}
        }
    }
    content
}

/// Text as a content block.
pub fn text_block(text: impl Into<String>) -> acp::ContentBlock {
    acp::ContentBlock::Text(acp::TextContent::new(text))
}

/// Lathe's content of a transcript message as ACP blocks (text and images; thinking and calls are
/// sent as their own updates).
pub fn message_blocks(content: &[Content]) -> Vec<acp::ContentBlock> {
    content
        .iter()
        .filter_map(|item| match item {
            Content::Text { text } if !text.is_empty() => Some(text_block(text.clone())),
            Content::Image { media_type, data } => {
                Some(acp::ContentBlock::Image(acp::ImageContent::new(data.clone(), media_type.clone())))
            }
            _ => None,
        })
        .collect()
}

/// The name and description of a permission mode as a session mode.
fn mode_text(mode: PermissionMode) -> (&'static str, &'static str) {
    match mode {
        PermissionMode::Default => ("Default", "Ask before edits and commands that are not read-only"),
        PermissionMode::AcceptEdits => ("Accept edits", "File edits run without asking; commands still ask"),
        PermissionMode::Plan => ("Plan", "Read-only: explore, then present a plan"),
        PermissionMode::Auto => ("Auto", "A reviewer model approves or blocks what would ask"),
        PermissionMode::DontAsk => ("Don't ask", "Deny anything that would ask"),
        PermissionMode::Bypass => ("Bypass", "Run everything without asking"),
    }
}

/// Lathe's permission modes as the session's modes, ids in Lathe's flag spelling (`accept-edits`).
pub fn session_modes(current: PermissionMode) -> acp::SessionModeState {
    let modes = PermissionMode::ALL
        .iter()
        .map(|mode| {
            let (name, description) = mode_text(*mode);
            acp::SessionMode::new(mode.as_str(), name).description(description.to_string())
        })
        .collect();
    acp::SessionModeState::new(current.as_str(), modes)
}

/// The todo list (`todo_write`'s `items`: `[{content, status}]`) as a plan.
pub fn plan(items: &Value) -> acp::Plan {
    let entries = items
        .as_array()
        .into_iter()
        .flatten()
        .map(|item| {
            let content = item.get("content").and_then(Value::as_str).unwrap_or_default();
            let status = match item.get("status").and_then(Value::as_str) {
                Some("in_progress") => acp::PlanEntryStatus::InProgress,
                Some("completed") => acp::PlanEntryStatus::Completed,
                _ => acp::PlanEntryStatus::Pending,
            };
            acp::PlanEntry::new(content, acp::PlanEntryPriority::Medium, status)
        })
        .collect();
    acp::Plan::new(entries)
}

/// The session's `/name` commands (command files and skills) as available commands.
pub fn commands(commands: &[UserCommand]) -> Vec<acp::AvailableCommand> {
    commands
        .iter()
        .map(|command| {
            let input = command.argument_hint.clone().map(|hint| {
                acp::AvailableCommandInput::Unstructured(acp::UnstructuredCommandInput::new(hint))
            });
            acp::AvailableCommand::new(command.name.clone(), command.description.clone()).input(input)
        })
        .collect()
}

/// The client's MCP servers as one inline `--mcp-config` object (Claude Code's `.mcp.json`
/// shape: `{"mcpServers": {NAME: {command, args, env} | {type: "http"|"sse", url, headers}}}`);
/// `None` when there are none.
pub fn mcp_config(servers: &[acp::McpServer]) -> Option<String> {
    let mut entries = Map::new();
    for server in servers {
        let (name, entry) = match server {
            acp::McpServer::Stdio(stdio) => {
                let env: Map<String, Value> =
                    stdio.env.iter().map(|var| (var.name.clone(), json!(var.value))).collect();
                (stdio.name.clone(), json!({"command": stdio.command, "args": stdio.args, "env": env}))
            }
            acp::McpServer::Http(http) => (
                http.name.clone(),
                json!({"type": "http", "url": http.url, "headers": headers(&http.headers)}),
            ),
            acp::McpServer::Sse(sse) => {
                (sse.name.clone(), json!({"type": "sse", "url": sse.url, "headers": headers(&sse.headers)}))
            }
            _ => continue,
        };
        entries.insert(name, entry);
    }
    (!entries.is_empty()).then(|| json!({ "mcpServers": entries }).to_string())
}

fn headers(headers: &[acp::HttpHeader]) -> Map<String, Value> {
    headers.iter().map(|header| (header.name.clone(), json!(header.value))).collect()
}

/// A tool's result status as ACP's: only a completed call is `completed`; denied, failed and
/// interrupted calls are `failed` (Lathe's own status is in `_meta`).
pub fn result_status(status: lathe_protocol::ToolStatus) -> acp::ToolCallStatus {
    match status {
        lathe_protocol::ToolStatus::Completed => acp::ToolCallStatus::Completed,
        _ => acp::ToolCallStatus::Failed,
    }
}

/// The text a file would hold after an edit or write call, from the call's arguments and the
/// file's current text (`None` for a new file); `None` when the arguments do not say.
pub fn edited_text(tool: &str, arguments: &Value, old: Option<&str>) -> Option<String> {
    match tool {
        "write_file" => arguments.get("content").and_then(Value::as_str).map(str::to_string),
        "edit_file" => {
            let old = old?;
            let find = arguments.get("old_string").and_then(Value::as_str).filter(|find| !find.is_empty())?;
            let replace = arguments.get("new_string").and_then(Value::as_str)?;
            if !old.contains(find) {
                return None;
            }
            let all = arguments.get("replace_all").and_then(Value::as_bool).unwrap_or(false);
            Some(if all { old.replace(find, replace) } else { old.replacen(find, replace, 1) })
        }
        _ => None,
    }
}

#[cfg(test)]
#[path = "mapping_tests.rs"]
mod tests;
