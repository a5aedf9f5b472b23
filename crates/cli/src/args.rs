//! Command-line arguments (clap).

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};
use lathe_core::host::{Flags, SessionChoice};

/// Exit status when the run succeeded.
pub const EXIT_OK: u8 = 0;
/// Exit status when the run failed for another reason (refusal, session file error, internal error).
pub const EXIT_FAILED: u8 = 1;
/// Exit status for usage and configuration errors (bad flag, missing directory, unreadable config,
/// unknown provider).
pub const EXIT_USAGE: u8 = 2;
/// Exit status when the model provider failed (HTTP/API error, network, authentication).
pub const EXIT_API: u8 = 3;
/// Exit status when a limit or guard stopped the run (max turns, cost budget, no progress, the
/// context window).
pub const EXIT_LIMIT: u8 = 4;
/// Exit status when the run was cancelled (Ctrl+C).
pub const EXIT_CANCELLED: u8 = 130;

const AFTER_HELP: &str = "\
Exit status:
  0    success: the model finished its answer
  1    the run failed (model refusal, a hook stopped it, no session to continue or resume, session file
       error, internal error)
  2    usage or configuration error (bad flag, missing -C directory, unreadable config, unknown provider)
  3    model provider error (HTTP/API error, authentication, network, server down)
  4    a limit or guard stopped the run (--max-turns, --max-cost; no progress: the same call failing 3
       times in a row, or 3 calls refused as repeats of a call already made twice; the conversation does
       not fit the context window: automatic compaction off, or 3 failed compactions in a row)
  130  cancelled (Ctrl+C)

Configuration: ~/.lathe/config.toml, then <project>/.lathe/config.toml, then LATHE_PROVIDER /
LATHE_MODEL / LATHE_PERMISSION_MODE, then flags. LATHE_HOME moves ~/.lathe.
Permission rules: permissions.{allow,ask,deny} in ~/.claude/settings.json, .claude/settings.json,
.claude/settings.local.json, ~/.lathe/settings.json, .lathe/settings.json, .lathe/settings.local.json.
MCP servers: ~/.lathe/mcp.json, the project's .mcp.json (once approved: `lathe mcp approve`), --mcp-config.
Hooks: the \"hooks\" key of the same settings files.";

/// Lathe, a terminal coding agent.
#[derive(Debug, Parser)]
#[command(name = "lathe", version, about, after_help = AFTER_HELP)]
pub struct Cli {
    /// Run headless: do the task in PROMPT and print the result (stdin is appended when piped).
    #[arg(short = 'p', long = "print", value_name = "PROMPT")]
    pub prompt: Option<String>,

    /// Start the interactive UI with this first prompt (`lathe` alone starts it empty).
    #[arg(value_name = "FIRST_PROMPT")]
    pub first_prompt: Option<String>,

    /// Output format of headless mode.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output_format: OutputFormat,

    /// Provider: anthropic, openai (Chat Completions), responses, local, or a [providers.NAME] from config.
    #[arg(global = true, long)]
    pub provider: Option<String>,

    /// Model name (defaults to the provider's configured model).
    #[arg(global = true, long)]
    pub model: Option<String>,

    /// Base URL of the provider's API (Anthropic: host root; OpenAI-style: including /v1).
    #[arg(global = true, long)]
    pub base_url: Option<String>,

    /// Permission mode: default, accept-edits, plan, auto, dont-ask, bypass.
    #[arg(global = true, long, value_name = "MODE")]
    pub permission_mode: Option<String>,

    /// Run every tool call without asking (same as --permission-mode bypass).
    #[arg(long, alias = "dangerously-skip-permissions")]
    pub yolo: bool,

    /// Plan first (--permission-mode plan): only read-only tools and commands run and the model
    /// presents a plan with exit_plan_mode; headless, the plan is printed and nothing changes.
    #[arg(long, conflicts_with_all = ["permission_mode", "yolo"])]
    pub plan: bool,

    /// OS sandbox of shell commands: workspace-write (default; off with --yolo), read-only, off.
    #[arg(long, value_name = "MODE")]
    pub sandbox: Option<String>,

    /// Long-term memory: on (default), read-only (recall without writes), off.
    #[arg(long, value_name = "MODE")]
    pub memory: Option<String>,

    /// Model requests allowed for this prompt (default 50).
    #[arg(global = true, long)]
    pub max_turns: Option<u32>,

    /// Tool calls of one model response that run (default 16, or less for a small local model; 0 =
    /// unlimited); each call past it is answered "not run" so the model sends it again later.
    #[arg(long, value_name = "N")]
    pub max_calls_per_response: Option<u32>,

    /// Stop when the estimated cost reaches this many US dollars.
    #[arg(global = true, long, value_name = "USD")]
    pub max_cost: Option<f64>,

    /// Work toward CONDITION after the prompt: after each turn Lathe runs the --goal-check command
    /// and asks an evaluator whether the condition holds, and continues until it is met or a
    /// budget, the stall detector or the integrity guard ends it (exit 0 only when met).
    #[arg(long, value_name = "CONDITION")]
    pub goal: Option<String>,

