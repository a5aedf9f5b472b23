//! Tool lists as agent definitions (`tools:`), skills and custom commands (`allowed-tools`) write
//! them: Claude Code's or Lathe's names, each optionally scoped (`Read, Grep, Bash(git diff *)`).
//!
//! A bare name grants the whole tool; a scoped entry grants only the calls it matches
//! ([`lathe_policy::scope`]), and the tool is then wrapped in a [`ScopedTool`] that refuses every
//! other call before the permission decision, in every mode, `--yolo` included. A scope that does
//! not parse grants nothing (the entry is left out with a note naming it and its file).

use std::path::Path;
use std::sync::Arc;

use futures::future::BoxFuture;
use lathe_policy::scope::{ToolScope, anchors, entry_name};
use lathe_protocol::{ToolPreview, ToolSpec};
use lathe_tools::{Access, DynTool, Effect, ToolContext, ToolError, ToolOutput};
use serde_json::Value;

use lathe_protocol::tool_names::lathe_name;

/// A parsed tool list: Lathe's tool names with their scopes, in the order first named.
#[derive(Debug, Clone, Default)]
pub struct ToolList {
    tools: Vec<(&'static str, ToolScope)>,
    /// One line per entry left out (unknown name, scope that does not parse).
    pub notes: Vec<String>,
    /// Who the list belongs to, for refusals: `` the agent `reviewer` (.claude/agents/reviewer.md) ``.
    owner: String,
}

impl ToolList {
    /// Parses `entries` of `owner`; path scopes are relative to `workspace` (as in its settings
    /// files), `~/` to the home directory.
    pub fn parse(entries: &[String], owner: &str, workspace: &Path) -> ToolList {
        let home = dirs::home_dir();
        let anchors = anchors(workspace, home.as_deref());
        let mut list = ToolList { owner: owner.to_string(), ..ToolList::default() };
        for entry in entries {
            let (name, has_specifier) = entry_name(entry);
            let Some(tool) = lathe_name(name) else {
                list.notes.push(format!("tool `{entry}` is unknown; left out"));
                continue;
            };
            let at = match list.tools.iter().position(|(known, _)| *known == tool) {
                Some(at) => at,
                None => {
                    list.tools.push((tool, ToolScope::default()));
                    list.tools.len() - 1
                }
            };
            if let Err(error) = list.tools[at].1.add(entry, has_specifier, owner, anchors) {
                list.notes.push(format!("`{entry}` in {owner}: {error}; it grants nothing"));
            }
        }
        // A tool whose every entry failed to parse is not granted at all (fail closed).
        list.tools.retain(|(_, scope)| scope.is_whole() || !scope.entries().is_empty());
        list
    }

    /// Whether the list names no tool.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Lathe's names of the tools the list grants (wholly or in part), in order.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.tools.iter().map(|(name, _)| *name)
    }

    /// The scope of `tool`, `None` when the list leaves it out.
    pub fn scope(&self, tool: &str) -> Option<&ToolScope> {
        self.tools.iter().find(|(name, _)| *name == tool).map(|(_, scope)| scope)
    }

    /// `tool` as the list grants it: as it is for a whole grant, wrapped in a [`ScopedTool`] for a
    /// scoped one, `None` when the list leaves it out.
    pub fn grant(&self, tool: Arc<dyn DynTool>) -> Option<Arc<dyn DynTool>> {
        let scope = self.scope(tool.name())?;
        if scope.is_whole() {
            return Some(tool);
        }
        Some(Arc::new(ScopedTool { inner: tool, scope: scope.clone(), owner: self.owner.clone() }))
    }
}

/// A tool granted only in part: calls outside its scope are refused before any permission
/// decision, with [`ToolError::Refused`] naming the scope and its owner.
pub struct ScopedTool {
    inner: Arc<dyn DynTool>,
    scope: ToolScope,
    owner: String,
}

impl ScopedTool {
    fn checked(&self, args: &Value, ctx: &ToolContext) -> Result<Access, ToolError> {
        let access = self.inner.access(args, ctx)?;
        match self.scope.check(self.inner.name(), &access) {
            Ok(()) => Ok(access),
            Err(outside) => Err(ToolError::Refused(format!("{outside} of {}; not run", self.owner))),
        }
    }
}

impl DynTool for ScopedTool {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn spec(&self) -> ToolSpec {
        self.inner.spec()
    }

    fn effect(&self, args: &Value) -> Effect {
        self.inner.effect(args)
    }

    fn summary(&self, args: &Value) -> String {
        self.inner.summary(args)
    }

    fn preview(&self, args: &Value, ctx: &ToolContext) -> Option<ToolPreview> {
        self.inner.preview(args, ctx)
    }

    fn precheck(&self, args: &Value, ctx: &ToolContext) -> Result<(), ToolError> {
        self.inner.precheck(args, ctx)
    }

    fn access(&self, args: &Value, ctx: &ToolContext) -> Result<Access, ToolError> {
        self.checked(args, ctx)
    }

    /// Checks the scope again: a call never runs outside it, whoever calls.
    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        match self.checked(&args, ctx) {
            Ok(_) => self.inner.call(args, ctx),
            Err(error) => Box::pin(async move { Err(error) }),
        }
    }
}

#[cfg(test)]
#[path = "tool_scope_tests.rs"]
mod tests;
