//! The session host: what every front end (print mode, the terminal UI, a web UI) starts a session
//! with (ARCHITECTURE.md §1).
//!
//! Flow: [`SessionBuilder::start`] resolves the configuration ([`Config::resolve`]: files,
//! environment, the front end's [`Flags`]), builds the provider, starts the MCP servers in the
//! background ([`crate::mcp`]), opens or resumes the session (torn lines skipped with warnings,
//! calls left without results answered, a model switch recorded), assembles the system prompt,
//! collects the MCP servers' tools beside the built-in ones, loads the hooks ([`crate::hooks`],
//! SessionStart runs here) and spawns the session task, which runs SessionEnd and stops the MCP
//! servers when the session ends. The front
//! end gets a [`SessionHandle`]: it sends [`AgentOp`]s and receives [`AgentEvent`]s, starting with
//! `SessionStarted` and the warnings of the start. The task runs one user turn at a time
//! ([`Agent::run`]); while a turn runs it still takes `Cancel`, `Permission`, `SetMode` and `Quit`
//! (other ops wait for the turn's end). The event stream closes after `Quit`, or when every op
//! sender is dropped and no turn is running; the session file is synced before that.
//!
//! ```no_run
//! # async fn demo() -> Result<(), lathe_core::host::StartError> {
//! use lathe_core::host::{Flags, SessionBuilder};
//! use lathe_protocol::{AgentEvent, AgentOp, Content};
//! let mut session = SessionBuilder::new(Flags::default()).start().await?;
//! let _ = session.ops.send(AgentOp::UserInput { content: vec![Content::text("hello")] });
//! while let Some(event) = session.events.recv().await {
//!     if let AgentEvent::Finished { final_text, .. } = &event {
//!         println!("{final_text}");
//!         let _ = session.ops.send(AgentOp::Quit);
//!     }
//! }
//! # Ok(()) }
//! ```

mod abort;
mod approver;
mod command;
mod config;
pub use config::workspace;
mod error;
mod extensions;
mod flags;
pub mod local;
mod open;
mod runner;
mod team;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use lathe_protocol::{AgentEvent, AgentOp, LedgerItem, Meta};
use lathe_tools::{ToolContext, ToolRegistry};
use tokio::sync::{mpsc, watch};

pub use config::{Config, DEFAULT_MAX_OUTPUT_TOKENS, DEFAULT_MAX_TURNS, ResolvedProvider, default_provider};
pub use error::StartError;
pub use flags::{Flags, Interaction, SessionChoice, TeamSeat};
/// Processes that detached from their group: the front end makes Lathe their reaper at start
/// ([`orphans::adopt`]) and ends them at exit ([`orphans::end_adopted`]).
pub use lathe_process::orphans;
pub use lathe_tools::builtin::{DirEntryName, dir_entries};
/// The session's background jobs, as [`SessionHandle::jobs`] holds them.
pub use lathe_tools::{JobState, JobSummary, JobTable};

use crate::hooks::Hooks;
use crate::memory::session::{MemoryMode, SessionMemory};
use crate::memory::tool::{MemoryTool, MemoryViewTool};
use crate::plan::{ExitPlanMode, PlanDesk};
use crate::question::{AskUser, QuestionDesk};
use crate::session::SessionSummary;
use crate::subagent::background::BackgroundTable;
use crate::subagent::fork::ForkSlot;
use crate::subagent::parent::Parent;
use crate::subagent::usage::UsageMeter;
use crate::{Agent, instructions, paths, prompt};

/// What the session is, as it started.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionInfo {
    /// Session id.
    pub id: String,
    /// Model name.
    pub model: String,
    /// Provider label.
    pub provider: String,
    /// Workspace root.
    pub workspace: PathBuf,
    /// The session file, `None` when nothing is saved.
    pub session_file: Option<PathBuf>,
    /// Each configured MCP server, its status and tool count (what `/mcp` shows).
    pub mcp_servers: Vec<crate::mcp::ServerReport>,
    /// The sandbox commands run in, one line (`workspace-write, network off, bubblewrap`).
    pub sandbox: String,
}