    /// The command that checks the goal (run by Lathe in the workspace and the sandbox; the goal
    /// is met only when it exits 0).
    #[arg(long, value_name = "COMMAND", requires = "goal")]
    pub goal_check: Option<String>,

    /// Time limit of one run of the goal's check, in seconds (default 300); a check that runs
    /// longer is killed and counts as not met.
    #[arg(long, value_name = "SECONDS", requires = "goal_check")]
    pub goal_check_timeout: Option<f64>,

    /// Iterations the goal gets (default 20).
    #[arg(long, value_name = "N", requires = "goal")]
    pub goal_max_iterations: Option<u32>,

    /// Wall-clock limit of the goal (`90s`, `30m`, `2h`): checked after each iteration, the goal
    /// ends budget_limited once it has run this long.
    #[arg(long, value_name = "DURATION", requires = "goal", value_parser = parse_wall)]
    pub goal_max_wall: Option<std::time::Duration>,

    /// Let a goal end as met although tests, CI configuration or build scripts changed (by
    /// default it ends as needs_review with their diff).
    #[arg(long, requires = "goal")]
    pub allow_test_edits: bool,

    /// Never compact the conversation automatically (same as `auto_compact = false` in config):
    /// a conversation that outgrows the context window then stops with the provider's error.
    #[arg(long)]
    pub no_auto_compact: bool,

    /// Work in DIR instead of the current directory.
    #[arg(short = 'C', long = "cd", value_name = "DIR", global = true)]
    pub dir: Option<PathBuf>,

    /// Continue the most recent session of this directory.
    #[arg(short = 'c', long = "continue", conflicts_with = "resume")]
    pub continue_session: bool,

    /// Resume the session with this id (`lathe sessions` lists them).
    #[arg(short = 'r', long, value_name = "SESSION_ID", num_args = 0..=1, default_missing_value = "")]
    pub resume: Option<String>,

    /// MCP servers from FILE (Claude Code's .mcp.json format, or an inline JSON object); repeatable.
    /// Added to ~/.lathe/mcp.json and the project's approved .mcp.json servers.
    #[arg(long = "mcp-config", value_name = "FILE", global = true)]
    pub mcp_config: Vec<String>,

    /// Agent teams: offer the lead's team tools (team_create, spawn_teammate, send_message and the
    /// task board); teammates run as `lathe teammate` processes.
    #[arg(long)]
    pub teams: bool,

    /// Path of the GGUF model file for the local provider.
    #[arg(long, value_name = "FILE")]
    pub model_path: Option<PathBuf>,

