//! What a front end passes to the session builder: its command-line flags as plain data, which
//! session to open, and whether a person can answer permission prompts.

use std::path::PathBuf;

/// Flags of a front end, applied over the config files and the environment (the last layer).
/// Every field is optional: `None` (or `false`) leaves the configured value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Flags {
    /// Workspace (`-C DIR`); default the current directory.
    pub dir: Option<PathBuf>,
    /// Provider name (`--provider`).
    pub provider: Option<String>,
    /// Model name (`--model`).
    pub model: Option<String>,
    /// Base URL of the provider's API (`--base-url`).
    pub base_url: Option<String>,
    /// Permission mode name (`--permission-mode`), checked by the builder.
    pub permission_mode: Option<String>,
    /// `--yolo`: the bypass permission mode, over `permission_mode`.
    pub yolo: bool,
    /// Model requests per user turn (`--max-turns`); at least 1.
    pub max_turns: Option<u32>,
    /// Tool calls of one response that run (`--max-calls-per-response`); 0 = unlimited.
    pub max_calls_per_response: Option<u32>,
    /// Cost budget in US dollars (`--max-cost`); positive.
    pub max_cost_usd: Option<f64>,
    /// `--no-auto-compact`: never compact automatically (over `auto_compact` in config).
    pub no_auto_compact: bool,
    /// GGUF file for the local provider (`--model-path`).
    pub model_path: Option<PathBuf>,
    /// OS sandbox of shell commands (`--sandbox workspace-write|read-only|off`), checked by the
    /// builder.
    pub sandbox: Option<String>,
    /// Long-term memory (`--memory on|read-only|off`), checked by the builder.
    pub memory: Option<String>,
    /// `--mcp-config` arguments (files or inline JSON), added to the configured MCP servers.
    pub mcp_config: Vec<String>,
    /// Which session to open.
    pub session: SessionChoice,
    /// `--teams`: the lead's team tools (`team_create`, `spawn_teammate`, `send_message`, the
    /// board) are offered.
    pub teams: bool,
}

/// Which session the builder opens.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum SessionChoice {
    /// A new session.
    #[default]
    New,
    /// The workspace's most recently written session (`--continue`).
    Continue,
    /// The session with this id (`--resume ID`; a picker over [`crate::host::list_sessions`]
    /// chooses it in the terminal UI).
    Resume(String),
}

/// Who answers permission prompts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Interaction {
    /// Nobody: a call that would ask is denied with a message the model can read (print mode).
    #[default]
    Headless,
    /// A person: the session emits `AgentEvent::PermissionRequest` and waits for
    /// `AgentOp::Permission` (terminal UI, web UI).
    Interactive,
}

/// The seat of a teammate's session (`lathe teammate`): its team and its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamSeat {
    /// The team's name.
    pub team: String,
    /// The teammate's name.
    pub name: String,
    /// Its lead has a person at hand: calls that need approval are put to the lead's user
    /// ([`crate::team::approval::MailApprover`]) instead of being denied.
    pub lead_approves: bool,
}