/// A running session: send ops, receive events.
pub struct SessionHandle {
    /// Ops to the session. Dropping every sender ends the session once no turn is running.
    pub ops: mpsc::UnboundedSender<AgentOp>,
    /// Events from the session, in order; closes when the session task ends.
    pub events: mpsc::UnboundedReceiver<AgentEvent>,
    /// What was started.
    pub info: SessionInfo,
    /// The session task; it ends after the event stream's last event.
    pub task: tokio::task::JoinHandle<()>,
    /// The session's background jobs (`shell` with `run_in_background`), for `/jobs`; every one
    /// still running is stopped when the session ends.
    pub jobs: Arc<JobTable>,
    /// The session's MCP servers: their status as it stands (a server still starting when the
    /// session began becomes connected or failed; `/mcp`).
    pub mcp: Arc<crate::mcp::McpServers>,
    /// The team this session leads (`--teams`), for `/team`: its members, stopping one,
    /// coordinator mode.
    pub team: Option<Arc<crate::team::lead::TeamHub>>,
}

/// Builds a session from a front end's flags.
#[derive(Debug, Clone)]
pub struct SessionBuilder {
    flags: Flags,
    interaction: Interaction,
    home: Option<PathBuf>,
    editor: Option<Arc<dyn lathe_tools::EditorFiles>>,
    member: Option<TeamSeat>,
}

impl SessionBuilder {
    /// A builder for `flags`, headless, with Lathe's home from `$LATHE_HOME` or `~/.lathe`.
    pub fn new(flags: Flags) -> SessionBuilder {
        SessionBuilder { flags, interaction: Interaction::Headless, home: None, editor: None, member: None }
    }

    /// Makes the session a teammate's ([`crate::team`]): no team or sub-agent tools, the shared
    /// team tools on its own team, and its file writes checked against the other members'.
    pub fn teammate(mut self, seat: TeamSeat) -> SessionBuilder {
        self.member = Some(seat);
        self
    }

    /// Who answers permission prompts.
    pub fn interaction(mut self, interaction: Interaction) -> SessionBuilder {
        self.interaction = interaction;
        self
    }

    /// Uses `home` as Lathe's home instead of `$LATHE_HOME` / `~/.lathe`.
    pub fn home(mut self, home: PathBuf) -> SessionBuilder {
        self.home = Some(home);
        self
    }

    /// Text files are read and written through `editor` ([`lathe_tools::editor`]), not the disk.
    pub fn editor(mut self, editor: Arc<dyn lathe_tools::EditorFiles>) -> SessionBuilder {
        self.editor = Some(editor);
        self
    }

