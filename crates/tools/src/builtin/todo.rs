//! `todo_write{items:[{content, status}]}`: the model's task list. Replaces the whole list each
//! call; the list goes to the user via [`ToolOutput::todos`] and back to the model as a short
//! rendering.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::context::ToolContext;
use crate::tool::{Access, Effect, Tool, ToolError, ToolOutput};

/// The `todo_write` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct TodoWrite;

/// State of one task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on (at most one at a time, by convention).
    InProgress,
    /// Done.
    Completed,
}

/// One task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TodoItem {
    /// What to do.
    pub content: String,
    /// pending, in_progress or completed.
    pub status: TodoStatus,
}

/// Arguments of `todo_write`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct TodoArgs {
    /// The complete list.
    pub items: Vec<TodoItem>,
}

impl Tool for TodoWrite {
    type Args = TodoArgs;

    fn name(&self) -> &'static str {
        "todo_write"
    }

    fn description(&self) -> &'static str {
        "Replace your task list (shown to the user), for multi-step work: one item in_progress at \
         a time; mark items completed as soon as they are done."
    }

    fn effect(&self) -> Effect {
        Effect::ReadOnly
    }

    fn access(&self, _args: &TodoArgs, _ctx: &ToolContext) -> Access {
        Access::Session
    }

    async fn run(&self, args: TodoArgs, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let todos = serde_json::to_value(&args.items)
            .map_err(|e| ToolError::Failed(format!("todo_write: cannot record the list: {e}")))?;
        Ok(ToolOutput { todos: Some(todos), ..ToolOutput::text(render(&args.items)) })
    }
}

/// `[x] done`, `[~] in progress`, `[ ] pending`, one per line, with a count header.
pub fn render(items: &[TodoItem]) -> String {
    if items.is_empty() {
        return "Task list cleared.".to_string();
    }
    let done = items.iter().filter(|i| i.status == TodoStatus::Completed).count();
    let mut out = format!("Task list updated ({done}/{} completed):\n", items.len());
    for item in items {
        let mark = match item.status {
            TodoStatus::Pending => "[ ]",
            TodoStatus::InProgress => "[~]",
            TodoStatus::Completed => "[x]",
        };
        out.push_str(&format!("{mark} {}\n", item.content));
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::tool::DynTool;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[tokio::test]
    async fn todo_write_renders_the_list_and_hands_it_to_the_user() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(dir.path().to_path_buf());
        let items = json!([
            {"content": "read the code", "status": "completed"},
            {"content": "fix the bug", "status": "in_progress"},
            {"content": "run tests", "status": "pending"}
        ]);
        let out = TodoWrite.call(json!({"items": items}), &ctx).await.unwrap();
        assert_eq!(
            out.text_content(),
            "Task list updated (1/3 completed):\n[x] read the code\n[~] fix the bug\n[ ] run tests\n"
        );
        assert_eq!(out.todos, Some(items));
        assert!(!out.is_error);
    }

    #[tokio::test]
    async fn todo_write_rejects_an_unknown_status() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(dir.path().to_path_buf());
        let err =
            TodoWrite.call(json!({"items": [{"content": "x", "status": "done"}]}), &ctx).await.unwrap_err();
        assert!(matches!(err, ToolError::InvalidArguments { .. }), "{err}");
        assert!(err.to_string().contains("/items/0/status"), "{err}");
    }
}
