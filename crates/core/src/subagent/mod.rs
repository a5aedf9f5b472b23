//! Sub-agents (FEATURES.md §H): agent types the model delegates a self-contained job to through the
//! `task` tool ([`task::TaskTool`]).
//!
//! Types: the built-in `explore` (read-only tools, fast searching), `plan` (read-only, returns a
//! plan) and `general` (every tool the parent has), and custom agents from `.lathe/agents/*.md`,
//! `.claude/agents/*.md` and the user-level folders ([`crate::definitions::search_dirs`]). A custom
//! agent's frontmatter has `name`, `description`, optionally `tools` (a list in Claude's names —
//! `Read, Grep, Bash` — or Lathe's; absent means the parent's tools) and `model` (`inherit` or a
//! model name); its body is its system prompt, read when it runs. At start-up only the frontmatter
//! is read; bad files and duplicate names are reported and skipped. A custom agent named like a
//! built-in one replaces it.
//!
//! A `task` call may run its sub-agent in the background ([`background`]: the call returns an id,
//! the end arrives as a notification before a later request) or fork the parent's conversation
//! instead of naming a type ([`fork`]).

pub mod background;
pub mod background_tools;
pub mod fork;
pub mod parent;
mod spawn;
pub mod task;
pub mod usage;

use std::path::{Path, PathBuf};

use lathe_tools::{Effect, ToolRegistry};
use serde::Deserialize;

use crate::definitions::{Scope, search_dirs, valid_name};
use crate::frontmatter::{FrontmatterError, NameList, read_body, read_head};
use crate::tool_scope::ToolList;

/// The name of the tool that starts sub-agents; never offered to a sub-agent (depth 1).
pub const TASK_TOOL: &str = "task";

const EXPLORE_PROMPT: &str = "\
You are a search agent working for another agent in the user's repository. Find what you are asked \
for quickly: search with grep and glob, read only the parts of files you need, and issue independent \
reads together. You cannot change anything. Answer with what you found: the relevant files and \
line numbers, short excerpts, and a direct answer to the question. Be concise; another agent reads \
your answer, not the user.";

const PLAN_PROMPT: &str = "\
You are a planning agent working for another agent in the user's repository. Read the code that the \
task touches (read_file, grep, glob, list_dir); you cannot change anything. Answer with a concrete, \
numbered implementation plan: the files to change and what to change in each, the order, the risks, \
and how to verify the result (tests or commands to run). Be concise.";

const GENERAL_PROMPT: &str = "\
You are a sub-agent working for another agent in the user's repository, on one self-contained task. \
Use the tools to do it completely, verifying what you change. When done, answer with a short report: \
what you did, what you found, the files you changed and what you verified. Another agent reads your \
answer, not the user.";

#[derive(Debug, Deserialize)]
struct AgentMeta {
    name: Option<String>,
    description: Option<String>,
    #[serde(default)]
    tools: NameList,
    model: Option<String>,
}

/// Where an agent's system prompt comes from.
#[derive(Debug, Clone, PartialEq)]
enum Prompt {
    Builtin(&'static str),
    File { path: PathBuf, body_offset: u64 },
}

/// Which tools an agent gets.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolChoice {
    /// The parent's read-only tools.
    ReadOnly,
    /// All of the parent's tools (except `task`).
    Inherit,
    /// These tools (Claude's or Lathe's names), where the parent has them.
    Named(Vec<String>),
}

/// One agent type.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentDef {
    /// The `subagent_type` that selects it.
    pub name: String,
    /// When to use it (shown to the model in the `task` tool's description).
    pub description: String,
    /// Its tools.
    pub tools: ToolChoice,
    /// Its model, when not the parent's.
    pub model: Option<String>,
    /// The file it came from (`None` for a built-in type).
    pub file: Option<PathBuf>,
    /// Project or user (`None` for a built-in type).
    pub scope: Option<Scope>,
    prompt: Prompt,
}

impl AgentDef {
    /// The system prompt (a custom agent's body, read now).
    pub fn system_prompt(&self) -> Result<String, FrontmatterError> {
        match &self.prompt {
            Prompt::Builtin(text) => Ok((*text).to_string()),
            Prompt::File { path, body_offset } => read_body(path, *body_offset),
        }
    }

    /// The agent's tools taken from `parent` (never wider than the parent's, never `task`), and a
    /// note for each named tool that is unknown or that the parent does not have. Scoped entries
    /// (`Bash(git diff *)`) bind ([`crate::tool_scope`]); their paths are relative to `workspace`.
    pub fn tool_set(&self, parent: &ToolRegistry, workspace: &Path) -> (ToolRegistry, Vec<String>) {
        let mut tools = ToolRegistry::empty();
        match &self.tools {
            ToolChoice::ReadOnly | ToolChoice::Inherit => {
                for name in parent.names() {
                    let Some(tool) = parent.get(&name) else { continue };
                    let read_only = tool.effect(&serde_json::json!({})) == Effect::ReadOnly;
                    if name != TASK_TOOL && (self.tools == ToolChoice::Inherit || read_only) {
                        tools.register(tool);
                    }
                }
                // Deferred tools stay deferred: the sub-agent loads what it needs with its own
                // `tool_search`.
                for name in parent.deferred_names() {
                    let Some(tool) = parent.get_deferred(&name) else { continue };
                    let read_only = tool.effect(&serde_json::json!({})) == Effect::ReadOnly;
                    if self.tools == ToolChoice::Inherit || read_only {
                        tools.register_deferred(tool);
                    }
                }
            }
            ToolChoice::Named(names) => {
                let owner = match &self.file {
                    Some(file) => format!("the agent `{}` ({})", self.name, file.display()),
                    None => format!("the agent `{}`", self.name),
                };
                return select_tools(parent, &ToolList::parse(names, &owner, workspace), false);
            }
        }
        (tools, Vec::new())
    }
}

