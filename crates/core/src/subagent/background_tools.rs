//! `task_output` and `task_kill`: read and stop the background sub-agents of
//! [`super::background::BackgroundTable`].

use std::sync::Arc;

use futures::future::BoxFuture;
use lathe_protocol::{Meta, ToolSpec};
use lathe_tools::{Access, CompiledSchema, DynTool, Effect, ToolContext, ToolError, ToolOutput};
use serde_json::{Value, json};

use super::background::BackgroundTable;

/// The name of the tool that reads a background sub-agent's state or report.
pub const TASK_OUTPUT_TOOL: &str = "task_output";

/// The name of the tool that stops a background sub-agent.
pub const TASK_KILL_TOOL: &str = "task_kill";

/// `task_output {id}` or `task_kill {id}`.
pub struct BackgroundTool {
    table: Arc<BackgroundTable>,
    kill: bool,
    schema: CompiledSchema,
}

impl BackgroundTool {
    /// `task_output` (`kill` false) or `task_kill` over `table`.
    pub fn new(table: Arc<BackgroundTable>, kill: bool) -> BackgroundTool {
        let schema = json!({
            "type": "object",
            "properties": {"id": {"type": "string", "description": "Sub-agent id"}},
            "required": ["id"],
            "additionalProperties": false,
        });
        BackgroundTool { table, kill, schema: CompiledSchema::new(schema) }
    }

    fn tool_name(&self) -> &'static str {
        if self.kill { TASK_KILL_TOOL } else { TASK_OUTPUT_TOOL }
    }

    async fn run(&self, args: Value) -> Result<ToolOutput, ToolError> {
        self.schema.validate(self.tool_name(), &args)?;
        let id = args.get("id").and_then(Value::as_str).unwrap_or_default();
        let fail = |message: String| ToolError::Failed(format!("{}: {message}", self.tool_name()));
        if !self.kill {
            return self.table.output(id).map(ToolOutput::text).map_err(fail);
        }
        let text = self.table.kill(id).await.map_err(fail)?;
        let mut output = ToolOutput::text(text);
        output.ledger.push(Meta::SubagentEnded { agent_id: id.to_string(), status: "killed".into() });
        Ok(output)
    }
}

impl DynTool for BackgroundTool {
    fn name(&self) -> &str {
        self.tool_name()
    }

    fn spec(&self) -> ToolSpec {
        let description = if self.kill {
            "Stop a background sub-agent; its report is discarded."
        } else {
            "A background sub-agent's progress, or its report once it ended."
        };
        ToolSpec {
            name: self.tool_name().into(),
            description: description.into(),
            input_schema: self.schema.schema().clone(),
        }
    }

    /// Reading is read-only; stopping changes nothing outside Lathe either (the sub-agent's own
    /// calls were decided on their own).
    fn effect(&self, _args: &Value) -> Effect {
        Effect::ReadOnly
    }

    fn summary(&self, args: &Value) -> String {
        args.get("id").and_then(Value::as_str).unwrap_or_default().to_string()
    }

    fn access(&self, args: &Value, _ctx: &ToolContext) -> Result<Access, ToolError> {
        self.schema.validate(self.tool_name(), args)?;
        Ok(Access::Undeclared { read_only: true })
    }

    /// No preconditions of its own beyond its arguments.
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
