//! The `task` tool: runs a sub-agent and returns its final answer as the tool result.
//!
//! Flow of one call: validate `{description, prompt, subagent_type}` → wait for one of
//! [`MAX_CONCURRENT_SUBAGENTS`] slots (several `task` calls of one response run concurrently; the
//! executor runs them together because the call itself is read-only — every call the sub-agent
//! makes is checked on its own) → build the sub-agent: the same [`Agent`] loop with a fresh ledger
//! holding only the prompt, the type's system prompt plus the session's environment block, its
//! own tool set taken from the parent's (never `task`), the parent's permission policy (shared,
//! so a mode change or an "always allow" applies to both) and the parent's approver, the remaining cost budget → run it with the call's
//! cancellation token (and [`SUBAGENT_TIME_LIMIT`]), its events forwarded as
//! [`AgentEvent::Subagent`] under the parent's call id and its ledger saved to
//! `<session>/subagents/<id>.jsonl` → its tokens and cost go to the parent through the
//! [`UsageMeter`] → the result: the final text, a labelled partial result when it hit its turn
//! limit, an error result when it failed.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use lathe_policy::Policy;
use lathe_protocol::{AgentEvent, LedgerItem, Meta, StopCause, SystemBlock, ToolSpec, UserMessage};
use lathe_provider::Provider;
use lathe_tools::{
    Access, CompiledSchema, DynTool, Effect, ToolContext, ToolError, ToolOutput, ToolRegistry,
};
use serde_json::{Value, json};
use tokio::sync::{Semaphore, mpsc};

use super::AgentCatalog;
use super::usage::UsageMeter;
use crate::agent::{Agent, AgentSettings};
use crate::exec::Approver;
use crate::session::SessionWriter;

/// Sub-agents running at once; further `task` calls wait for a slot.
pub const MAX_CONCURRENT_SUBAGENTS: usize = 4;

/// Model requests a sub-agent may make (fewer when the parent's own limit is lower).
pub const SUBAGENT_MAX_TURNS: u32 = 30;

/// Wall time a sub-agent may take before it is cancelled and reported as timed out.
pub const SUBAGENT_TIME_LIMIT: Duration = Duration::from_secs(30 * 60);

/// What a sub-agent takes from its parent session.
pub struct Parent {
    /// The provider requests go to.
    pub provider: Arc<dyn Provider>,
    /// The parent's loop settings (model, limits, pricing).
    pub settings: AgentSettings,
    /// The parent's tools (the `task` tool itself is never passed on).
    pub tools: ToolRegistry,
    /// The session's environment and instructions block, appended to each sub-agent's prompt.
    pub environment: Option<SystemBlock>,
    /// The parent's permission policy (mode, rules, path guard, sandbox), shared: every call a
    /// sub-agent makes is decided by it, as it is at that moment, never by a wider one.
    pub policy: Arc<Policy>,
    /// The parent's approver (interactive sessions).
    pub approver: Option<Arc<dyn Approver>>,
    /// The session's auto-mode reviewer: a sub-agent's calls are reviewed against the session
    /// user's messages, and count toward the same breaker.
    pub reviewer: Arc<crate::auto_mode::Reviewer>,
    /// The parent's event stream.
    pub events: mpsc::UnboundedSender<AgentEvent>,
    /// Where transcripts go (`<session>/subagents`); `None` when nothing is saved.
    pub transcripts: Option<PathBuf>,
    /// Sub-agent usage for the parent.
    pub meter: Arc<UsageMeter>,
    /// The session's hooks, which the sub-agent runs under (its stop fires SubagentStop).
    pub hooks: crate::hooks::Hooks,
}

/// The `task` tool.
pub struct TaskTool {
    parent: Parent,
    agents: AgentCatalog,
    slots: Semaphore,
    description: String,
    schema: CompiledSchema,
}

