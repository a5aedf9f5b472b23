//! Forks (`task` with `fork: true` and no agent type): a sub-agent that starts from its parent's
//! conversation, so a provider's prompt cache is reused.
//!
//! Before a response's calls run, a parent whose response starts a fork records the request it
//! just sent in its [`ForkSlot`]: the system blocks, the messages as sent, the tool specs as
//! offered, and the response itself. The fork's first request is then that request's system and
//! tools unchanged, its messages unchanged, followed by the parent's response, a placeholder result
//! for each of its calls and the fork's directive ([`directive`]). The fork offers the parent's
//! tools byte for byte; those a sub-agent may not use (`task`, `task_output`, `task_kill`, the
//! parent's own tools such as memory writes) are refused when called ([`fork_tools`]).

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use lathe_protocol::{LedgerItem, SystemBlock, ToolResult, ToolSpec, ToolStatus};
use lathe_tools::{Access, DynTool, Effect, ToolContext, ToolError, ToolOutput, ToolRegistry};
use serde_json::Value;

/// The agent type a fork is shown and recorded as.
pub const FORK_KIND: &str = "fork";

/// What a fork starts from: the parent's last request and its response.
#[derive(Debug, Clone, PartialEq)]
pub struct ForkBase {
    /// The request's system blocks.
    pub system: Vec<SystemBlock>,
    /// The request's messages as sent, then the response that starts the fork (meta items left out).
    pub messages: Vec<LedgerItem>,
    /// The tools the request offered, in order.
    pub tools: Vec<ToolSpec>,
    /// The model the request went to.
    pub model: String,
}

/// The parent's last fork base, written by its loop and read by its `task` calls.
#[derive(Debug, Default)]
pub struct ForkSlot {
    base: Mutex<Option<Arc<ForkBase>>>,
}

impl ForkSlot {
    /// Records the base for this response's fork calls.
    pub fn set(&self, base: ForkBase) {
        *self.base.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Arc::new(base));
    }

    /// The base recorded last, if any.
    pub fn get(&self) -> Option<Arc<ForkBase>> {
        self.base.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }
}

/// Whether `arguments` of a `task` call ask for a fork.
pub fn is_fork(arguments: &Value) -> bool {
    arguments.get("fork").and_then(Value::as_bool) == Some(true)
}

/// What a fork placeholder result says, for every call of the response that started it.
pub const PLACEHOLDER: &str = "[a fork was started from here; this is its own copy of the conversation]";

/// The fork's conversation before its directive: the base's messages, and a placeholder result
/// for each call of the response at their end.
pub fn history(base: &ForkBase) -> Vec<LedgerItem> {
    let mut items = base.messages.clone();
    if let Some(LedgerItem::Assistant(message)) = base.messages.last() {
        for call in message.tool_calls() {
            items.push(LedgerItem::ToolResult(ToolResult::text(
                &call.id,
                PLACEHOLDER,
                false,
                ToolStatus::Completed,
            )));
        }
    }
    items
}

/// The fork's directive (its user message), carrying the `prompt` of its `task` call.
pub fn directive(prompt: &str) -> String {
    format!(
        "<fork-directive>\nYou are a fork of the agent above: you have its conversation up to here, and the \
         task below is your only job. Stay within its scope. Do not start sub-agents or forks (task, \
         task_output and task_kill are refused). When done, answer with a report of under 500 words: \
         what you did, what you found, the files you changed and what you verified.\n\nTask: \
         {prompt}\n</fork-directive>"
    )
}

/// The fork's tools: for each spec the parent offered, in order, the parent's tool from `usable`
/// when it has it with the same spec, else a stand-in with that spec whose calls are refused.
pub fn fork_tools(specs: &[ToolSpec], usable: &ToolRegistry) -> ToolRegistry {
    let mut tools = ToolRegistry::empty();
    for spec in specs {
        match usable.get(&spec.name).filter(|tool| tool.spec() == *spec) {
            Some(tool) => tools.register(tool),
            None => tools.register(Arc::new(Refused { spec: spec.clone() })),
        }
    }
    tools
}

/// A parent's tool a fork is offered (so its request matches the parent's) and may not call.
struct Refused {
    spec: ToolSpec,
}

impl DynTool for Refused {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    fn effect(&self, _args: &Value) -> Effect {
        Effect::ReadOnly
    }

    fn summary(&self, _args: &Value) -> String {
        String::new()
    }

    fn access(&self, _args: &Value, _ctx: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::Undeclared { read_only: true })
    }

    fn precheck(&self, _args: &Value, _ctx: &ToolContext) -> Result<(), ToolError> {
        Err(refusal(&self.spec.name))
    }

    fn call<'a>(
        &'a self,
        _args: Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move { Err(refusal(&self.spec.name)) })
    }
}

fn refusal(name: &str) -> ToolError {
    ToolError::Failed(format!(
        "{name}: a fork cannot use this tool (it cannot start or manage sub-agents, and the parent's own \
         tools stay the parent's); do the task with the other tools and report"
    ))
}

#[cfg(test)]
#[path = "fork_tests.rs"]
mod tests;
