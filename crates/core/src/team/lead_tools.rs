//! The lead's own tools: `team_create {name}` and `spawn_teammate {team, name, prompt,
//! agent_type?, isolation?}`. Teammates never get them (no teammate starts teammates).

use std::sync::Arc;

use futures::future::BoxFuture;
use lathe_protocol::ToolSpec;
use lathe_tools::{Access, CompiledSchema, DynTool, Effect, ToolContext, ToolError, ToolOutput};
use serde_json::{Value, json};

use super::lead::TeamHub;
use super::tools::{Seat, shared_tools};

/// The name of the tool that creates a team.
pub const TEAM_CREATE_TOOL: &str = "team_create";

/// The name of the tool that starts a teammate.
pub const SPAWN_TEAMMATE_TOOL: &str = "spawn_teammate";

/// The lead's tools: `team_create`, `spawn_teammate`, and the shared `send_message` and board
/// tools, all on `hub`.
pub fn lead_tools(hub: Arc<TeamHub>) -> Vec<Arc<dyn DynTool>> {
    let mut tools: Vec<Arc<dyn DynTool>> =
        vec![Arc::new(LeadTool::new(hub.clone(), false)), Arc::new(LeadTool::new(hub.clone(), true))];
    tools.extend(shared_tools(hub as Arc<dyn Seat>));
    tools
}

struct LeadTool {
    hub: Arc<TeamHub>,
    spawn: bool,
    schema: CompiledSchema,
}

impl LeadTool {
    fn new(hub: Arc<TeamHub>, spawn: bool) -> LeadTool {
        let schema = if spawn {
            json!({"type": "object", "properties": {
                "team": {"type": "string", "description": "The team (from team_create)"},
                "name": {"type": "string", "description": "The teammate's name (letters, digits, - and _)"},
                "prompt": {"type": "string", "description": "Its complete task: it does not see this conversation"},
                "agent_type": {"type": "string", "description": "An agent type for its role and model"},
                "isolation": {"type": "string", "enum": ["worktree"], "description": "worktree: its own git worktree"}},
                "required": ["team", "name", "prompt"], "additionalProperties": false})
        } else {
            json!({"type": "object", "properties": {
                "name": {"type": "string", "description": "The team's name (letters, digits, - and _)"}},
                "required": ["name"], "additionalProperties": false})
        };
        LeadTool { hub, spawn, schema: CompiledSchema::new(schema) }
    }

    fn tool_name(&self) -> &'static str {
        if self.spawn { SPAWN_TEAMMATE_TOOL } else { TEAM_CREATE_TOOL }
    }

    async fn run(&self, args: Value) -> Result<ToolOutput, ToolError> {
        self.schema.validate(self.tool_name(), &args)?;
        let field = |name: &str| args.get(name).and_then(Value::as_str).map(str::to_string);
        let failed = |error: super::TeamError| ToolError::Failed(format!("{}: {error}", self.tool_name()));
        if !self.spawn {
            return self.hub.create(&field("name").unwrap_or_default()).map(ToolOutput::text).map_err(failed);
        }
        let team = field("team").unwrap_or_default();
        let (dir, _) = self.hub.seat().map_err(failed)?;
        if dir.file_name().and_then(|name| name.to_str()) != Some(team.as_str()) {
            return Err(ToolError::Failed(format!(
                "{}: this session leads the team at {}, not `{team}`",
                self.tool_name(),
                dir.display()
            )));
        }
        let worktree = field("isolation").as_deref() == Some("worktree");
        let agent_type = field("agent_type");
        let text = self
            .hub
            .spawn(
                &field("name").unwrap_or_default(),
                &field("prompt").unwrap_or_default(),
                agent_type.as_deref(),
                worktree,
            )
            .await
            .map_err(failed)?;
        Ok(ToolOutput::text(text))
    }
}

impl DynTool for LeadTool {
    fn name(&self) -> &str {
        self.tool_name()
    }

    fn spec(&self) -> ToolSpec {
        let description = if self.spawn {
            "Start a teammate: a long-lived agent in its own process and session, with your tools except the \
             team and sub-agent ones. It works on its prompt, messages you, then waits for your messages; \
             send_message it `shutdown` to end it. isolation: worktree gives it its own git worktree (without \
             it, two members cannot edit the same file)."
        } else {
            "Create a team that you lead: teammates in their own processes, a mailbox, and a shared task board \
             (board_add, board_update, board_list, board_get). One team per session."
        };
        ToolSpec {
            name: self.tool_name().into(),
            description: description.into(),
            input_schema: self.schema.schema().clone(),
        }
    }

    /// Team state only; every call a teammate makes is decided by its own policy.
    fn effect(&self, _args: &Value) -> Effect {
        Effect::ReadOnly
    }

    fn summary(&self, args: &Value) -> String {
        args.get("name").and_then(Value::as_str).unwrap_or_default().to_string()
    }

    fn access(&self, args: &Value, _ctx: &ToolContext) -> Result<Access, ToolError> {
        self.schema.validate(self.tool_name(), args)?;
        Ok(Access::Session)
    }

    fn precheck(&self, _args: &Value, _ctx: &ToolContext) -> Result<(), ToolError> {
        Ok(())
    }

    fn call<'a>(
        &'a self,
        args: Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(self.run(args))
    }
}
