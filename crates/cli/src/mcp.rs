//! `lathe mcp list` and `lathe mcp approve`: the MCP servers of the current project; [`lines`] is
//! also what `/mcp` shows in the terminal UI.

use lathe_core::host::Config;
use lathe_core::mcp::{ServerReport, ServerStatus, SkipReason, approvals};

use crate::args::{Cli, EXIT_FAILED, EXIT_OK, EXIT_USAGE, McpAction};

/// Runs one `lathe mcp` action; returns the exit status.
pub async fn command(cli: &Cli, action: &McpAction) -> u8 {
    let config = match Config::resolve(&cli.flags(), &lathe_core::paths::lathe_home()) {
        Ok(config) => config,
        Err(error) => {
            eprintln!("lathe: error: {error}");
            return EXIT_USAGE;
        }
    };
    let (home, cwd, layer) = (config.home, config.workspace, config.layer);
    match action {
        McpAction::List => {
            let startup = match lathe_core::mcp::start_uncached(&home, &cwd, &cli.mcp_config, &layer) {
                Ok(startup) => startup,
                Err(error) => {
                    eprintln!("lathe: error: {error}");
                    return EXIT_USAGE;
                }
            };
            let servers = startup.finish().await;
            if servers.reports().is_empty() {
                println!("{NONE_CONFIGURED}");
            }
            for line in lines(&servers.reports()) {
                println!("{line}");
            }
            for warning in servers.warnings() {
                eprintln!("lathe: warning: {warning}");
            }
            servers.shutdown().await;
            EXIT_OK
        }
        McpAction::Approve { names } => {
            let config = match lathe_core::mcp::load_config(&home, &cwd, &[], &layer) {
                Ok(config) => config,
                Err(error) => {
                    eprintln!("lathe: error: {error}");
                    return EXIT_USAGE;
                }
            };
            let waiting: Vec<String> = config
                .skipped
                .iter()
                .filter(|skipped| skipped.reason == SkipReason::NeedsApproval)
                .map(|skipped| skipped.name.clone())
                .collect();
            let chosen: Vec<String> = if names.is_empty() { waiting.clone() } else { names.clone() };
            if let Some(unknown) = chosen.iter().find(|name| !waiting.contains(name)) {
                eprintln!(
                    "lathe: error: `{unknown}` is not a project MCP server waiting for approval in {} (waiting: {})",
                    cwd.join(".mcp.json").display(),
                    if waiting.is_empty() { "none".to_string() } else { waiting.join(", ") }
                );
                return EXIT_USAGE;
            }
            if chosen.is_empty() {
                println!("no project MCP servers are waiting for approval");
                return EXIT_OK;
            }
            match approvals::approve(&home, &cwd, &chosen) {
                Ok(()) => {
                    println!("approved for {}: {}", cwd.display(), chosen.join(", "));
                    EXIT_OK
                }
                Err(error) => {
                    eprintln!("lathe: error: cannot save approvals: {error}");
                    EXIT_FAILED
                }
            }
        }
    }
}

/// What `lathe mcp list` and `/mcp` say when no server is configured.
pub const NONE_CONFIGURED: &str = "no MCP servers configured (~/.lathe/mcp.json, .mcp.json, --mcp-config)";

/// One line per server: name, transport, scope, status (with the tool count of a connected server).
pub fn lines(reports: &[ServerReport]) -> Vec<String> {
    reports
        .iter()
        .map(|report| {
            let status = match &report.status {
                ServerStatus::Connected { tools } => format!("connected · {tools} tools"),
                ServerStatus::Starting { tools } => {
                    format!("starting · {tools} tools known from its last start")
                }
                ServerStatus::Failed(error) => format!("failed · {error}"),
                ServerStatus::Skipped(SkipReason::NeedsApproval) => {
                    "needs approval · run `lathe mcp approve` to start it".to_string()
                }
                ServerStatus::Skipped(SkipReason::Invalid(reason)) => format!("invalid · {reason}"),
            };
            let transport = if report.transport.is_empty() { "-" } else { report.transport };
            format!("{:<20} {:<6} {:<8} {status}", report.name, transport, report.scope.as_str())
        })
        .collect()
}
