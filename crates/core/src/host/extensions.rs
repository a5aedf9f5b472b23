//! The session's user extensions: skills and sub-agent types found at start (frontmatter only),
//! and the `skill` and `task` tools built on them.

use std::sync::Arc;

use lathe_protocol::{UserCommand, UserCommandKind};
use lathe_tools::ToolRegistry;

use crate::skills::SkillSet;
use crate::skills::gate::ToolGate;
use crate::skills::tool::SkillTool;
use crate::subagent::AgentCatalog;
use crate::subagent::background_tools::BackgroundTool;
use crate::subagent::parent::Parent;
use crate::subagent::task::TaskTool;

/// What was found for a workspace.
pub(crate) struct Found {
    pub skills: Arc<SkillSet>,
    pub agents: AgentCatalog,
    pub warnings: Vec<String>,
}

/// Finds the skills and agents of `workspace` (Lathe's home at `home`).
pub(crate) fn discover(workspace: &std::path::Path, home: &std::path::Path) -> Found {
    let (skills, mut warnings) = SkillSet::discover(workspace, home);
    let (agents, agent_warnings) = AgentCatalog::discover(workspace, home);
    warnings.extend(agent_warnings);
    tracing::debug!(skills = skills.all().len(), agents = agents.all().len(), "extensions found");
    Found { skills: Arc::new(skills), agents, warnings }
}

/// `builtin` plus the `skill` tool (when there are skills), `main_only` (tools sub-agents never
/// get, such as memory writes, which replace their read-only namesakes), the `task` tool and its
/// `task_output` and `task_kill` (unless `subagents` is false: a teammate's session);
/// `parent` gets the tools a sub-agent may take (everything but `task` and `main_only`). The session's own tools are behind the
/// returned gate, which a loaded skill's `allowed-tools` close until the turn ends (a sub-agent's
/// tools are not: its `skill` calls do not restrict the parent).
pub(crate) fn tools(
    found: Found,
    mut tools: ToolRegistry,
    parent: impl FnOnce(ToolRegistry) -> Parent,
    main_only: Vec<Arc<dyn lathe_tools::DynTool>>,
    subagents: bool,
    warnings: &mut Vec<String>,
) -> (ToolRegistry, Arc<ToolGate>) {
    warnings.extend(found.warnings);
    let gate = Arc::new(ToolGate::default());
    if !found.skills.is_empty() {
        let (tool, left_out) = SkillTool::new(found.skills.clone());
        tools.register(Arc::new(tool));
        if left_out > 0 {
            warnings.push(format!(
                "{left_out} skills are not listed to the model (the listing is capped at {} KiB); \
                 they can still be invoked by name",
                crate::skills::LISTING_BUDGET_BYTES / 1024
            ));
        }
    }
    let parent = parent(tools.clone());
    for tool in main_only {
        tools.register(tool);
    }
    if subagents {
        let table = parent.background.clone();
        tools.register(Arc::new(TaskTool::new(parent, found.agents)));
        tools.register(Arc::new(BackgroundTool::new(table.clone(), false)));
        tools.register(Arc::new(BackgroundTool::new(table, true)));
    }
    if !found.skills.is_empty() {
        let (tool, _) = SkillTool::new(found.skills.clone());
        tools.register(Arc::new(tool.with_gate(gate.clone())));
    }
    (gate.wrap(&tools), gate)
}

/// The `/name` commands of the session for a front end: the custom command files (their
/// frontmatter only), then the skills no command file shadows, by name; and a warning for each
/// command file that could not be read or is shadowed.
pub(crate) fn user_commands(
    workspace: &std::path::Path,
    home: &std::path::Path,
    skills: &SkillSet,
) -> (Vec<UserCommand>, Vec<String>) {
    let (found, warnings) = crate::commands::list(workspace, home);
    let mut commands: Vec<UserCommand> = found
        .into_iter()
        .map(|command| UserCommand {
            name: command.name,
            description: command.description,
            argument_hint: command.argument_hint,
            kind: UserCommandKind::Command,
        })
        .collect();
    for skill in skills.all() {
        if !commands.iter().any(|command| command.name == skill.name) {
            commands.push(UserCommand {
                name: skill.name.clone(),
                description: skill.description.clone(),
                argument_hint: None,
                kind: UserCommandKind::Skill,
            });
        }
    }
    commands.sort_by(|a, b| a.name.cmp(&b.name));
    (commands, warnings)
}
