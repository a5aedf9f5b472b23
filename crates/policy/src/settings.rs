//! Permission settings files, read as users already have them for Claude Code, plus Lathe's own.
//!
//! Files, in order (arrays merge; a deny anywhere beats an allow anywhere, see [`crate::Policy`]):
//! `~/.claude/settings.json` (`$CLAUDE_CONFIG_DIR/settings.json` when set), `~/.lathe/settings.json` (`$LATHE_HOME/settings.json`),
//! `<project>/.claude/settings.json`, `<project>/.claude/settings.local.json`,
//! `<project>/.lathe/settings.json`, `<project>/.lathe/settings.local.json`.
//!
//! Read from each: `permissions.allow`, `permissions.ask`, `permissions.deny` (arrays of rules, see
//! [`crate::rules`]) and `permissions.additionalDirectories` (extra roots). A missing file is
//! empty. A file that is not valid JSON, or a rule that does not parse, is reported in
//! [`Loaded::problems`] naming the file and the rule, and the safer decision follows: a broken
//! allow is dropped (never widened); a broken deny or ask rule of a known tool, or a broken file
//! whose deny rules are unknown, makes the calls it might have covered ask.
//!
//! "Always" answers are stored by [`remember`] as allow rules in
//! `<project>/.lathe/settings.local.json`.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::rules::{Anchors, Rule, RuleKind, RuleSet, ToolName};

/// One settings file to read.
#[derive(Debug, Clone)]
pub struct SettingsFile {
    /// Where it is.
    pub path: PathBuf,
    /// What `/path` rules in it are relative to (the project, or the home directory for user files).
    pub root: PathBuf,
    /// What `path` and `./path` rules in it are relative to: the working directory, in every file
    /// (Claude Code's rule).
    pub cwd: PathBuf,
    /// Whether the file is the project's (a repository can ship it) rather than the user's.
    pub project: bool,
}

/// The six settings files of `project` (the working directory), user files first. `claude_dir` is
/// Claude Code's user directory (`$CLAUDE_CONFIG_DIR`, else `~/.claude`; `None` when neither is
/// known), `home` the user's home directory, `lathe_home` Lathe's (`~/.lathe` or `$LATHE_HOME`).
pub fn settings_files(
    claude_dir: Option<&Path>,
    home: Option<&Path>,
    lathe_home: &Path,
    project: &Path,
) -> Vec<SettingsFile> {
    let mut files = Vec::with_capacity(6);
    let home_root = home.map(Path::to_path_buf).unwrap_or_else(|| project.to_path_buf());
    let file = |path: PathBuf, root: &Path, in_project: bool| SettingsFile {
        path,
        root: root.to_path_buf(),
        cwd: project.to_path_buf(),
        project: in_project,
    };
    if let Some(claude_dir) = claude_dir {
        files.push(file(claude_dir.join("settings.json"), &home_root, false));
    }
    files.push(file(lathe_home.join("settings.json"), &home_root, false));
    for name in [
        ".claude/settings.json",
        ".claude/settings.local.json",
        ".lathe/settings.json",
        ".lathe/settings.local.json",
    ] {
        files.push(file(project.join(name), project, true));
    }
    files
}

/// A settings problem that makes some calls ask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Poison {
    /// The tool whose calls ask (`None`: every call that is not read-only).
    pub tool: Option<ToolName>,
    /// Why, naming the file and the rule.
    pub why: String,
}

/// What the settings files say.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    /// Every valid rule.
    pub rules: RuleSet,
    /// Extra roots (`permissions.additionalDirectories`), absolute.
    pub extra_roots: Vec<PathBuf>,
    /// Broken deny/ask rules and unreadable files: the calls they might cover ask.
    pub poison: Vec<Poison>,
    /// One line per problem, naming the file (and the rule), for the start-up warnings.
    pub problems: Vec<String>,
}

/// What reading one settings file gave.
#[derive(Debug, Clone, PartialEq)]
pub enum SettingsContent {
    /// The file does not exist (an empty file as far as rules and hooks go).
    Missing,
    /// The file exists but cannot be read (the I/O error's message).
    Unreadable(String),
    /// The file is not UTF-8 text (the decoder's message).
    NotText(String),
    /// The file is text but not JSON (the parser's message, with line and column).
    NotJson(String),
    /// The parsed JSON document.
    Json(Value),
}

/// One settings file, read and parsed once; permission rules and hooks are both taken from it.
#[derive(Debug, Clone)]
pub struct ReadSettings {
    /// Where it is and what its rules are relative to.
    pub file: SettingsFile,
    /// What it holds.
    pub content: SettingsContent,
}

