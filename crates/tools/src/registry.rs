//! The set of tools a session offers, by model-facing name.

use std::collections::BTreeMap;
use std::sync::Arc;

use lathe_protocol::ToolSpec;

use crate::builtin;
use crate::tool::DynTool;

/// Tools by name, in registration order for [`ToolRegistry::specs`] (a stable order keeps the
/// request prefix, and so the provider's prompt cache, identical across turns).
#[derive(Clone, Default)]
pub struct ToolRegistry {
    order: Vec<String>,
    tools: BTreeMap<String, Arc<dyn DynTool>>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRegistry").field("tools", &self.order).finish()
    }
}

impl ToolRegistry {
    /// The nine built-in tools: `read_file`, `write_file`, `edit_file`, `grep`, `glob`,
    /// `list_dir`, `shell`, `todo_write`, `web_fetch`.
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

    /// Adds `tool`; a tool with the same name is replaced (keeping its position).
    pub fn register(&mut self, tool: Arc<dyn DynTool>) {
        let name = tool.name().to_string();
        if self.tools.insert(name.clone(), tool).is_none() {
            self.order.push(name);
        }
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<Arc<dyn DynTool>> {
        self.tools.get(name).cloned()
    }

    /// Specs of all tools, in registration order.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.order.iter().filter_map(|name| self.tools.get(name)).map(|tool| tool.spec()).collect()
    }

    /// Names of all tools, in registration order.
    pub fn names(&self) -> Vec<String> {
        self.order.clone()
    }

    /// Removes every tool whose name `keep` rejects (order of the rest unchanged).
    pub fn retain(&mut self, keep: impl Fn(&str) -> bool) {
        self.order.retain(|name| keep(name));
        let order = &self.order;
        self.tools.retain(|name, _| order.contains(name));
    }
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;
