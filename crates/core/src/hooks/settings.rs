//! Reading hooks from the `"hooks"` key of Claude Code's and Lathe's settings files, and matching
//! them to tool names.
//!
//! ```json
//! {"hooks": {"PreToolUse": [{"matcher": "Bash|Edit", "hooks": [{"type": "command",
//!   "command": "$CLAUDE_PROJECT_DIR/.claude/check.sh", "timeout": 30}]}]}}
//! ```
//!
//! Only the `"hooks"` key is read here (permissions in the same files belong to `lathe-policy`).
//! Hooks of every file are combined. A file that is not valid JSON, an unknown event, a matcher that
//! is not a valid regex or an entry without a command is left out with a warning naming the file.

use std::path::{Path, PathBuf};
use std::time::Duration;

use lathe_policy::settings::{ReadSettings, SettingsContent};
use serde_json::Value;

use super::event::HookEvent;

/// Default time limit of a hook command (Claude Code's).
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(60);

/// The settings files hooks are read from, in order: `~/.claude/settings.json` (or
/// `$CLAUDE_CONFIG_DIR/settings.json`), `<lathe home>/settings.json`, then the project's
/// `.claude/settings.json`, `.claude/settings.local.json`, `.lathe/settings.json` and
/// `.lathe/settings.local.json`: the files of `lathe_policy::settings::settings_files`, which
/// permission rules are read from too.
pub fn settings_files(claude_home: &Path, lathe_home: &Path, project: &Path) -> Vec<PathBuf> {
    lathe_policy::settings::settings_files(Some(claude_home), None, lathe_home, project)
        .into_iter()
        .map(|file| file.path)
        .collect()
}

/// Which tool names (or, for other events, which sources) a group of hooks applies to.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// No matcher, `""` or `"*"`: everything.
    All,
    /// Plain names separated by `|` or `,` (`Edit|Write`, `Edit, Write`): exact matches.
    Names(Vec<String>),
    /// Anything else is a regular expression searched in the name (`mcp__github__.*`).
    Regex(regex::Regex),
}

impl Matcher {
    /// Parses a matcher the way Claude Code reads it.
    pub fn parse(text: &str) -> Result<Matcher, String> {
        let text = text.trim();
        if text.is_empty() || text == "*" {
            return Ok(Matcher::All);
        }
        if text.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '|' | '-' | ',' | ' ')) {
            let names = text.split(['|', ',']).map(str::trim).filter(|name| !name.is_empty());
            return Ok(Matcher::Names(names.map(str::to_string).collect()));
        }
        regex::Regex::new(text)
            .map(Matcher::Regex)
            .map_err(|error| format!("matcher {text:?} is not a valid regex: {error}"))
    }

    /// What a user should be told about this matcher: an exact name that is an MCP server's
    /// prefix (`mcp__my-srv`) matches none of its tools, which are named `mcp__my-srv__<tool>`.
    pub fn warning(&self) -> Option<String> {
        let Matcher::Names(names) = self else { return None };
        let server =
            names.iter().find(|name| name.strip_prefix("mcp__").is_some_and(|rest| !rest.contains("__")))?;
        Some(format!(
            "matcher `{server}` names an MCP server, not a tool, so it matches no call; use `{server}__.*` for \
             all of its tools"
        ))
    }

    /// Whether any of `names` (e.g. Claude's `Bash` and Lathe's `shell`) matches.
    pub fn matches_any(&self, names: &[&str]) -> bool {
        match self {
            Matcher::All => true,
            Matcher::Names(list) => names.iter().any(|name| list.iter().any(|item| item == name)),
            Matcher::Regex(regex) => names.iter().any(|name| regex.is_match(name)),
        }
    }
}

/// One hook command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookCommand {
    /// Run with `sh -c` in the project directory.
    pub command: String,
    /// Killed after this long.
    pub timeout: Duration,
    /// Whether it comes from a project's settings file (a repository can ship it): its allow
    /// never stands in for auto mode's reviewer.
    pub project: bool,
}

/// Hooks of one event that share a matcher.
#[derive(Debug, Clone)]
pub struct MatcherGroup {
    /// What they apply to.
    pub matcher: Matcher,
    /// The commands, run in parallel.
    pub commands: Vec<HookCommand>,
}

/// Every configured hook, by event.
#[derive(Debug, Clone, Default)]
pub struct HookTable {
    groups: Vec<(HookEvent, MatcherGroup)>,
}

impl HookTable {
    /// Reads and combines the `"hooks"` of `files`; missing files are skipped, problems become
    /// warnings.
    pub fn load(files: &[PathBuf]) -> (HookTable, Vec<String>) {
        let mut table = HookTable::default();
        let mut warnings = Vec::new();
        for file in files {
            let Ok(text) = std::fs::read_to_string(file) else { continue };
            let content = match serde_json::from_str::<Value>(&text) {
                Ok(value) => SettingsContent::Json(value),
                Err(error) => SettingsContent::NotJson(error.to_string()),
            };
            table.add_content(&content, &file.display().to_string(), &mut warnings);
        }
        (table, warnings)
    }