/// Reads and parses each of `files` once, in order. Never fails: a problem is kept in
/// [`ReadSettings::content`] for each reader to report in its own words.
pub fn read(files: &[SettingsFile]) -> Vec<ReadSettings> {
    files
        .iter()
        .map(|file| {
            let content = match std::fs::read(&file.path) {
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => SettingsContent::Missing,
                Err(error) => SettingsContent::Unreadable(error.to_string()),
                Ok(bytes) => match std::str::from_utf8(&bytes) {
                    Err(error) => SettingsContent::NotText(error.to_string()),
                    Ok(text) => match serde_json::from_str(text) {
                        Ok(value) => SettingsContent::Json(value),
                        Err(error) => SettingsContent::NotJson(error.to_string()),
                    },
                },
            };
            ReadSettings { file: file.clone(), content }
        })
        .collect()
}

/// Reads `files` and takes their permissions ([`read`] then [`load_read`]). `home` expands `~/`
/// in rules and extra roots.
pub fn load(files: &[SettingsFile], home: Option<&Path>) -> Loaded {
    load_read(&read(files), home)
}

/// The permissions of settings files already read ([`read`]). `home` expands `~/` in rules and
/// extra roots.
pub fn load_read(files: &[ReadSettings], home: Option<&Path>) -> Loaded {
    let mut loaded = Loaded::default();
    for ReadSettings { file, content } in files {
        let value = match content {
            SettingsContent::Missing => continue,
            SettingsContent::Unreadable(error) => {
                loaded.broken_file(&file.path, &format!("cannot be read: {error}"));
                continue;
            }
            SettingsContent::NotText(error) | SettingsContent::NotJson(error) => {
                loaded.broken_file(&file.path, &format!("is not valid JSON ({error})"));
                continue;
            }
            SettingsContent::Json(value) => value,
        };
        let anchors = Anchors { root: &file.root, cwd: &file.cwd, home };
        let source = file.path.display().to_string();
        let Some(permissions) = value.get("permissions") else { continue };
        let Some(permissions) = permissions.as_object() else {
            loaded.broken_file(&file.path, "has a `permissions` value that is not an object");
            continue;
        };
        if let Some(mode) = permissions.get("defaultMode") {
            // The permission mode comes from the user (flags, ~/.lathe/config.toml): a repository
            // must not turn on auto mode or bypass for whoever opens it.
            let mode = mode.as_str().map_or_else(|| mode.to_string(), str::to_string);
            loaded.problems.push(if file.project {
                format!(
                    "{source}: permissions.defaultMode \"{mode}\" is ignored: a project's settings cannot choose \
                     the permission mode (use --permission-mode, or permission_mode in ~/.lathe/config.toml)"
                )
            } else {
                format!(
                    "{source}: permissions.defaultMode \"{mode}\" is not read by Lathe (use --permission-mode, or \
                     permission_mode in ~/.lathe/config.toml)"
                )
            });
        }
        for kind in [RuleKind::Deny, RuleKind::Ask, RuleKind::Allow] {
            let Some(list) = permissions.get(kind.as_str()) else { continue };
            let Some(list) = list.as_array() else {
                loaded
                    .problems
                    .push(format!("{source}: permissions.{} is not an array; ignored", kind.as_str()));
                if kind != RuleKind::Allow {
                    loaded.poison.push(Poison {
                        tool: None,
                        why: format!("permissions.{} in {source} is not an array", kind.as_str()),
                    });
                }
                continue;
            };
            for entry in list {
                let Some(text) = entry.as_str() else {
                    loaded.problems.push(format!(
                        "{source}: permissions.{}: {entry} is not a string; ignored",
                        kind.as_str()
                    ));
                    continue;
                };
                match Rule::parse(text, kind, &source, anchors) {
                    Ok(rule) => loaded.rules.rules.push(Rule { project: file.project, ..rule }),
                    Err(error) => loaded.broken_rule(kind, text, &source, &error.to_string()),
                }
            }
        }
        if let Some(dirs) = permissions.get("additionalDirectories").and_then(Value::as_array) {
            for dir in dirs.iter().filter_map(Value::as_str) {
                let path = match (dir.strip_prefix("~/"), home) {
                    (Some(rest), Some(home)) => home.join(rest),
                    _ if Path::new(dir).is_absolute() => PathBuf::from(dir),
                    _ => file.root.join(dir),
                };
                loaded.extra_roots.push(path);
            }
        }
    }
    loaded
}

impl Loaded {
    fn broken_file(&mut self, path: &Path, what: &str) {
        self.problems.push(format!(
            "{} {what}; its rules are ignored and every call that is not read-only asks until it is fixed",
            path.display()
        ));
        self.poison.push(Poison { tool: None, why: format!("the settings file {} {what}", path.display()) });
    }

