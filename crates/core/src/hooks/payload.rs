//! The JSON a hook reads on stdin, in Claude Code's names and fields, so existing hook scripts work
//! unchanged: built-in tools with a Claude counterpart are reported under Claude's name with
//! Claude's argument names (`shell` → `Bash` + `command`, `write_file` → `Write` + `file_path`,
//! absolute); other tools (`mcp__…`) keep their own name and arguments.

use std::path::Path;

use lathe_protocol::{ToolResult, ToolStatus};
use serde_json::{Map, Value, json};

pub use lathe_protocol::tool_names::claude_name;

/// `tool_name` and `tool_input` as a Claude Code hook expects them. `workspace` makes relative
/// paths absolute (Claude's `file_path` is always absolute).
pub fn claude_tool(tool: &str, args: &Value, workspace: &Path) -> (String, Value) {
    let Some(name) = claude_name(tool) else { return (tool.to_string(), args.clone()) };
    let Some(fields) = args.as_object() else { return (name.to_string(), args.clone()) };
    let absolute = |value: &Value| match value.as_str() {
        Some(path) if !Path::new(path).is_absolute() => {
            Value::from(workspace.join(path).display().to_string())
        }
        _ => value.clone(),
    };
    let mut out = Map::new();
    for (key, value) in fields {
        let (key, value) = match (tool, key.as_str()) {
            ("read_file" | "write_file" | "edit_file", "path") => ("file_path", absolute(value)),
            ("grep" | "glob" | "list_dir", "path") => ("path", absolute(value)),
            ("shell", "timeout_ms") => ("timeout", value.clone()),
            ("shell_output", "id") => ("bash_id", value.clone()),
            ("shell_kill", "id") => ("shell_id", value.clone()),
            ("grep", "case_insensitive") => ("-i", value.clone()),
            ("grep", "context") => ("-C", value.clone()),
            ("grep", "output_mode") => {
                let mode = match value.as_str() {
                    Some("files") => Value::from("files_with_matches"),
                    _ => value.clone(),
                };
                ("output_mode", mode)
            }
            ("todo_write", "items") => ("todos", value.clone()),
            (_, other) => (other, value.clone()),
        };
        out.insert(key.to_string(), value);
    }
    (name.to_string(), Value::Object(out))
}

/// `tool_response` for PostToolUse: the result text and status, plus the fields Claude's tools
/// report (`stdout`/`stderr`/`interrupted` for Bash, `filePath`/`success` for Write and Edit).
pub fn tool_response(tool: &str, input: &Value, result: &ToolResult, exit_code: Option<i32>) -> Value {
    let text = result.text_content();
    let status = match result.status {
        ToolStatus::Completed => "completed",
        ToolStatus::Denied => "denied",
        ToolStatus::Failed => "failed",
        ToolStatus::Interrupted => "interrupted",
    };
    let mut response = json!({"output": text, "is_error": result.is_error, "status": status});
    let Value::Object(map) = &mut response else { return response };
    match claude_name(tool) {
        Some("Bash") => {
            map.insert("stdout".into(), Value::from(text));
            map.insert("stderr".into(), Value::from(""));
            map.insert("interrupted".into(), Value::from(result.status == ToolStatus::Interrupted));
            map.insert("exit_code".into(), json!(exit_code));
        }
        Some("Write" | "Edit") => {
            map.insert("filePath".into(), input.get("file_path").cloned().unwrap_or(Value::Null));
            map.insert("success".into(), Value::from(!result.is_error));
        }
        _ => {}
    }
    response
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn built_in_tools_use_claude_names_and_fields() {
        let ws = Path::new("/ws");
        let cases = [
            (
                "shell",
                json!({"command": "ls", "timeout_ms": 5}),
                "Bash",
                json!({"command": "ls", "timeout": 5}),
            ),
            (
                "write_file",
                json!({"path": "a.txt", "content": "x"}),
                "Write",
                json!({"file_path": "/ws/a.txt", "content": "x"}),
            ),
            (
                "edit_file",
                json!({"path": "/abs/b.rs", "old_string": "a", "new_string": "b"}),
                "Edit",
                json!({"file_path": "/abs/b.rs", "old_string": "a", "new_string": "b"}),
            ),
            ("read_file", json!({"path": "c"}), "Read", json!({"file_path": "/ws/c"})),
            (
                "grep",
                json!({"pattern": "x", "output_mode": "files"}),
                "Grep",
                json!({"pattern": "x", "output_mode": "files_with_matches"}),
            ),
            ("mcp__fs__read", json!({"path": "c"}), "mcp__fs__read", json!({"path": "c"})),
        ];
        for (tool, args, name, input) in cases {
            assert_eq!(claude_tool(tool, &args, ws), (name.to_string(), input), "{tool}");
        }
    }

    #[test]
    fn post_tool_use_response_has_claude_fields() {
        let result = ToolResult::text("c1", "wrote 1 line", false, ToolStatus::Completed);
        let response = tool_response("write_file", &json!({"file_path": "/ws/a"}), &result, None);
        assert_eq!(response["filePath"], "/ws/a");
        assert_eq!(response["success"], true);
        let shell = tool_response(
            "shell",
            &json!({}),
            &ToolResult::text("c2", "out", true, ToolStatus::Completed),
            Some(1),
        );
        assert_eq!(shell["stdout"], "out");
        assert_eq!(shell["exit_code"], 1);
    }
}