impl TaskTool {
    /// The tool for `agents`, running sub-agents for `parent`.
    pub fn new(parent: Parent, agents: AgentCatalog) -> TaskTool {
        let mut description = String::from(
            "Start a sub-agent for a self-contained job: it works in a fresh context with its own tools and \
             returns only its final answer. Use it for broad searches and research that would fill your \
             context, or for independent work; issue several task calls in one response to run them in \
             parallel. Give a complete prompt: the sub-agent does not see this conversation.\n\
             Agent types (subagent_type):\n",
        );
        for agent in agents.all() {
            description.push_str(&format!("- {}: {}\n", agent.name, agent.description));
        }
        let names: Vec<&str> = agents.all().iter().map(|agent| agent.name.as_str()).collect();
        let schema = json!({
            "type": "object",
            "properties": {
                "description": {"type": "string", "description": "A short (3-5 word) summary of the job"},
                "prompt": {"type": "string", "description": "The complete task for the sub-agent"},
                "subagent_type": {"type": "string", "enum": names, "description": "The agent type to use"},
            },
            "required": ["description", "prompt", "subagent_type"],
            "additionalProperties": false,
        });
        let schema = CompiledSchema::new(schema);
        TaskTool { parent, agents, slots: Semaphore::new(MAX_CONCURRENT_SUBAGENTS), description, schema }
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        self.schema.validate(super::TASK_TOOL, &args)?;
        let field = |name: &str| args.get(name).and_then(Value::as_str).unwrap_or_default().to_string();
        let (kind, prompt) = (field("subagent_type"), field("prompt"));
        let Some(def) = self.agents.get(&kind) else {
            return Err(ToolError::Failed(format!("task: unknown subagent_type `{kind}`")));
        };
        let system_prompt =
            def.system_prompt().map_err(|error| ToolError::Failed(format!("task: {error}")))?;
        let _slot = tokio::select! {
            slot = self.slots.acquire() => slot.map_err(|_| ToolError::Cancelled)?,
            () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
        };
        let parent = &self.parent;
        let id = format!("{kind}-{}", uuid::Uuid::now_v7().simple());
        let forward =
            Forwarder { parent_call_id: ctx.call_id.clone(), agent_id: id.clone(), kind: kind.clone() };
        let (tools, notes) = def.tool_set(&parent.tools, &ctx.workspace);
        for note in notes {
            forward.send(&parent.events, AgentEvent::Warning { message: format!("{kind}: {note}") });
        }
        let mut system = vec![SystemBlock { text: system_prompt, cache_breakpoint: true }];
        system.extend(parent.environment.clone());
        let mut settings = parent.settings.clone();
        if let Some(model) = &def.model {
            settings.model = model.clone();
            settings.model_info = crate::pricing::model_info(model, parent.provider.name());
        }
        settings.max_turns = settings.max_turns.min(SUBAGENT_MAX_TURNS);
        settings.permission_mode = parent.policy.mode();
        settings.max_cost_usd =
            settings.max_cost_usd.map(|limit| (limit - parent.meter.spent_usd()).max(0.0));
        let (writer, warning) = match &parent.transcripts {
            None => (None, None),
            Some(dir) => match SessionWriter::open(dir, &id) {
                Ok(writer) => (Some(writer), None),
                Err(error) => (None, Some(format!("{kind}: transcript not saved: {error}"))),
            },
        };
        if let Some(message) = warning {
            forward.send(&parent.events, AgentEvent::Warning { message });
        }
        let mut sub_ctx = ctx.clone();
        sub_ctx.cancel = ctx.cancel.child_token();
        sub_ctx.call_id = String::new();
        let cancel = sub_ctx.cancel.clone();
        let model = settings.model.clone();
        let max_turns = settings.max_turns;
        let mut agent =
            Agent::new(parent.provider.clone(), tools, sub_ctx, system, Vec::new(), writer, settings)
                .with_policy(parent.policy.clone())
                .with_subagent_hooks(parent.hooks.clone())
                .with_reviewer(parent.reviewer.clone(), false);
        if let Some(approver) = &parent.approver {
            agent = agent.with_approver(approver.clone());
        }
        agent.append(LedgerItem::Meta(Meta::SessionStart {
            session_id: id.clone(),
            cwd: ctx.workspace.display().to_string(),
            model,
            provider: parent.provider.name().to_string(),
            time_ms: crate::host::now_ms(),
        }));

        let (sender, mut receiver) = mpsc::unbounded_channel();
        let events = parent.events.clone();
        let relay = tokio::spawn(async move {
            while let Some(event) = receiver.recv().await {
                forward.relay(&events, event);
            }
        });
        let mut timed_out = false;
        let cause = {
            let run = agent.run(UserMessage::text(prompt), &sender, &cancel);
            tokio::pin!(run);
            tokio::select! {
                cause = &mut run => cause,
                () = tokio::time::sleep(SUBAGENT_TIME_LIMIT) => {
                    timed_out = true;
                    cancel.cancel();
                    run.await
                }
            }
        };
        drop(sender);
        let _ = relay.await;
        parent.meter.add(agent.stats());
        outcome(&kind, &id, cause, &agent, max_turns, timed_out)
    }
}

