//! The memory tool's operations, mirroring Anthropic's memory tool (`memory_20250818`): `view`,
//! `create`, `str_replace`, `insert`, `delete`, `rename` on virtual paths under `/memories`.
//!
//! Order of operations: [`plan`] refuses secrets in any argument first, then resolves the paths
//! ([`super::paths`]), reads what exists, computes every file the call changes (the entry and the
//! affected scopes' `MEMORY.md`) and checks the caps, all without touching the disk. The caller
//! may show or approve the [`Planned`] change, then [`apply`] writes it atomically. The model
//! edits bodies only: the bookkeeping fields of the frontmatter (source, times, use count) are
//! Lathe's. The user's own operations, [`promote`] and [`remove`], plan the same way.

use std::fmt;
use std::path::Path;

use chrono::{DateTime, SecondsFormat, Utc};
use schemars::JsonSchema;
use serde::Deserialize;

use super::entry::{self, Frontmatter, MemoryType};
use super::ops::{build, delete, finish, index_write, read_current, read_existing};
use super::paths;
use super::{MemoryError, Roots, recall, secrets, stale};

pub use super::ops::{FileWrite, Planned, apply, promote, remove};

/// A memory command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MemoryCommandName {
    /// Show a folder's entries or a file with line numbers.
    View,
    /// Create or overwrite a memory file.
    Create,
    /// Replace text that occurs exactly once in a memory.
    StrReplace,
    /// Insert text after a line of a memory.
    Insert,
    /// Delete a memory file.
    Delete,
    /// Rename or move a memory file.
    Rename,
}

impl MemoryCommandName {
    /// The command's wire name (`str_replace`).
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryCommandName::View => "view",
            MemoryCommandName::Create => "create",
            MemoryCommandName::StrReplace => "str_replace",
            MemoryCommandName::Insert => "insert",
            MemoryCommandName::Delete => "delete",
            MemoryCommandName::Rename => "rename",
        }
    }
}

/// The memory tool's arguments (Anthropic's names).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct MemoryArgs {
    /// The operation.
    pub command: MemoryCommandName,
    /// E.g. /memories/project/pnpm.md (not for rename).
    #[serde(default)]
    pub path: Option<String>,
    /// create: the Markdown (frontmatter optional).
    #[serde(default)]
    pub file_text: Option<String>,
    /// str_replace: the exact text to replace; it must occur once.
    #[serde(default)]
    pub old_str: Option<String>,
    /// str_replace: replacement.
    #[serde(default)]
    pub new_str: Option<String>,
    /// insert: after this line (0: at the start).
    #[serde(default)]
    pub insert_line: Option<u32>,
    /// insert: the text.
    #[serde(default)]
    pub insert_text: Option<String>,
    /// rename: from.
    #[serde(default)]
    pub old_path: Option<String>,
    /// rename: to.
    #[serde(default)]
    pub new_path: Option<String>,
    /// view: [start, end] lines, 1-based; -1: to the end.
    #[serde(default)]
    pub view_range: Option<Vec<i64>>,
}

/// Who made a change: the session and turn, recorded as the entry's `source`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// The session id.
    pub session: String,
    /// The turn number in the session.
    pub turn: u32,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "session {} turn {}", self.session, self.turn)
    }
}

/// Validates `args` and computes the change, without side effects. `view` plans nothing and
/// returns its output as the message. Writes go to the user and project scopes only.
pub fn plan(
    roots: &Roots,
    args: &MemoryArgs,
    source: &Source,
    now: DateTime<Utc>,
    repo_root: Option<&Path>,
) -> Result<Planned, MemoryError> {
    refuse_secrets(args)?;
    let name = args.command.as_str();
    match args.command {
        MemoryCommandName::View => {
            let path = need(&args.path, name, "path")?;
            let message = super::view(roots, path, args.view_range.as_deref())?;
            let id = match paths::resolve_view(roots, path)? {
                paths::ViewTarget::File(target) => target.id(),
                paths::ViewTarget::Root | paths::ViewTarget::Dir { .. } => String::new(),
            };
            Ok(Planned { writes: Vec::new(), message, line: format!("memory: viewed {path}"), id })
        }
        MemoryCommandName::Create => create(roots, args, source, now, repo_root),
        MemoryCommandName::StrReplace => {
            let old = need(&args.old_str, name, "old_str")?;
            let new = args.new_str.as_deref().unwrap_or("");
            edit(roots, need(&args.path, name, "path")?, now, |body, path| replace_once(body, old, new, path))
        }
        MemoryCommandName::Insert => {
            let line = args
                .insert_line
                .ok_or(MemoryError::MissingArgument { command: name, argument: "insert_line" })?;
            let text = need(&args.insert_text, name, "insert_text")?;
            edit(roots, need(&args.path, name, "path")?, now, |body, path| insert_at(body, line, text, path))
        }
        MemoryCommandName::Delete => delete(roots, need(&args.path, name, "path")?),
        MemoryCommandName::Rename => rename(
            roots,
            need(&args.old_path, name, "old_path")?,
            need(&args.new_path, name, "new_path")?,
            now,
        ),
    }
}

