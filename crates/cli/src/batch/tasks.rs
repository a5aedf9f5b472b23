//! The task file of `lathe batch`: one JSON object a line, validated up front, with the command
//! line's defaults merged in.
//!
//! Fields: `id` (letters, digits, `.`, `_`, `-`; unique), `repo` (a local path, relative to the
//! current directory, or a git URL), `base` (a revision), `prompt`, and optional `test` (a shell
//! command run in a fresh checkout with the patch; exit 0 = resolved), `provider`, `model`,
//! `base_url`, `max_turns` (≥ 1), `max_cost` (USD, > 0), `timeout_s` (seconds, > 0, default
//! [`DEFAULT_TIMEOUT_S`]), `permission_mode` (`accept-edits`, the default, or `auto`). Blank lines
//! are skipped.

use std::collections::BTreeSet;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Wall-clock limit of a task that gives none, in seconds.
pub const DEFAULT_TIMEOUT_S: f64 = 1800.0;

/// The largest `timeout_s` a task may give (7 days, in seconds).
pub const MAX_TIMEOUT_S: f64 = 604_800.0;

/// One task with every default filled in: what `lathe batch-task --task-json` takes.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Task {
    /// Unique id; names the task's folder under `DIR/tasks/`.
    pub id: String,
    /// Absolute path of a local repository, or a git URL.
    pub repo: String,
    /// The revision the workspace starts at and the patch is taken against.
    pub base: String,
    /// The prompt of the headless run.
    pub prompt: String,
    /// The command that decides resolved / unresolved (run with `sh -c`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test: Option<String>,
    /// Provider name; `None` = the configured default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Model; `None` = the provider's configured model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Base URL of the provider's API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Model requests allowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u32>,
    /// Cost budget in USD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost: Option<f64>,
    /// Wall-clock limit of the agent (and, separately, of the test), in seconds.
    pub timeout_s: f64,
    /// `accept-edits` or `auto`.
    pub permission_mode: String,
    /// The task file's line (1-based) it came from; 0 when given as JSON.
    #[serde(skip)]
    pub line: usize,
}

/// The command line's defaults for fields a task line leaves out.
#[derive(Debug, Clone, Default)]
pub struct Defaults {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub max_turns: Option<u32>,
    pub max_cost: Option<f64>,
    pub permission_mode: Option<String>,
}

/// Why a task file was refused: `line` is 1-based, 0 for the file itself.
#[derive(Debug, thiserror::Error)]
#[error("{path}{}: {message}", if *line == 0 { String::new() } else { format!(":{line}") })]
pub struct TaskFileError {
    pub path: String,
    pub line: usize,
    pub message: String,
}

/// The longest id (bytes): it names the task's folders.
const MAX_ID_BYTES: usize = 100;

/// The longest prompt (bytes): it is passed as one argument, and Linux takes at most 128 KiB in
/// one (`MAX_ARG_STRLEN`).
const MAX_PROMPT_BYTES: usize = 100_000;

/// The longest task as JSON (bytes): `lathe batch-task --task-json` takes it as one argument
/// (escaping makes a prompt of many lines or quotes longer than it is).
const MAX_TASK_JSON_BYTES: usize = 126_000;

const FIELDS: [&str; 12] = [
    "id",
    "repo",
    "base",
    "prompt",
    "test",
    "provider",
    "model",
    "base_url",
    "max_turns",
    "max_cost",
    "timeout_s",
    "permission_mode",
];

/// Reads and validates the task file at `path`; relative local repositories are made absolute
/// against `cwd`.
pub fn load(path: &Path, defaults: &Defaults, cwd: &Path) -> Result<Vec<Task>, TaskFileError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|error| TaskFileError {
        path: shown.clone(),
        line: 0,
        message: format!("cannot read the task file: {error}"),
    })?;
    let mut tasks = Vec::new();
    let mut ids = BTreeSet::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let fail = |message: String| TaskFileError { path: shown.clone(), line: index + 1, message };
        let mut task = parse_line(line, defaults, cwd).map_err(fail)?;
        task.line = index + 1;
        if !ids.insert(task.id.clone()) {
            return Err(fail(format!("field `id`: `{}` is already the id of an earlier line", task.id)));
        }
        tasks.push(task);
    }
    if tasks.is_empty() {
        return Err(TaskFileError { path: shown, line: 0, message: "the task file has no tasks".into() });
    }
    Ok(tasks)
}