    /// Resolves, opens and starts the session (see the module docs for the order).
    pub async fn start(self) -> Result<SessionHandle, StartError> {
        let home = self.home.clone().unwrap_or_else(paths::lathe_home);
        let config = Config::resolve(&self.flags, &home)?;
        // The repository's state (git) and the instruction files are the slowest part of the start:
        // they begin first and run while the provider, the session file and the rest are set up.
        let repository = prompt::RepositoryState::gather(config.workspace.clone());
        let prompt_task = {
            let sources = instructions::Sources {
                cwd: config.workspace.clone(),
                lathe_home: home.clone(),
                user_home: dirs::home_dir(),
                max_bytes: config.layer.instructions_max_bytes.unwrap_or(instructions::DEFAULT_MAX_BYTES),
            };
            tokio::spawn(async move { prompt::prepare(&sources).await })
        };
        let _stop_prompt = abort::AbortOnDrop(prompt_task.abort_handle());
        let resolved = config.build_provider(None, None)?;
        crate::permissions::start_sandbox_probe(&config.layer, config.permission_mode);
        // Memory loads (every entry of every scope, and the recall index) while the rest starts.
        let memory_mode = config.layer.memory.mode.unwrap_or_default();
        let memory_task = {
            let (home, workspace) = (home.clone(), config.workspace.clone());
            tokio::task::spawn_blocking(move || SessionMemory::open(&home, &workspace, memory_mode, ""))
        };
        // MCP servers start now, in the background, while the session file and the system prompt
        // are prepared; their tools are collected just before the agent is built (waiting only
        // for servers whose tool list is not remembered from an earlier start).
        let mcp = crate::mcp::start(&home, &config.workspace, &self.flags.mcp_config, &config.layer)
            .map_err(|error| StartError::Usage(error.to_string()))?;
        let workspace_name = config.workspace.display().to_string();
        let opened = open::open(&config.sessions_dir, &self.flags.session, &workspace_name)?;
        tracing::debug!("provider and session file ready");
        let prompt = match prompt_task.await {
            Ok(prompt) => prompt,
            Err(error) => std::panic::resume_unwind(error.into_panic()),
        };
        tracing::debug!("system prompt ready");
        let found = extensions::discover(&config.workspace, &home);
        let skills = found.skills.clone();
        let (commands, command_warnings) = extensions::user_commands(&config.workspace, &home, &skills);

        let mut warnings = config.warnings.clone();
        warnings.extend(opened.warnings);
        warnings.extend(prompt.warnings);

        // Found and parsed once: permission rules and hooks come from the same files.
        let settings = crate::config::SettingsSources::find(&home, &config.workspace);
        let permissions = crate::permissions::permissions(
            &config.layer,
            &settings,
            config.permission_mode,
            &config.workspace,
            &home,
            &opened.id,
        );
        warnings.extend(permissions.warnings);
        let mut ctx = ToolContext::new(config.workspace.clone());
        ctx.spill_dir = home.join("tool-results");
        ctx.sandbox = permissions.sandbox;
        ctx.shell_env = permissions.shell_env;
        ctx.policy = Some(permissions.policy.clone());
        ctx.editor = self.editor.clone();
        if let Some(timeout) = config.shell_timeout_ms {
            ctx.shell_default_timeout_ms = timeout;
        }
        let session_file = opened.writer.as_ref().map(|writer| writer.path().to_path_buf());
        let mut tools = ToolRegistry::builtin();
        let mcp = Arc::new(mcp.session().await);
        // With a user present the servers start now; print mode starts them with its first request.
        if self.interaction != Interaction::Headless {
            mcp.launch();
        }
        // The shell tool's description states the sandbox its commands run in (which waits for
        // the backend probe, started with the session and done by now).
        tools.register(Arc::new(lathe_tools::builtin::Shell::in_sandbox(ctx.sandbox.as_deref())));
        tracing::debug!("MCP servers ready");
        warnings.extend(mcp.warnings().iter().cloned());
        crate::mcp::register(&mut tools, &mcp);
        let (memory, memory_warnings) = memory_task.await.unwrap_or_else(|error| {
            (None, vec![format!("memory: could not be loaded ({error}); this session has none")])
        });
        warnings.extend(memory_warnings);
        tracing::debug!("memory loaded");
        if let Some(memory) = &memory {
            memory.set_session(&opened.id);
            memory.set_policy(permissions.policy.clone());
        }
        let mut main_only: Vec<Arc<dyn lathe_tools::DynTool>> = Vec::new();
        if let Some(memory) = &memory {
            // Sub-agents read memory and never write it: the writing tool is the main agent's.
            tools.register(Arc::new(MemoryViewTool::new(memory.clone())));
            if memory.mode() == MemoryMode::On {
                main_only.push(Arc::new(MemoryTool::new(memory.clone())));
            }
        }
        let (hooks, hook_warnings) = Hooks::for_session(
            &settings.files,
            &config.workspace,
            &opened.id,
            session_file.clone().unwrap_or_default(),
            permissions.policy.clone(),
        );
        warnings.extend(hook_warnings);
        let (mode_sender, modes) = watch::channel(config.permission_mode);
        let (events, receiver) = mpsc::unbounded_channel();
        let approver = match self.interaction {
            Interaction::Interactive => Some(Arc::new(approver::ChannelApprover::new(events.clone()))),
            Interaction::Headless => None,
        };
        let plans = Arc::new(match self.interaction {
            Interaction::Interactive => PlanDesk::interactive(events.clone(), modes.clone()),
            Interaction::Headless => PlanDesk::headless(events.clone()),
        });
        let plan_file = crate::permissions::plan_file(&home, &opened.id);
        let lead = self.member.is_none().then_some(self.interaction);
        let team_hub =
            team::lead_hub(&self.flags, lead, &config, &resolved, &home, &found, &permissions.policy);
        if let Some(hub) = &team_hub {
            main_only.extend(crate::team::lead_tools::lead_tools(hub.clone()));
        }
        if let Some(seat) = &self.member {
            main_only.extend(team::member_tools(&home, seat));
        }
        main_only.push(Arc::new(ExitPlanMode::new(plans.clone(), plan_file)));
        let questions = Arc::new(match self.interaction {
            Interaction::Interactive => QuestionDesk::interactive(events.clone()),
            Interaction::Headless => QuestionDesk::headless(),
        });
        main_only.push(Arc::new(AskUser::new(questions.clone())));
        let settings = config.agent_settings(&resolved);
        let meter = Arc::new(UsageMeter::default());
        let background = Arc::new(BackgroundTable::default());
        let fork = Arc::new(ForkSlot::default());
        let policy = permissions.policy;
        let reviewer = auto_reviewer(&config, &resolved, &home, &mut warnings);
        let parent = |tools| Parent {
            provider: resolved.provider.clone(),
            settings: settings.clone(),
            tools,
            environment: prompt.system.get(1).cloned(),
            policy: policy.clone(),
            approver: approver.clone().map(|approver| approver as Arc<dyn crate::Approver>),
            reviewer: reviewer.clone(),
            events: events.clone(),
            transcripts: session_file
                .as_ref()
                .map(|_| config.sessions_dir.join(&opened.id).join("subagents")),
            meter: meter.clone(),
            hooks: hooks.clone(),
            background: background.clone(),
            fork: fork.clone(),
        };
        let (mut tools, gate) =
            extensions::tools(found, tools, parent, main_only, self.member.is_none(), &mut warnings);
        tools = team::wrap(tools, team_hub.as_ref(), self.member.as_ref(), &home);
        let mut system = prompt.system;
        let mut session_context = String::new();
        if let Some(memory) = &memory {
            session_context.push_str(&memory.index_context());
            tracing::debug!("memory index ready");
        }
        let small = resolved.profile.tool_set == crate::profile::ToolSet::Small;
        // The local model's first message is the same bytes in every run (its prompt cache, greedy
        // decoding): it waits for git here. Any other session sends it with the first user message
        // (print mode: after the first response, so its first request does not wait for git).
        let repository = if small {
            session_context.insert_str(0, &repository.text().await);
            None
        } else {
            Some(repository)
        };
        if small {
            // The environment (working directory, date) and the project instructions differ between
            // directories and days: in a new session they open the first message, before the
            // repository state, so the local model's system turn (core prompt + tools) is
            // byte-identical in every run and its KV state is reused from disk (lathe-local's
            // prompt cache). A resumed session keeps them in the system turn, as its first message
            // is not sent again (and may have come from another provider).
            let new_session = !opened.ledger.iter().any(|item| matches!(item, LedgerItem::User(_)));
            if new_session && system.len() > 1 {
                let environment = system.remove(1);
                session_context = local::session_context(&environment.text, &session_context);
            }
            // A small model guesses paths (`src/main.rs` in a Python project) instead of looking:
            // it gets the workspace's files up front, as the list_dir tool shows them.
            if let Some(listing) = local::listing(&tools, &ctx).await {
                session_context.push_str(&listing);
            }
            local::small_tool_set(&mut tools, &ctx);
            if let Some(core) = system.first_mut() {
                core.text = prompt::LOCAL_CORE.to_string();
            }
        }
        let jobs = ctx.jobs.clone();
        let mut agent =
            Agent::new(resolved.provider.clone(), tools, ctx, system, opened.ledger, opened.writer, settings)
                .with_policy(policy)
                .with_mode_watch(modes)
                .with_rules(prompt.rules)
                .with_session_context(session_context)
                .with_repository_state(repository, self.interaction == Interaction::Headless)
                .with_usage_meter(meter)
                .with_background(background, fork)
                .with_hooks(hooks)
                .with_reviewer(reviewer, true)
                .with_evaluator_model(config.layer.goal.evaluator_model.clone())
                .with_mcp(mcp.clone())
                .with_verification(config.layer.verify_changes.unwrap_or(small));
        if let Some(memory) = memory {
            agent = agent.with_memory(memory);
        }
        if let Some(hub) = team_hub.clone() {
            agent = agent.with_team(hub);
        }
        if let Some(history) = opened.history {
            agent = agent.with_history(history);
        }
        record_start(&mut agent, &opened.id, &workspace_name, &resolved);
        agent.repair_pairing("the previous run ended before this call completed");
        warnings.extend(agent.close_lost_background());
        let source = match self.flags.session {
            SessionChoice::New => "startup",
            SessionChoice::Continue | SessionChoice::Resume(_) => "resume",
        };
        warnings.extend(agent.session_start(source).await);

        let (sandbox, sandbox_warning) =
            crate::permissions::sandbox_state(&config.layer, config.permission_mode);
        warnings.extend(sandbox_warning);
        let (ops, op_receiver) = mpsc::unbounded_channel();
        let info = SessionInfo {
            id: opened.id,
            model: resolved.model.clone(),
            provider: resolved.label.clone(),
            workspace: config.workspace.clone(),
            session_file,
            mcp_servers: mcp.reports(),
            sandbox,
        };
        if let Some(approver) = team::approver(&home, self.member.as_ref(), approver.as_ref()) {
            agent = agent.with_approver(approver);
        }
        let _ = events.send(AgentEvent::SessionStarted {
            session_id: info.id.clone(),
            model: info.model.clone(),
            provider: info.provider.clone(),
            tools: agent.offered_tool_names(),
            cwd: workspace_name,
            permission_mode: agent.permission_mode(),
            session_file: info.session_file.as_ref().map(|path| path.display().to_string()),
            resumed_turns: agent.user_turn(),
            sandbox: info.sandbox.clone(),
        });
        warnings.extend(command_warnings);
        for message in warnings {
            let _ = events.send(AgentEvent::Warning { message });
        }
        agent.send_warnings(&events);
        let _ = events.send(AgentEvent::Commands { commands });
        let runner =
            runner::Runner::new(agent, config, approver, mode_sender, events, op_receiver, mcp.clone())
                .with_skills(skills, gate)
                .with_plans(plans)
                .with_questions(questions);
        let task = tokio::spawn(runner.run());
        Ok(SessionHandle { ops, events: receiver, info, task, jobs, mcp, team: team_hub })
    }
}