/// `now` as stored in frontmatter: RFC 3339 UTC to the second (`2025-06-01T12:00:00Z`).
pub fn timestamp(now: DateTime<Utc>) -> String {
    now.to_rfc3339_opts(SecondsFormat::Secs, true)
}

fn need<'a>(
    value: &'a Option<String>,
    command: &'static str,
    argument: &'static str,
) -> Result<&'a str, MemoryError> {
    value.as_deref().ok_or(MemoryError::MissingArgument { command, argument })
}

/// Refuses any argument holding a secret, or a `[REDACTED:` marker (a secret an earlier layer
/// already removed: saving the rest would keep a memory about a secret).
fn refuse_secrets(args: &MemoryArgs) -> Result<(), MemoryError> {
    let texts = [
        &args.path,
        &args.file_text,
        &args.old_str,
        &args.new_str,
        &args.insert_text,
        &args.old_path,
        &args.new_path,
    ];
    let mut kinds: Vec<&'static str> = Vec::new();
    for text in texts.into_iter().flatten() {
        for hit in secrets::find_secrets(text) {
            if !kinds.contains(&hit.kind) {
                kinds.push(hit.kind);
            }
        }
        for kind in secrets::redaction_marks(text) {
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
        }
    }
    if kinds.is_empty() { Ok(()) } else { Err(MemoryError::Secret { kinds }) }
}

