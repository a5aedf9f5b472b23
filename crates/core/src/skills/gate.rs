//! A skill's `allowed-tools` while the model works with it: once the `skill` tool has returned a skill
//! that names `allowed-tools`, the session's other tools outside that list refuse to run until the
//! user turn ends (the session host clears the gate then); a scoped entry (`Bash(git status:*)`)
//! lets only the calls it matches run ([`crate::tool_scope`]). Tools are refused before any permission
//! prompt, recorded as denied; the tool list sent to the model stays the same, so the prompt cache holds.

use std::path::Path;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use lathe_protocol::{ToolPreview, ToolSpec};
use lathe_tools::{Access, DynTool, Effect, ToolContext, ToolError, ToolOutput, ToolRegistry};
use serde_json::Value;

use crate::tool_scope::ToolList;

/// The `allowed-tools` of the skills in force this turn: each loaded skill that names some adds
/// a layer, and a call must pass every layer (a second skill narrows, never widens).
#[derive(Debug, Default)]
pub struct ToolGate {
    active: Mutex<Vec<Active>>,
}

#[derive(Debug, Clone)]
struct Active {
    skill: String,
    written: Vec<String>,
    list: ToolList,
}

impl Active {
    fn refusal(&self, tool: &str, access: Option<&Access>) -> Option<String> {
        let Some(scope) = self.list.scope(tool) else {
            return Some(format!(
                "{tool} is not in the allowed-tools of the skill `{}` ({}), which holds until this turn ends; \
                 not run",
                self.skill,
                self.written.join(", ")
            ));
        };
        let outside = scope.check(tool, access?).err()?;
        Some(format!(
            "{outside} in the allowed-tools of the skill `{}` ({}), which holds until this turn ends; not run",
            self.skill,
            self.written.join(", ")
        ))
    }
}

impl ToolGate {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Active>> {
        self.active.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Puts the skill `skill` with `allowed_tools` (Claude's or Lathe's names, optionally scoped:
    /// `Bash(git status:*)`) in force, on top of any skill already in force; an empty list adds
    /// nothing. Path scopes are relative to `workspace`. Returns the notes on entries left out.
    pub fn activate(&self, skill: &str, allowed_tools: &[String], workspace: &Path) -> Vec<String> {
        if allowed_tools.is_empty() {
            return Vec::new();
        }
        let owner = format!("the allowed-tools of the skill `{skill}`");
        let list = ToolList::parse(allowed_tools, &owner, workspace);
        let notes = list.notes.clone();
        self.lock().push(Active { skill: skill.to_string(), written: allowed_tools.to_vec(), list });
        notes
    }

    /// Lifts the restriction (at the end of a user turn).
    pub fn clear(&self) {
        self.lock().clear();
    }

    /// Why `tool` may not run now, if it may not: not in the list of a skill in force, or (with
    /// `access`, what the call touches) outside its scope.
    pub fn refusal(&self, tool: &str, access: Option<&Access>) -> Option<String> {
        self.lock().iter().find_map(|active| active.refusal(tool, access))
    }

    /// `tools` with every tool but `skill` behind this gate.
    pub fn wrap(self: &Arc<Self>, tools: &ToolRegistry) -> ToolRegistry {
        tools.map(|tool| {
            if tool.name() == "skill" {
                tool
            } else {
                Arc::new(GatedTool { inner: tool, gate: self.clone() })
            }
        })
    }
}

/// A tool that refuses to run while a skill's `allowed-tools` leave it out.
struct GatedTool {
    inner: Arc<dyn DynTool>,
    gate: Arc<ToolGate>,
}

impl DynTool for GatedTool {
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

    /// Refuses (before any permission decision) while the gate leaves the tool, or this call of
    /// it, out.
    fn access(&self, args: &Value, ctx: &ToolContext) -> Result<Access, ToolError> {
        if let Some(reason) = self.gate.refusal(self.inner.name(), None) {
            return Err(ToolError::Refused(reason));
        }
        let access = self.inner.access(args, ctx)?;
        match self.gate.refusal(self.inner.name(), Some(&access)) {
            Some(reason) => Err(ToolError::Refused(reason)),
            None => Ok(access),
        }
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        match self.access(&args, ctx) {
            Err(error) => Box::pin(async move { Err(error) }),
            Ok(_) => self.inner.call(args, ctx),
        }
    }
}