/// Records the session start, or a model switch when a resumed session last used another model.
fn record_start(agent: &mut Agent, id: &str, workspace: &str, resolved: &ResolvedProvider) {
    let last_model = agent.ledger().iter().rev().find_map(|item| match item {
        LedgerItem::Meta(
            Meta::SessionStart { model, provider, .. } | Meta::ModelSwitch { model, provider },
        ) => Some((model.clone(), provider.clone())),
        _ => None,
    });
    let current = (resolved.model.clone(), resolved.label.clone());
    let meta = if agent.ledger().is_empty() {
        Meta::SessionStart {
            session_id: id.to_string(),
            cwd: workspace.to_string(),
            model: resolved.model.clone(),
            provider: resolved.label.clone(),
            time_ms: crate::clock::now_ms(),
        }
    } else if last_model != Some(current) {
        Meta::ModelSwitch { model: resolved.model.clone(), provider: resolved.label.clone() }
    } else {
        return;
    };
    agent.append(LedgerItem::Meta(meta));
}

/// The sessions of the workspace `flags.dir` (or the current directory), newest first, for
/// `lathe sessions` and the resume picker. `home` overrides `$LATHE_HOME` / `~/.lathe`.
pub fn list_sessions(flags: &Flags, home: Option<&Path>) -> Result<Vec<SessionSummary>, StartError> {
    let workspace = config::workspace(flags.dir.as_deref())?;
    let home = home.map_or_else(paths::lathe_home, Path::to_path_buf);
    Ok(crate::session::list(&paths::sessions_dir(&home, &workspace)))
}