/// The tool result for a sub-agent that ended with `cause`.
fn outcome(
    kind: &str,
    id: &str,
    cause: StopCause,
    agent: &Agent,
    max_turns: u32,
    timed_out: bool,
) -> Result<ToolOutput, ToolError> {
    let texts = agent.assistant_texts();
    let last = texts.last().cloned().unwrap_or_default();
    let so_far = if texts.is_empty() { "(no text yet)".to_string() } else { texts.join("\n\n") };
    let calls = agent.stats().tool_calls;
    let stopped = |why: String| {
        let text = format!(
            "[the {kind} sub-agent ({id}) stopped before finishing: {why}; it made {calls} tool calls. \
             What it had written so far:]\n{so_far}"
        );
        Ok(ToolOutput { is_error: true, ..ToolOutput::text(text) })
    };
    match cause {
        StopCause::Completed if last.is_empty() => {
            Ok(ToolOutput::text(format!("[the {kind} sub-agent finished without a text answer]")))
        }
        StopCause::Completed => Ok(ToolOutput::text(last)),
        StopCause::MaxTurns { .. } => Ok(ToolOutput::text(format!(
            "[partial result: the {kind} sub-agent ({id}) reached its limit of {max_turns} turns before \
             finishing; it made {calls} tool calls. What it had written so far:]\n{so_far}"
        ))),
        StopCause::Cancelled if timed_out => Err(ToolError::TimedOut(SUBAGENT_TIME_LIMIT.as_millis() as u64)),
        StopCause::Cancelled => Err(ToolError::Cancelled),
        StopCause::Budget { detail } => stopped(detail),
        StopCause::NoProgress { detail } => stopped(format!("no progress: {detail}")),
        StopCause::Refused => stopped("the model refused".into()),
        StopCause::ContextExhausted { detail } => stopped(format!("context window exhausted: {detail}")),
        StopCause::Hook { reason } => stopped(format!("a hook stopped it: {reason}")),
        StopCause::AutoBlocked { detail } => stopped(detail),
        StopCause::Error { message, .. } => stopped(format!("error: {message}")),
    }
}

/// Tags a sub-agent's events with its parent call.
struct Forwarder {
    parent_call_id: String,
    agent_id: String,
    kind: String,
}

impl Forwarder {
    fn send(&self, events: &mpsc::UnboundedSender<AgentEvent>, event: AgentEvent) {
        let _ = events.send(AgentEvent::Subagent {
            parent_call_id: self.parent_call_id.clone(),
            agent_id: self.agent_id.clone(),
            subagent_type: self.kind.clone(),
            event: Box::new(event),
        });
    }

    /// Passes on what a front end shows under the parent call; streaming deltas stay behind, and
    /// an event that waits for an answer (a permission prompt) goes to the user as it is: the
    /// answer names the call.
    fn relay(&self, events: &mpsc::UnboundedSender<AgentEvent>, event: AgentEvent) {
        if event.is_stream_delta() {
            return;
        }
        if event.needs_answer() {
            let _ = events.send(event);
        } else {
            self.send(events, event);
        }
    }
}

impl DynTool for TaskTool {
    fn name(&self) -> &str {
        super::TASK_TOOL
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: super::TASK_TOOL.into(),
            description: self.description.clone(),
            input_schema: self.schema.schema().clone(),
        }
    }

    /// Read-only as a call, so that several run together; each call the sub-agent makes gets its
    /// own permission decision under the parent's mode.
    fn effect(&self, _args: &Value) -> Effect {
        Effect::ReadOnly
    }

    fn summary(&self, args: &Value) -> String {
        let field = |name: &str| args.get(name).and_then(Value::as_str).unwrap_or_default();
        format!("{}: {}", field("subagent_type"), field("description"))
    }

    /// Decided as a read-only tool (a `task` deny or ask rule still applies); every call the
    /// sub-agent makes is decided on its own by the parent's policy.
    fn access(&self, args: &Value, _ctx: &ToolContext) -> Result<Access, ToolError> {
        self.schema.validate(super::TASK_TOOL, args)?;
        Ok(Access::Undeclared { read_only: true })
    }

    /// No preconditions of its own beyond its arguments.
    fn precheck(&self, _args: &Value, _ctx: &ToolContext) -> Result<(), ToolError> {
        Ok(())
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(self.run(args, ctx))
    }
}