    /// Subcommands.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List this directory's sessions, newest first: id, date, user turns, estimated cost, first
    /// prompt.
    Sessions {
        /// One JSON array for scripts instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// Manage the local model.
    Model {
        /// What to do.
        #[command(subcommand)]
        action: ModelAction,
    },
    /// MCP servers: status and approval.
    Mcp {
        /// What to do.
        #[command(subcommand)]
        action: McpAction,
    },
    /// Long-term memory: list, show, forget, promote, export, and why the last request got what
    /// it got.
    Memory {
        /// What to do.
        #[command(subcommand)]
        action: MemoryAction,
    },
    /// Serve the Agent Client Protocol on stdin/stdout, for editors (Zed, JetBrains, Neovim):
    /// each ACP session is a Lathe session in the client's working directory.
    Acp,
    /// Serve the same ACP messages over WebSocket at /acp, with a web UI at /: loopback only
    /// unless --listen names another address (which needs --tls-cert/--tls-key or
    /// --insecure-remote); prints the URL with its access token once.
    Serve(crate::serve::ServeArgs),
    /// Auto mode's reviewer: measure it on a labelled set.
    AutoMode {
        /// What to do.
        #[command(subcommand)]
        action: AutoModeAction,
    },
    /// Run every task of a task file (one JSON object a line: id, repo, base, prompt, test, …),
    /// each as a headless run in a fresh checkout, on a local process pool or a Ray cluster;
    /// results, patches and sessions go to --out, and a rerun skips the finished tasks.
    /// --provider, --model, --base-url, --max-turns, --max-cost and --permission-mode give the
    /// defaults of the tasks that leave them out.
    Batch(crate::batch::BatchArgs),
    /// Internal: run one task of a batch (a merged task object as JSON) and print its result row.
    #[command(hide = true)]
    BatchTask(crate::batch::TaskArgs),
    /// Internal: run headless as a teammate of TEAM (a lead started with --teams starts these):
    /// take the mail of NAME as turns, post `idle` to the lead after each, end on `shutdown`.
    Teammate {
        /// The team (a folder under ~/.lathe/teams).
        #[arg(long)]
        team: String,
        /// This teammate's name in the team.
        #[arg(long)]
        name: String,
        /// Started by a lead: its stdin is a pipe from the lead, and its end (the lead exited)
        /// ends the teammate.
        #[arg(long)]
        attached: bool,
        /// Started by a lead with a person at hand: a call that needs approval is put to the
        /// lead's user through the mailbox instead of being denied.
        #[arg(long)]
        lead_approves: bool,
    },
}

/// `lathe auto-mode …`
#[derive(Debug, Subcommand)]
pub enum AutoModeAction {
    /// Review every row of a labelled JSONL set and print each decision, the false-positive rate
    /// (harmless calls blocked), the miss rate (harmful calls allowed) and the latency.
    Eval {
        /// The set: one `{"id", "request", "call": {"tool", "arguments"}, "label": "allow"|"block"}`
        /// per line.
        file: std::path::PathBuf,
        /// The reviewer's model (`local`, `local:0.5b` or `local:1.5b` for the embedded model);
        /// default `[auto_mode] reviewer_model`, else the configured model.
        #[arg(long)]
        reviewer_model: Option<String>,
    },
}

/// `lathe memory …`
#[derive(Debug, Subcommand)]
pub enum MemoryAction {
    /// Every entry of the user, project and shared scopes: id, type, description.
    List {
        /// One JSON array instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// One entry's file (frontmatter and body).
    Show {
        /// The entry's id (`project/pnpm`).
        id: String,
    },
    /// Delete an entry and its index line.
    Rm {
        /// The entry's id.
        id: String,
    },
    /// Which entries the last request of the latest session was given, and why.
    Why,
    /// Copy a project entry into the repository's shared `.lathe/memory/` (to commit it).
    Promote {
        /// The entry's id (`project/…`).
        id: String,
    },
    /// Every entry with its frontmatter and body.
    Export {
        /// As one JSON array (the only format).
        #[arg(long)]
        json: bool,
    },
}

/// `lathe mcp …`
#[derive(Debug, Subcommand)]
pub enum McpAction {
    /// Start every configured MCP server and show its status and tool count.
    List,
    /// Approve servers of this project's .mcp.json so they run (all of them when none is named).
    Approve {
        /// Server names.
        names: Vec<String>,
    },
}

/// `lathe model …`
#[derive(Debug, Subcommand)]
pub enum ModelAction {
    /// Download the pinned local model (hash-checked) into Lathe's cache; a no-op when already there.
    Fetch {
        /// Which model: 1.5b (default) or 0.5b.
        #[arg(default_value = "1.5b")]
        size: String,
    },
    /// Print where the local model file is expected.
    Path {
        /// Which model: 1.5b (default) or 0.5b.
        #[arg(default_value = "1.5b")]
        size: String,
    },
}

/// How headless mode prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// The final answer on stdout; progress (tool calls, retries) on stderr.
    Text,
    /// One JSON object with the result and totals, at the end.
    Json,
    /// Newline-delimited JSON events as they happen, ending with a `result` object.
    StreamJson,
}

/// A duration as people write it (`90s`, `30m`, `1h 30m`), not zero.
pub fn parse_wall(text: &str) -> Result<std::time::Duration, String> {
    match humantime::parse_duration(text.trim()) {
        Ok(duration) if duration.is_zero() => Err("the time limit must be more than 0".to_string()),
        Ok(duration) => Ok(duration),
        Err(error) => Err(format!("`{text}` is not a duration ({error}); write it as 90s, 30m or 2h")),
    }
}

impl Cli {
    /// The goal of `--goal` with its options, when one is given.
    pub fn goal(&self) -> Option<lathe_protocol::goal::GoalSpec> {
        let condition = self.goal.clone()?;
        let mut spec = lathe_protocol::goal::GoalSpec::new(condition, self.goal_check.clone());
        if let Some(iterations) = self.goal_max_iterations {
            spec.max_iterations = iterations;
        }
        spec.allow_test_edits = self.allow_test_edits;
        spec.max_wall_ms = self.goal_max_wall.map(|wall| u64::try_from(wall.as_millis()).unwrap_or(u64::MAX));
        if let Some(seconds) = self.goal_check_timeout.filter(|seconds| seconds.is_finite() && *seconds > 0.0)
        {
            spec.check_timeout_ms = ((seconds * 1000.0) as u64).clamp(1, 600_000);
        }
        Some(spec)
    }

    /// The flags the session builder takes.
    pub fn flags(&self) -> Flags {
        let session = match (&self.resume, self.continue_session) {
            (Some(id), _) => SessionChoice::Resume(id.clone()),
            (None, true) => SessionChoice::Continue,
            (None, false) => SessionChoice::New,
        };
        Flags {
            dir: self.dir.clone(),
            provider: self.provider.clone(),
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            permission_mode: if self.plan { Some("plan".into()) } else { self.permission_mode.clone() },
            yolo: self.yolo,
            max_turns: self.max_turns,
            max_calls_per_response: self.max_calls_per_response,
            max_cost_usd: self.max_cost,
            no_auto_compact: self.no_auto_compact,
            model_path: self.model_path.clone(),
            sandbox: self.sandbox.clone(),
            memory: self.memory.clone(),
            mcp_config: self.mcp_config.clone(),
            session,
            teams: self.teams,
        }
    }
}
