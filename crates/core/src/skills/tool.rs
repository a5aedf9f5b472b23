//! The `skill` tool: its description lists the skills (names and descriptions only); a call with
//! `{"name"}` returns the skill's instructions and the list of its other files, which the model
//! reads with `read_file` when the instructions point to them.

use std::sync::Arc;

use futures::future::BoxFuture;
use lathe_protocol::ToolSpec;
use lathe_tools::{Access, CompiledSchema, DynTool, Effect, ToolContext, ToolError, ToolOutput};
use serde_json::{Value, json};

use super::gate::ToolGate;
use super::{LISTING_BUDGET_BYTES, SkillSet};

/// Other files listed per skill at most.
const MAX_LISTED_FILES: usize = 100;

/// The `skill` tool over a session's skills.
pub struct SkillTool {
    skills: Arc<SkillSet>,
    gate: Option<Arc<ToolGate>>,
    description: String,
    schema: CompiledSchema,
}

impl SkillTool {
    /// The tool for `skills`, and how many skills did not fit in the listing budget.
    pub fn new(skills: Arc<SkillSet>) -> (SkillTool, usize) {
        let (listing, left_out) = skills.listing(LISTING_BUDGET_BYTES);
        let description = format!(
            "Load a skill: packaged instructions for a kind of task. When the user's task matches a skill \
             below, call this with its name before starting and follow what it returns.\n\
             Available skills:\n{listing}"
        );
        let schema = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The skill's name, as listed"},
                "args": {"type": "string", "description": "Arguments for the skill ($ARGUMENTS), if any"},
            },
            "required": ["name"],
            "additionalProperties": false,
        });
        (SkillTool { skills, gate: None, description, schema: CompiledSchema::new(schema) }, left_out)
    }

    /// Puts a loaded skill's `allowed-tools` in force through `gate`.
    pub fn with_gate(mut self, gate: Arc<ToolGate>) -> SkillTool {
        self.gate = Some(gate);
        self
    }

    fn run(&self, args: &Value, workspace: &std::path::Path) -> Result<ToolOutput, ToolError> {
        let name = args.get("name").and_then(Value::as_str).unwrap_or_default();
        let Some(skill) = self.skills.get(name) else {
            let names: Vec<&str> = self.skills.all().iter().map(|skill| skill.name.as_str()).collect();
            return Err(ToolError::Failed(format!(
                "skill: no skill named `{name}`; available: {}",
                names.join(", ")
            )));
        };
        let body = skill.body().map_err(|error| ToolError::Failed(format!("skill: {error}")))?;
        let notes = match &self.gate {
            Some(gate) => gate.activate(&skill.name, &skill.allowed_tools, workspace),
            None => Vec::new(),
        };
        let arguments = args.get("args").and_then(Value::as_str).unwrap_or_default();
        let body = crate::commands::substitute_arguments(&body, arguments);
        let mut text =
            format!("# Skill: {}\nBase directory: {}\n\n{body}\n", skill.name, skill.dir.display());
        if !skill.allowed_tools.is_empty() && self.gate.is_some() {
            text.push_str(&format!(
                "\nWhile you work on this skill, until the user's next message, only these tools run: {}\n",
                skill.allowed_tools.join(", ")
            ));
        }
        for note in notes {
            text.push_str(&format!("(allowed-tools: {note})\n"));
        }
        let files = skill.other_files(MAX_LISTED_FILES);
        if !files.is_empty() {
            text.push_str(
                "\nOther files of this skill (paths relative to the base directory; read them with \
                 read_file when the instructions need them):\n",
            );
            for file in files {
                text.push_str(&format!("- {file}\n"));
            }
        }
        Ok(ToolOutput::text(text))
    }
}

impl DynTool for SkillTool {
    fn name(&self) -> &str {
        "skill"
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "skill".into(),
            description: self.description.clone(),
            input_schema: self.schema.schema().clone(),
        }
    }

    fn effect(&self, _args: &Value) -> Effect {
        Effect::ReadOnly
    }

    fn summary(&self, args: &Value) -> String {
        args.get("name").and_then(Value::as_str).unwrap_or_default().to_string()
    }

    /// Reading a skill's instructions is decided as a read-only tool (its files are Lathe's
    /// configuration, wherever they are; a `skill` deny or ask rule still applies).
    fn access(&self, args: &Value, _ctx: &ToolContext) -> Result<Access, ToolError> {
        self.schema.validate("skill", args)?;
        Ok(Access::Undeclared { read_only: true })
    }

    /// No preconditions of its own beyond its arguments.
    fn precheck(&self, _args: &Value, _ctx: &ToolContext) -> Result<(), ToolError> {
        Ok(())
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            self.schema.validate("skill", &args)?;
            self.run(&args, &ctx.workspace)
        })
    }
}