    fn broken_rule(&mut self, kind: RuleKind, text: &str, source: &str, error: &str) {
        let name = text.trim().split('(').next().unwrap_or("").trim();
        let consequence = match kind {
            RuleKind::Allow => "dropped".to_string(),
            RuleKind::Deny | RuleKind::Ask if !name.is_empty() => {
                self.poison.push(Poison {
                    tool: Some(ToolName::parse(name)),
                    why: format!("the {} rule `{text}` in {source} is malformed ({error})", kind.as_str()),
                });
                format!("every {name} call asks until it is fixed")
            }
            RuleKind::Deny | RuleKind::Ask => "ignored".to_string(),
        };
        self.problems.push(format!(
            "{source}: permissions.{} rule `{text}` is malformed ({error}); {consequence}",
            kind.as_str()
        ));
    }
}

/// Why a rule could not be remembered.
#[derive(Debug, thiserror::Error)]
pub enum RememberError {
    /// The rule would allow far more than the command that was approved.
    #[error("`{0}` is too broad to store as an always-allow rule")]
    TooBroad(String),
    /// The local settings file exists but is not a JSON object; it is left untouched.
    #[error("{path} is not a JSON object; not changed ({detail})")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// Reading or writing the file failed.
    #[error("cannot update {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// Whether storing `rule` as an allow would be over-broad: a blanket rule (`*`, `Bash`), or a
/// prefix that runs arbitrary code (`bash *`, `sh -c *`, `python -c *`, `eval *`, `sudo *`).
pub fn too_broad(rule: &str) -> bool {
    let rule = rule.trim();
    let Some((name, inner)) = rule.split_once('(') else { return true };
    let inner = inner.strip_suffix(')').unwrap_or(inner).trim();
    if inner.is_empty() || inner.chars().all(|c| matches!(c, '*' | '/' | ' ' | '.')) {
        return true;
    }
    if !matches!(ToolName::parse(name), ToolName::Shell) {
        return inner == "~/**" || inner == "~" || inner.starts_with("//**");
    }
    let program = inner.split_whitespace().next().unwrap_or("");
    let program = program.rsplit('/').next().unwrap_or(program).trim_end_matches(":*").trim_end_matches('*');
    const RUNS_ANYTHING: &[&str] = &[
        "", "bash", "sh", "zsh", "dash", "ksh", "fish", "python", "python2", "python3", "node", "perl",
        "ruby", "php", "lua", "deno", "bun", "eval", "exec", "env", "xargs", "sudo", "su", "doas", "command",
        "builtin", "nohup", "timeout", "nice", "time", "stdbuf", "setsid", "ssh", "npx", "source", ".",
    ];
    RUNS_ANYTHING.contains(&program)
}

/// Adds `rules` to `permissions.allow` of `<project>/.lathe/settings.local.json` (creating it, and
/// keeping everything else in it), skipping rules already there. Refuses over-broad rules
/// ([`too_broad`]) and never overwrites a file it cannot parse. Returns the file's path.
pub fn remember(project: &Path, rules: &[String]) -> Result<PathBuf, RememberError> {
    remember_in(&project.join(".lathe").join("settings.local.json"), rules)
}

/// [`remember`] into the settings file at `path` (the user's `~/.lathe/settings.json` for a rule
/// a project file cannot grant, such as `Memory(user/…)`).
pub fn remember_in(path: &Path, rules: &[String]) -> Result<PathBuf, RememberError> {
    let path = path.to_path_buf();
    if let Some(broad) = rules.iter().find(|rule| too_broad(rule)) {
        return Err(RememberError::TooBroad(broad.clone()));
    }
    let io = |source| RememberError::Io { path: path.clone(), source };
    let mut root = match std::fs::read(&path) {
        Ok(bytes) => match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(map)) => map,
            Ok(other) => {
                return Err(RememberError::Invalid {
                    path,
                    detail: format!("it holds a {}", kind_of(&other)),
                });
            }
            Err(error) => return Err(RememberError::Invalid { path, detail: error.to_string() }),
        },
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Map::new(),
        Err(error) => return Err(io(error)),
    };
    let permissions = root.entry("permissions").or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(permissions) = permissions else {
        return Err(RememberError::Invalid { path, detail: "`permissions` is not an object".into() });
    };
    let allow = permissions.entry("allow").or_insert_with(|| Value::Array(Vec::new()));
    let Value::Array(allow) = allow else {
        return Err(RememberError::Invalid { path, detail: "`permissions.allow` is not an array".into() });
    };
    for rule in rules {
        if !allow.iter().any(|existing| existing.as_str() == Some(rule)) {
            allow.push(Value::String(rule.clone()));
        }
    }
    let mut text = serde_json::to_string_pretty(&Value::Object(root)).unwrap_or_default();
    text.push('\n');
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text).map_err(io)?;
    std::fs::rename(&tmp, &path).map_err(io)?;
    Ok(path)
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}