    /// Combines the `"hooks"` of settings files already read (`crate::config::SettingsSources`):
    /// files that are missing, unreadable or not text are skipped, other problems become warnings.
    pub fn from_read(files: &[ReadSettings]) -> (HookTable, Vec<String>) {
        let mut table = HookTable::default();
        let mut warnings = Vec::new();
        for read in files {
            let start = table.groups.len();
            table.add_content(&read.content, &read.file.path.display().to_string(), &mut warnings);
            for (_, group) in &mut table.groups[start..] {
                for command in &mut group.commands {
                    command.project = read.file.project;
                }
            }
        }
        (table, warnings)
    }

    fn add_content(&mut self, content: &SettingsContent, label: &str, warnings: &mut Vec<String>) {
        match content {
            SettingsContent::Json(value) => self.add_settings(value, label, warnings),
            SettingsContent::NotJson(error) => {
                warnings.push(format!("{label}: not valid JSON ({error}); its hooks were not loaded"))
            }
            SettingsContent::Missing | SettingsContent::Unreadable(_) | SettingsContent::NotText(_) => {}
        }
    }

    /// Adds the hooks of one parsed settings file (`label` names it in warnings).
    pub fn add_settings(&mut self, settings: &Value, label: &str, warnings: &mut Vec<String>) {
        let Some(hooks) = settings.get("hooks") else { return };
        let Some(events) = hooks.as_object() else {
            warnings.push(format!("{label}: \"hooks\" must be an object of events"));
            return;
        };
        for (name, groups) in events {
            let Some(event) = HookEvent::from_name(name) else {
                warnings.push(format!("{label}: unknown hook event \"{name}\" (its hooks were left out)"));
                continue;
            };
            let Some(groups) = groups.as_array() else {
                warnings.push(format!("{label}: hooks.{name} must be an array"));
                continue;
            };
            for group in groups {
                match parse_group(group) {
                    Ok(group) => {
                        if let Some(warning) = group.matcher.warning() {
                            warnings.push(format!("{label}: a {name} hook: {warning}"));
                        }
                        self.groups.push((event, group));
                    }
                    Err(why) => warnings.push(format!("{label}: a {name} hook was left out: {why}")),
                }
            }
        }
    }

    /// Whether no hook at all is configured for `event`.
    pub fn is_empty(&self, event: HookEvent) -> bool {
        !self.groups.iter().any(|(e, _)| *e == event)
    }

    /// The commands for `event` whose matcher matches one of `names` (all of the event's commands
    /// when `names` is `None`), without duplicates.
    pub fn matching(&self, event: HookEvent, names: Option<&[&str]>) -> Vec<HookCommand> {
        let mut out: Vec<HookCommand> = Vec::new();
        for (_, group) in self.groups.iter().filter(|(e, _)| *e == event) {
            if names.is_some_and(|names| !group.matcher.matches_any(names)) {
                continue;
            }
            for command in &group.commands {
                if !out.iter().any(|seen| seen.command == command.command) {
                    out.push(command.clone());
                }
            }
        }
        out
    }
}

fn parse_group(group: &Value) -> Result<MatcherGroup, String> {
    let matcher = match group.get("matcher") {
        None | Some(Value::Null) => Matcher::All,
        Some(Value::String(text)) => Matcher::parse(text)?,
        Some(other) => return Err(format!("\"matcher\" must be a string, not {other}")),
    };
    let Some(entries) = group.get("hooks").and_then(Value::as_array) else {
        return Err("each matcher needs a \"hooks\" array".into());
    };
    let mut commands = Vec::new();
    for entry in entries {
        match entry.get("type").and_then(Value::as_str) {
            Some("command") | None => {}
            Some(other) => return Err(format!("hook type \"{other}\" is not supported (only \"command\")")),
        }
        let Some(command) = entry.get("command").and_then(Value::as_str).filter(|c| !c.trim().is_empty())
        else {
            return Err("a hook needs a non-empty \"command\"".into());
        };
        let timeout = match entry.get("timeout") {
            None | Some(Value::Null) => DEFAULT_HOOK_TIMEOUT,
            Some(value) => match value.as_f64() {
                Some(seconds) if seconds > 0.0 && seconds.is_finite() => Duration::from_secs_f64(seconds),
                _ => return Err(format!("\"timeout\" must be a positive number of seconds, not {value}")),
            },
        };
        commands.push(HookCommand { command: command.to_string(), timeout, project: false });
    }
    Ok(MatcherGroup { matcher, commands })
}