/// The tools of `parent` that `list` grants (never wider than the parent's; `task` only when
/// `allow_task`; scoped grants wrapped so their scope binds), and a note for each name left out.
pub fn select_tools(parent: &ToolRegistry, list: &ToolList, allow_task: bool) -> (ToolRegistry, Vec<String>) {
    let mut tools = ToolRegistry::empty();
    let mut notes = list.notes.clone();
    for name in list.names() {
        if name == TASK_TOOL && !allow_task {
            notes.push("sub-agents cannot start sub-agents; `task` left out".into());
            continue;
        }
        match parent.get(name).and_then(|tool| list.grant(tool)) {
            Some(tool) => tools.register(tool),
            None => notes.push(format!("tool `{name}` is not available; left out")),
        }
    }
    (tools, notes)
}

/// The agent types of a session: built-in ones first, then custom ones by name.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentCatalog {
    agents: Vec<AgentDef>,
}

impl Default for AgentCatalog {
    fn default() -> AgentCatalog {
        AgentCatalog { agents: builtins() }
    }
}

impl AgentCatalog {
    /// The built-in types plus the custom agents for `workspace`, and a warning for each file
    /// skipped.
    pub fn discover(workspace: &Path, lathe_home: &Path) -> (AgentCatalog, Vec<String>) {
        let mut custom: Vec<AgentDef> = Vec::new();
        let mut warnings = Vec::new();
        for (dir, scope) in search_dirs(workspace, lathe_home, "agents") {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            let mut files: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| path.extension().is_some_and(|ext| ext == "md") && path.is_file())
                .collect();
            files.sort();
            for file in files {
                match load(&file, scope) {
                    Ok(agent) => match custom.iter().find(|known| known.name == agent.name) {
                        Some(known) => warnings.push(format!(
                            "agent `{}` in {} is skipped: {} has the same name",
                            agent.name,
                            file.display(),
                            known.file.as_deref().unwrap_or(Path::new("?")).display()
                        )),
                        None => custom.push(agent),
                    },
                    Err(message) => warnings.push(format!("agent skipped: {message}")),
                }
            }
        }
        custom.sort_by(|a, b| a.name.cmp(&b.name));
        let mut agents: Vec<AgentDef> =
            builtins().into_iter().filter(|builtin| !custom.iter().any(|c| c.name == builtin.name)).collect();
        agents.extend(custom);
        (AgentCatalog { agents }, warnings)
    }

    /// Every type, built-in ones first.
    pub fn all(&self) -> &[AgentDef] {
        &self.agents
    }

    /// The type called `name`.
    pub fn get(&self, name: &str) -> Option<&AgentDef> {
        self.agents.iter().find(|agent| agent.name == name)
    }
}

fn builtins() -> Vec<AgentDef> {
    let builtin = |name: &str, description: &str, tools: ToolChoice, prompt: &'static str| AgentDef {
        name: name.into(),
        description: description.into(),
        tools,
        model: None,
        file: None,
        scope: None,
        prompt: Prompt::Builtin(prompt),
    };
    vec![
        builtin(
            "explore",
            "Fast read-only search: finds files, definitions and usages, answers questions about the code.",
            ToolChoice::ReadOnly,
            EXPLORE_PROMPT,
        ),
        builtin(
            "plan",
            "Read-only research returning a step-by-step implementation plan.",
            ToolChoice::ReadOnly,
            PLAN_PROMPT,
        ),
        builtin(
            "general",
            "All your tools, for a self-contained multi-step task.",
            ToolChoice::Inherit,
            GENERAL_PROMPT,
        ),
    ]
}

fn load(file: &Path, scope: Scope) -> Result<AgentDef, String> {
    let head = read_head::<AgentMeta>(file).map_err(|error| error.to_string())?;
    let Some(meta) = head.meta else {
        return Err(FrontmatterError::Missing { path: file.to_path_buf() }.to_string());
    };
    let name = meta.name.map(|name| name.trim().to_string()).unwrap_or_default();
    if !valid_name(&name) {
        return Err(format!(
            "{}: the frontmatter needs a `name` of 1-64 characters without spaces or slashes",
            file.display()
        ));
    }
    let description = meta.description.map(|text| crate::skills::one_line(&text)).unwrap_or_default();
    if description.is_empty() {
        return Err(format!("{}: the frontmatter has no `description`", file.display()));
    }
    Ok(AgentDef {
        name,
        description,
        tools: match meta.tools.names() {
            Some(names) => ToolChoice::Named(names),
            None => ToolChoice::Inherit,
        },
        model: meta.model.map(|model| model.trim().to_string()).filter(|m| !m.is_empty() && m != "inherit"),
        file: Some(file.to_path_buf()),
        scope: Some(scope),
        prompt: Prompt::File { path: file.to_path_buf(), body_offset: head.body_offset },
    })
}
