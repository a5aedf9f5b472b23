//! Coordinator mode (`/team coordinator on`): the lead only dispatches. Its requests offer only
//! its read-only tools — reading and searching, the team's tools and the board — and a call of
//! any other tool is refused, naming the mode and how to leave it.

use std::sync::Arc;

use futures::future::BoxFuture;
use lathe_protocol::{ToolPreview, ToolSpec};
use lathe_tools::{Access, DynTool, Effect, ToolContext, ToolError, ToolOutput, ToolRegistry};
use serde_json::{Value, json};

use super::lead::TeamHub;

/// Whether `tool` stays the lead's in coordinator mode (a read-only tool).
pub fn dispatches(tool: Option<&dyn DynTool>) -> bool {
    tool.is_some_and(|tool| tool.effect(&json!({})) == Effect::ReadOnly)
}

/// The lead's tools, each refusing its calls in coordinator mode unless it is read-only.
pub fn gate(tools: &ToolRegistry, hub: &Arc<TeamHub>) -> ToolRegistry {
    tools.map(|inner| Arc::new(Gated { inner, hub: hub.clone() }) as Arc<dyn DynTool>)
}

struct Gated {
    inner: Arc<dyn DynTool>,
    hub: Arc<TeamHub>,
}

impl DynTool for Gated {
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

    fn access(&self, args: &Value, ctx: &ToolContext) -> Result<Access, ToolError> {
        self.inner.access(args, ctx)
    }

    fn preview(&self, args: &Value, ctx: &ToolContext) -> Option<ToolPreview> {
        self.inner.preview(args, ctx)
    }

    /// Refused before anyone is asked in coordinator mode, unless the tool is read-only.
    fn precheck(&self, args: &Value, ctx: &ToolContext) -> Result<(), ToolError> {
        self.allowed()?;
        self.inner.precheck(args, ctx)
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            self.allowed()?;
            self.inner.call(args, ctx).await
        })
    }
}

impl Gated {
    fn allowed(&self) -> Result<(), ToolError> {
        if self.hub.coordinator() && !dispatches(Some(self.inner.as_ref())) {
            return Err(ToolError::Refused(format!(
                "{}: coordinator mode is on: the lead only dispatches (messages, the board, read-only tools); \
                 give this work to a teammate (/team coordinator off ends the mode)",
                self.inner.name()
            )));
        }
        Ok(())
    }
}
