//! The `task` tool: runs a sub-agent and returns its final answer as the tool result, or (with
//! `run_in_background`) starts it and returns its id ([`super::background`]); `fork: true` instead
//! of an agent type starts a fork of the parent's conversation ([`super::fork`]).
//!
//! Flow of one foreground call: validate `{description, prompt, subagent_type}` → wait for one of
//! [`MAX_CONCURRENT_SUBAGENTS`] slots (several `task` calls of one response run concurrently; the
//! executor runs them together because the call itself is read-only — every call the sub-agent
//! makes is checked on its own) → build the sub-agent: the same [`Agent`](crate::agent::Agent) loop with a fresh ledger
//! holding only the prompt, the type's system prompt plus the session's environment block, its
//! own tool set taken from the parent's (never `task`), the parent's permission policy (shared,
//! so a mode change or an "always allow" applies to both) and the parent's approver, the remaining cost budget → run it with the call's
//! cancellation token (and [`SUBAGENT_TIME_LIMIT`](super::parent::SUBAGENT_TIME_LIMIT)), its events forwarded as
//! [`AgentEvent::Subagent`] under the parent's call id and its ledger saved to
//! `<session>/subagents/<id>.jsonl` → its tokens and cost go to the parent through the
//! [`UsageMeter`](super::usage::UsageMeter) → the result: the final text, a labelled partial result when it hit its turn
//! limit, an error result when it failed.

use futures::future::BoxFuture;
use lathe_protocol::{AgentEvent, SystemBlock, ToolSpec, UserMessage};
use lathe_tools::{Access, CompiledSchema, DynTool, Effect, ToolContext, ToolError, ToolOutput};
use serde_json::{Value, json};
use tokio::sync::Semaphore;

use super::AgentCatalog;
use super::fork::{self, FORK_KIND};
use super::parent::{Forwarder, Parent, outcome};
use super::spawn::{self, Launch};

/// Sub-agents running at once; further `task` calls wait for a slot.
pub const MAX_CONCURRENT_SUBAGENTS: usize = 4;

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
            "Start a sub-agent for a self-contained job (broad searches, research that would fill your \
             context, independent work); it works in a fresh context and returns only its final answer. \
             Several task calls in one response run in parallel. Give a complete prompt: it does not see \
             this conversation. run_in_background: its report comes later as a <task-notification> \
             (task_output, task_kill). fork: a copy of this conversation, for a focused part.\n\
             Agent types:\n",
        );
        for agent in agents.all() {
            description.push_str(&format!("- {}: {}\n", agent.name, agent.description));
        }
        let names: Vec<&str> = agents.all().iter().map(|agent| agent.name.as_str()).collect();
        let schema = json!({
            "type": "object",
            "properties": {
                "description": {"type": "string", "description": "3-5 word summary"},
                "prompt": {"type": "string", "description": "The complete task"},
                "subagent_type": {"type": "string", "enum": names, "description": "Agent type"},
                "run_in_background": {"type": "boolean", "description": "Return at once"},
                "fork": {"type": "boolean", "description": "Fork (no subagent_type)"},
            },
            "required": ["description", "prompt"],
            "additionalProperties": false,
        });
        let schema = CompiledSchema::new(schema);
        TaskTool { parent, agents, slots: Semaphore::new(MAX_CONCURRENT_SUBAGENTS), description, schema }
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        self.schema.validate(super::TASK_TOOL, &args)?;
        let field = |name: &str| args.get(name).and_then(Value::as_str).unwrap_or_default().to_string();
        let (description, prompt) = (field("description"), field("prompt"));
        let background = args.get("run_in_background").and_then(Value::as_bool) == Some(true);
        let launch = match (args.get("subagent_type").and_then(Value::as_str), fork::is_fork(&args)) {
            (Some(_), true) => {
                return Err(ToolError::Failed(
                    "task: give either subagent_type or fork: true, not both".into(),
                ));
            }
            (None, false) => {
                return Err(ToolError::Failed(
                    "task: subagent_type is required (or fork: true to fork this conversation)".into(),
                ));
            }
            (Some(kind), false) => self.typed(Launch::new(kind, background, ctx), prompt, ctx)?,
            (None, true) => self.forked(Launch::new(FORK_KIND, background, ctx), &prompt, ctx)?,
        };
        if background {
            return spawn::start_background(&self.parent, launch, &description, ctx);
        }
        let _slot = tokio::select! {
            slot = self.slots.acquire() => slot.map_err(|_| ToolError::Cancelled)?,
            () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
        };
        let (kind, id) = (launch.kind.clone(), launch.id.clone());
        let cancel = ctx.cancel.child_token();
        let mut built = spawn::build(&self.parent, launch, ctx, cancel.clone(), true);
        let (cause, timed_out) = spawn::drive(&mut built, &self.parent.events, &cancel, None).await;
        self.parent.meter.add(built.agent.stats());
        outcome(&kind, &id, cause, &built.agent, built.max_turns, timed_out)
    }

    /// A sub-agent of the type `kind`: its prompt, tools and model.
    fn typed(&self, mut launch: Launch, prompt: String, ctx: &ToolContext) -> Result<Launch, ToolError> {
        let kind = launch.kind.clone();
        let Some(def) = self.agents.get(&kind) else {
            return Err(ToolError::Failed(format!("task: unknown subagent_type `{kind}`")));
        };
        let system_prompt =
            def.system_prompt().map_err(|error| ToolError::Failed(format!("task: {error}")))?;
        let (tools, notes) = def.tool_set(&self.parent.tools, &ctx.workspace);
        let forward = Forwarder {
            parent_call_id: ctx.call_id.clone(),
            agent_id: launch.id.clone(),
            kind: kind.clone(),
        };
        for note in notes {
            forward.send(&self.parent.events, AgentEvent::Warning { message: format!("{kind}: {note}") });
        }
        launch.system = vec![SystemBlock { text: system_prompt, cache_breakpoint: true }];
        launch.system.extend(self.parent.environment.clone());
        launch.tools = tools;
        launch.input = UserMessage::text(prompt);
        launch.model = def.model.clone();
        Ok(launch)
    }

    /// A fork of the parent's last request, whose response holds this call.
    fn forked(&self, mut launch: Launch, prompt: &str, ctx: &ToolContext) -> Result<Launch, ToolError> {
        let base = self.parent.fork.get().filter(|base| {
            matches!(base.messages.last(), Some(lathe_protocol::LedgerItem::Assistant(message))
                if message.tool_calls().any(|call| call.id == ctx.call_id))
        });
        let Some(base) = base else {
            return Err(ToolError::Failed(
                "task: a fork starts from the conversation of the response that asks for it, and none was \
                 recorded (a sub-agent cannot fork)"
                    .into(),
            ));
        };
        launch.system = base.system.clone();
        launch.tools = fork::fork_tools(&base.tools, &self.parent.tools);
        launch.history = fork::history(&base);
        launch.input = UserMessage::text(fork::directive(prompt));
        launch.model = Some(base.model.clone());
        Ok(launch)
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
        let kind = if fork::is_fork(args) { FORK_KIND } else { field("subagent_type") };
        let background = if args.get("run_in_background").and_then(Value::as_bool) == Some(true) {
            " (background)"
        } else {
            ""
        };
        format!("{kind}: {}{background}", field("description"))
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
