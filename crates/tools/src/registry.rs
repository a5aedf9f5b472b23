//! The set of tools a session offers, by model-facing name.
//!
//! A tool is either *offered* (its spec goes into every request) or *deferred*: registered, but
//! left out of [`ToolRegistry::specs`] and [`ToolRegistry::get`] until [`ToolRegistry::load`]
//! offers it, appended after every tool offered so far. Many MCP tools are registered deferred
//! (`tool_search` loads them), so the request stays small and its prefix byte-stable.

use std::collections::BTreeMap;
use std::sync::Arc;

use lathe_protocol::ToolSpec;

use crate::builtin;
use crate::tool::DynTool;

/// Tools by name, in registration order for [`ToolRegistry::specs`] (a stable order keeps the
/// request prefix, and so the provider's prompt cache, identical across turns).
#[derive(Clone, Default)]
pub struct ToolRegistry {
    /// Offered tools, in order: registration order, then loaded deferred tools in load order.
    order: Vec<String>,
    /// Deferred tools not loaded yet, in registration order.
    deferred: Vec<String>,
    tools: BTreeMap<String, Arc<dyn DynTool>>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRegistry").field("tools", &self.order).field("deferred", &self.deferred).finish()
    }
}

impl ToolRegistry {
    /// The eleven built-in tools: `read_file`, `write_file`, `edit_file`, `grep`, `glob`,
    /// `list_dir`, `shell`, `shell_output`, `shell_kill`, `todo_write`, `web_fetch`.
    pub fn builtin() -> ToolRegistry {
        let mut registry = ToolRegistry::empty();
        for tool in builtin::all() {
            registry.register(tool);
        }
        registry
    }

    /// A registry with no tools.
    pub fn empty() -> ToolRegistry {
        ToolRegistry::default()
    }

    /// Adds `tool`, offered; a tool with the same name is replaced (keeping its position, and
    /// staying deferred if it was).
    pub fn register(&mut self, tool: Arc<dyn DynTool>) {
        let name = tool.name().to_string();
        if self.tools.insert(name.clone(), tool).is_none() {
            self.order.push(name);
        }
    }

    /// Adds `tool` deferred: known by name, but neither in [`Self::specs`] nor found by
    /// [`Self::get`] until [`Self::load`]ed. A tool with the same name is replaced in place.
    pub fn register_deferred(&mut self, tool: Arc<dyn DynTool>) {
        let name = tool.name().to_string();
        if self.tools.insert(name.clone(), tool).is_none() {
            self.deferred.push(name);
        }
    }

    /// Offers the deferred tool `name` from now on, after every tool offered so far. Returns
    /// whether it was deferred (`false` for an offered or unknown name: nothing changes).
    pub fn load(&mut self, name: &str) -> bool {
        let Some(at) = self.deferred.iter().position(|deferred| deferred == name) else { return false };
        let name = self.deferred.remove(at);
        self.order.push(name);
        true
    }

    /// The offered tool called `name` (`None` for a deferred tool that is not loaded).
    pub fn get(&self, name: &str) -> Option<Arc<dyn DynTool>> {
        if self.deferred.iter().any(|deferred| deferred == name) {
            return None;
        }
        self.tools.get(name).cloned()
    }

    /// The deferred, not yet loaded tool called `name`.
    pub fn get_deferred(&self, name: &str) -> Option<Arc<dyn DynTool>> {
        self.deferred.iter().find(|deferred| *deferred == name).and_then(|name| self.tools.get(name)).cloned()
    }

    /// Specs of the offered tools, in order.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.order.iter().filter_map(|name| self.tools.get(name)).map(|tool| tool.spec()).collect()
    }

    /// Names of the offered tools, in order.
    pub fn names(&self) -> Vec<String> {
        self.order.clone()
    }

    /// Names of the deferred tools not loaded yet, in registration order.
    pub fn deferred_names(&self) -> Vec<String> {
        self.deferred.clone()
    }

    /// Specs of the deferred tools not loaded yet, in registration order.
    pub fn deferred_specs(&self) -> Vec<ToolSpec> {
        self.deferred.iter().filter_map(|name| self.tools.get(name)).map(|tool| tool.spec()).collect()
    }

    /// Removes every tool whose name `keep` rejects (order of the rest unchanged).
    pub fn retain(&mut self, keep: impl Fn(&str) -> bool) {
        self.order.retain(|name| keep(name));
        self.deferred.retain(|name| keep(name));
        let (order, deferred) = (&self.order, &self.deferred);
        self.tools.retain(|name, _| order.contains(name) || deferred.contains(name));
    }

    /// The same registry (order, deferred tools) with each tool replaced by `wrap(tool)`, which
    /// must keep its name.
    pub fn map(&self, wrap: impl Fn(Arc<dyn DynTool>) -> Arc<dyn DynTool>) -> ToolRegistry {
        let tools = self.tools.iter().map(|(name, tool)| (name.clone(), wrap(tool.clone()))).collect();
        ToolRegistry { order: self.order.clone(), deferred: self.deferred.clone(), tools }
    }
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;