fn parse_line(line: &str, defaults: &Defaults, cwd: &Path) -> Result<Task, String> {
    let value: Value = serde_json::from_str(line).map_err(|error| format!("not a JSON object: {error}"))?;
    let Value::Object(object) = value else { return Err("not a JSON object".into()) };
    if let Some(unknown) = object.keys().find(|key| !FIELDS.contains(&key.as_str())) {
        return Err(format!("unknown field `{unknown}` (known: {})", FIELDS.join(", ")));
    }
    if let Some((field, _)) =
        object.iter().find(|(_, value)| value.as_str().is_some_and(|text| text.contains('\0')))
    {
        return Err(format!("field `{field}`: holds a NUL character"));
    }
    let id = required(&object, "id")?;
    if id.len() > MAX_ID_BYTES {
        return Err(format!("field `id`: {} bytes, at most {MAX_ID_BYTES}", id.len()));
    }
    if !id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')) || id.starts_with('.') {
        return Err(format!(
            "field `id`: `{id}` may hold only letters, digits, `.`, `_` and `-` (not first: `.`)"
        ));
    }
    let repo = required(&object, "repo")?;
    let repo = if is_url(&repo) { repo } else { cwd.join(&repo).display().to_string() };
    let (permission_mode, from) = match optional_str(&object, "permission_mode")? {
        Some(mode) => (mode, "field `permission_mode`"),
        None => (defaults.permission_mode.clone().unwrap_or("accept-edits".into()), "--permission-mode"),
    };
    if !matches!(permission_mode.as_str(), "accept-edits" | "auto") {
        return Err(format!(
            "{from}: `{permission_mode}` is not for unattended runs (use accept-edits or auto)"
        ));
    }
    let max_turns = match object.get("max_turns") {
        None | Some(Value::Null) => defaults.max_turns,
        Some(value) => Some(
            value
                .as_u64()
                .filter(|n| *n >= 1)
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| format!("field `max_turns`: expected a whole number ≥ 1, got {value}"))?,
        ),
    };
    let positive = |field: &str| -> Result<Option<f64>, String> {
        match object.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => value
                .as_f64()
                .filter(|n| n.is_finite() && *n > 0.0)
                .map(Some)
                .ok_or_else(|| format!("field `{field}`: expected a number > 0, got {value}")),
        }
    };
    let prompt = required(&object, "prompt")?;
    if prompt.len() > MAX_PROMPT_BYTES {
        return Err(format!("field `prompt`: {} bytes, at most {MAX_PROMPT_BYTES}", prompt.len()));
    }
    let task = Task {
        id,
        repo,
        base: required(&object, "base")?,
        prompt,
        test: optional_str(&object, "test")?,
        provider: optional_str(&object, "provider")?.or(defaults.provider.clone()),
        model: optional_str(&object, "model")?.or(defaults.model.clone()),
        base_url: optional_str(&object, "base_url")?.or(defaults.base_url.clone()),
        max_turns,
        max_cost: positive("max_cost")?.or(defaults.max_cost),
        timeout_s: match positive("timeout_s")? {
            Some(seconds) if seconds > MAX_TIMEOUT_S => {
                return Err(format!("field `timeout_s`: {seconds} s, at most {MAX_TIMEOUT_S} (7 days)"));
            }
            seconds => seconds.unwrap_or(DEFAULT_TIMEOUT_S),
        },
        permission_mode,
        line: 0,
    };
    let json = serde_json::to_string(&task).map_err(|e| e.to_string())?.len();
    if json > MAX_TASK_JSON_BYTES {
        return Err(format!(
            "field `prompt`: the task is {json} bytes as JSON (its prompt escaped), at most {MAX_TASK_JSON_BYTES}"
        ));
    }
    Ok(task)
}

/// Whether `repo` is a git URL rather than a local path.
pub fn is_url(repo: &str) -> bool {
    repo.contains("://") || (repo.contains('@') && repo.contains(':') && !repo.starts_with('/'))
}

fn required(object: &Map<String, Value>, field: &str) -> Result<String, String> {
    match optional_str(object, field)? {
        Some(text) => Ok(text),
        None => Err(format!("field `{field}` is missing")),
    }
}

fn optional_str(object: &Map<String, Value>, field: &str) -> Result<Option<String>, String> {
    match object.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) if text.trim().is_empty() => Err(format!("field `{field}` is empty")),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(other) => Err(format!("field `{field}`: expected a string, got {other}")),
    }
}