/// Auto mode's reviewer for a session at `resolved`: `[auto_mode] reviewer_model` (default the
/// session's model) at the session's provider, or the embedded model for `local`, with Lathe's
/// rules and the user's `~/.lathe/auto-mode.md`. Built for every session (it sends nothing until
/// a call is reviewed), so switching to auto mode later works.
fn auto_reviewer(
    config: &Config,
    resolved: &ResolvedProvider,
    lathe_home: &Path,
    warnings: &mut Vec<String>,
) -> Arc<crate::auto_mode::Reviewer> {
    let (rules, problem) = crate::auto_mode::rules::load(lathe_home);
    warnings.extend(problem);
    let reviewer = |provider: &ResolvedProvider, model: String| {
        Arc::new(crate::auto_mode::Reviewer::new(
            provider.provider.clone(),
            model,
            provider.profile.thinking_format,
            rules.clone(),
        ))
    };
    let Some(model) = config.layer.auto_mode.reviewer_model.as_deref() else {
        return reviewer(resolved, resolved.model.clone());
    };
    match crate::auto_mode::local_size(model) {
        Some(size) => match config.build_provider(Some("local"), Some(size)) {
            Ok(local) => reviewer(&local, local.model.clone()),
            Err(error) => {
                warnings.push(format!(
                    "[auto_mode] reviewer_model = \"{model}\": {error}; the session's model reviews instead"
                ));
                reviewer(resolved, resolved.model.clone())
            }
        },
        None => reviewer(resolved, model.to_string()),
    }
}
