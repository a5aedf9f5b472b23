//! The one table of Lathe's built-in tool names and their Claude Code names, used wherever a user
//! writes a tool name as Claude Code users do: permission rules (`Bash(git diff *)`), hook matchers
//! and payloads (`tool_name: "Bash"`), an agent's `tools:` and a skill's or command's
//! `allowed-tools`. Claude Code's names are those of its tool reference
//! (<https://docs.anthropic.com/en/docs/claude-code/settings#tools-available-to-claude>); `Agent` is
//! the current name of its sub-agent tool, `Task` the older one, `KillBash` the older name of
//! `KillShell`, and `MultiEdit` an edit tool that Lathe's `edit_file` stands in for.

/// One built-in tool: Lathe's name, Claude Code's name, and other names that mean it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolNames {
    /// Lathe's name (`shell`), what the model calls.
    pub lathe: &'static str,
    /// Claude Code's name (`Bash`), what hook payloads report.
    pub claude: &'static str,
    /// Further names accepted for it (`Agent` for `task`).
    pub aliases: &'static [&'static str],
}

/// Every built-in tool with a Claude Code counterpart.
pub const TOOL_NAMES: &[ToolNames] = &[
    ToolNames { lathe: "shell", claude: "Bash", aliases: &[] },
    ToolNames { lathe: "shell_output", claude: "BashOutput", aliases: &[] },
    ToolNames { lathe: "shell_kill", claude: "KillShell", aliases: &["KillBash"] },
    ToolNames { lathe: "read_file", claude: "Read", aliases: &[] },
    ToolNames { lathe: "write_file", claude: "Write", aliases: &[] },
    ToolNames { lathe: "edit_file", claude: "Edit", aliases: &["MultiEdit"] },
    ToolNames { lathe: "grep", claude: "Grep", aliases: &[] },
    ToolNames { lathe: "glob", claude: "Glob", aliases: &[] },
    ToolNames { lathe: "list_dir", claude: "LS", aliases: &[] },
    ToolNames { lathe: "todo_write", claude: "TodoWrite", aliases: &[] },
    ToolNames { lathe: "web_fetch", claude: "WebFetch", aliases: &[] },
    ToolNames { lathe: "task", claude: "Task", aliases: &["Agent"] },
    ToolNames { lathe: "skill", claude: "Skill", aliases: &[] },
    ToolNames { lathe: "memory", claude: "Memory", aliases: &[] },
    ToolNames { lathe: "exit_plan_mode", claude: "ExitPlanMode", aliases: &[] },
    ToolNames { lathe: "ask_user", claude: "AskUserQuestion", aliases: &[] },
    ToolNames { lathe: "tool_search", claude: "ToolSearch", aliases: &[] },
];

/// The table entry for a name written in any of its spellings (`Bash`, `shell`, `Agent`).
pub fn lookup(written: &str) -> Option<&'static ToolNames> {
    TOOL_NAMES
        .iter()
        .find(|names| names.lathe == written || names.claude == written || names.aliases.contains(&written))
}

/// Lathe's name for a built-in tool written in any of its spellings; `None` for any other name.
pub fn lathe_name(written: &str) -> Option<&'static str> {
    lookup(written).map(|names| names.lathe)
}

/// Claude Code's name for Lathe's built-in tool `lathe`, if it has one.
pub fn claude_name(lathe: &str) -> Option<&'static str> {
    TOOL_NAMES.iter().find(|names| names.lathe == lathe).map(|names| names.claude)
}

/// Every name a matcher may use for Lathe's tool `tool`: its own name, then Claude Code's and the
/// aliases when it is a built-in tool (an MCP tool has only its own).
pub fn every_name(tool: &str) -> Vec<&str> {
    let mut names = vec![tool];
    if let Some(entry) = TOOL_NAMES.iter().find(|names| names.lathe == tool) {
        names.push(entry.claude);
        names.extend(entry.aliases.iter().copied());
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_maps_to_one_tool() {
        for (written, lathe) in [
            ("Bash", "shell"),
            ("shell", "shell"),
            ("Task", "task"),
            ("Agent", "task"),
            ("MultiEdit", "edit_file"),
        ] {
            assert_eq!(lathe_name(written), Some(lathe), "{written}");
        }
        assert_eq!(lathe_name("mcp__github__x"), None);
        assert_eq!(claude_name("task"), Some("Task"));
        assert_eq!(every_name("task"), ["task", "Task", "Agent"]);
        assert_eq!(every_name("mcp__s__t"), ["mcp__s__t"]);
    }

    #[test]
    fn no_name_is_used_twice() {
        let mut all: Vec<&str> = TOOL_NAMES
            .iter()
            .flat_map(|names| [names.lathe, names.claude].into_iter().chain(names.aliases.iter().copied()))
            .collect();
        let count = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), count);
    }
}