/// The fields the model may give in `file_text`'s frontmatter; anything else is ignored.
#[derive(Debug, Default, Deserialize)]
struct ModelFields {
    name: Option<String>,
    description: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    evidence: Option<OneOrMany>,
    expires: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

const FIELDS_HELP: &str = "it may give name, description, type (user, feedback, project or reference), \
                           evidence (a list of repository paths) and expires";

fn model_fields(text: &str) -> Result<(ModelFields, String), MemoryError> {
    let first = text.trim_start_matches('\u{feff}').lines().next().unwrap_or("");
    if first.trim_end() != "---" {
        return Ok((ModelFields::default(), entry::normalize_body(text)));
    }
    let (yaml, body) = entry::split(text).map_err(|problem| MemoryError::InvalidArgument {
        message: format!("file_text starts with `---` but {problem}; fix the frontmatter or drop it"),
    })?;
    let yaml = if yaml.trim().is_empty() { "{}" } else { yaml };
    let fields = serde_yaml_ng::from_str(yaml).map_err(|error| MemoryError::InvalidArgument {
        message: format!("file_text's frontmatter is not valid YAML ({error}); {FIELDS_HELP}"),
    })?;
    Ok((fields, entry::normalize_body(body)))
}

fn create(
    roots: &Roots,
    args: &MemoryArgs,
    source: &Source,
    now: DateTime<Utc>,
    repo_root: Option<&Path>,
) -> Result<Planned, MemoryError> {
    let path = need(&args.path, "create", "path")?;
    let text = need(&args.file_text, "create", "file_text")?;
    let target = paths::resolve(roots, path)?;
    let (fields, body) = model_fields(text)?;
    if body.is_empty() {
        return Err(MemoryError::InvalidArgument {
            message: "file_text has no content (after any frontmatter); write the memory itself".to_string(),
        });
    }
    let kind = match fields.kind.as_deref() {
        Some(kind) => {
            kind.parse::<MemoryType>().map_err(|message| MemoryError::InvalidArgument { message })?
        }
        None => target.scope.default_type(),
    };
    if let Some(expires) = &fields.expires
        && recall::parse_time(expires).is_none()
    {
        return Err(MemoryError::InvalidArgument {
            message: format!("expires `{expires}` is not an RFC 3339 time or a date such as 2025-12-31"),
        });
    }
    let mut evidence = match fields.evidence {
        None => Vec::new(),
        Some(OneOrMany::One(one)) => vec![one],
        Some(OneOrMany::Many(many)) => many,
    };
    evidence.retain(|item| !item.trim().is_empty());
    for item in &evidence {
        let path = item.rsplit_once('@').map_or(item.as_str(), |(path, _)| path);
        stale::check_path(path.trim()).map_err(|message| MemoryError::InvalidArgument { message })?;
    }
    if let Some(root) = repo_root {
        evidence = stale::fill_evidence(root, &evidence);
    }
    let existing = read_existing(&target)?;
    let old = existing.as_ref().map(|(_, entry)| &entry.meta);
    let stamp = timestamp(now);
    let meta = Frontmatter {
        name: fields
            .name
            .map(|name| one_line(&name))
            .filter(|name| !name.is_empty())
            .unwrap_or_else(|| entry::file_stem(&target.file).to_string()),
        description: fields
            .description
            .map(|text| one_line(&text))
            .filter(|text| !text.is_empty())
            .unwrap_or_else(|| entry::derive_description(&body)),
        kind,
        source: source.to_string(),
        created: old
            .map(|meta| meta.created.clone())
            .filter(|created| !created.is_empty())
            .unwrap_or(stamp.clone()),
        modified: stamp,
        last_used: old.and_then(|meta| meta.last_used.clone()),
        use_count: old.map_or(0, |meta| meta.use_count),
        expires: fields.expires,
        evidence,
    };
    let verb = if existing.is_some() { "updated" } else { "saved" };
    finish(roots, &target, existing.map(|(text, _)| text), meta, body, verb)
}

/// Applies `change` to the body of the entry at `path`, updating `modified`.
fn edit(
    roots: &Roots,
    path: &str,
    now: DateTime<Utc>,
    change: impl FnOnce(&str, &str) -> Result<String, MemoryError>,
) -> Result<Planned, MemoryError> {
    let target = paths::resolve(roots, path)?;
    let (before, entry) = read_existing(&target)?.ok_or(MemoryError::NotFound { path: path.to_string() })?;
    let body = change(&entry.body, path)?;
    let mut meta = entry.meta;
    meta.modified = timestamp(now);
    if meta.created.is_empty() {
        meta.created = meta.modified.clone();
    }
    finish(roots, &target, Some(before), meta, body, "updated")
}

fn replace_once(body: &str, old: &str, new: &str, path: &str) -> Result<String, MemoryError> {
    if old.is_empty() {
        return Err(MemoryError::InvalidArgument {
            message: "old_str is empty; give the text to replace".into(),
        });
    }
    let starts: Vec<usize> = body.match_indices(old).map(|(at, _)| at).collect();
    if starts.len() == 1 {
        return Ok(body.replacen(old, new, 1));
    }
    let (lines, fix) = if starts.is_empty() {
        (String::new(), "copy it exactly from view, without the line-number prefix")
    } else {
        let numbers: Vec<String> =
            starts.iter().map(|&at| (body[..at].matches('\n').count() + 1).to_string()).collect();
        (format!(" (lines {})", numbers.join(", ")), "add surrounding text so it is unique")
    };
    Err(MemoryError::Occurrences { path: path.to_string(), count: starts.len(), lines, fix })
}

fn insert_at(body: &str, line: u32, text: &str, path: &str) -> Result<String, MemoryError> {
    let mut lines: Vec<&str> = body.lines().collect();
    let at = line as usize;
    if at > lines.len() {
        return Err(MemoryError::InvalidArgument {
            message: format!(
                "insert_line {line} is past the end of {path}, which has {} lines; use 0 to {}",
                lines.len(),
                lines.len()
            ),
        });
    }
    let text = text.trim_end_matches(['\n', '\r']);
    lines.splice(at..at, text.split('\n'));
    Ok(lines.join("\n"))
}

fn rename(roots: &Roots, old_path: &str, new_path: &str, now: DateTime<Utc>) -> Result<Planned, MemoryError> {
    let from = paths::resolve(roots, old_path)?;
    let to = paths::resolve(roots, new_path)?;
    if from.path == to.path {
        return Err(MemoryError::InvalidArgument {
            message: format!("old_path and new_path are both {old_path}"),
        });
    }
    let (before, entry) =
        read_existing(&from)?.ok_or(MemoryError::NotFound { path: old_path.to_string() })?;
    if read_current(&to.path)?.is_some() {
        return Err(MemoryError::AlreadyExists { path: new_path.to_string() });
    }
    let mut meta = entry.meta;
    meta.modified = timestamp(now);
    let (moved, text) = build(&to, meta, entry.body)?;
    let mut writes = vec![
        FileWrite { path: to.path.clone(), before: None, after: Some(text) },
        FileWrite { path: from.path.clone(), before: Some(before), after: None },
    ];
    if from.scope == to.scope {
        writes.extend(index_write(roots, to.scope, Some(&from.file), Some(&moved))?);
    } else {
        writes.extend(index_write(roots, from.scope, Some(&from.file), None)?);
        writes.extend(index_write(roots, to.scope, None, Some(&moved))?);
    }
    let (old_id, new_id) = (from.id(), to.id());
    Ok(Planned {
        writes,
        message: format!("renamed {} to {} ({new_id})", from.virtual_path(), to.virtual_path()),
        line: format!("memory: renamed {old_id} to {new_id}"),
        id: new_id,
    })
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
#[path = "command_tests.rs"]
mod tests;
