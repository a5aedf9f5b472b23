//! One memory: a Markdown file whose YAML frontmatter ([`Frontmatter`]) says what it is, where it
//! came from and how it has been used; the body is the memory itself.
//!
//! [`render`] writes the frontmatter with `serde_yaml_ng`; [`parse`] reads it back. Parsing runs
//! on every entry at every session start, so the flat `key: value` form that [`render`] produces
//! is read by a small line parser; anything else (quoting, nesting, comments) goes to
//! `serde_yaml_ng`, so both read the same YAML.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::Scope;
use crate::frontmatter::MAX_FRONTMATTER_BYTES;

/// Longest description derived from a body's first line, in characters.
pub const MAX_DERIVED_DESCRIPTION_CHARS: usize = 120;

/// What a memory is about (Anthropic's memory taxonomy).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MemoryType {
    /// Who the user is and how they like to work.
    User,
    /// A correction or preference the user gave about Lathe's behaviour.
    Feedback,
    /// A fact about this project (tooling, conventions, decisions).
    Project,
    /// A pointer to where something lives (docs, dashboards, tickets).
    Reference,
}

impl MemoryType {
    /// `"user"`, `"feedback"`, `"project"` or `"reference"`.
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryType::User => "user",
            MemoryType::Feedback => "feedback",
            MemoryType::Project => "project",
            MemoryType::Reference => "reference",
        }
    }
}

impl fmt::Display for MemoryType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for MemoryType {
    type Err = String;

    fn from_str(text: &str) -> Result<MemoryType, String> {
        match text.trim() {
            "user" => Ok(MemoryType::User),
            "feedback" => Ok(MemoryType::Feedback),
            "project" => Ok(MemoryType::Project),
            "reference" => Ok(MemoryType::Reference),
            other => Err(format!("unknown memory type `{other}` (use user, feedback, project or reference)")),
        }
    }
}

/// A memory file's frontmatter. Times are RFC 3339 UTC strings (`2025-06-01T12:00:00Z`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Frontmatter {
    /// Short name (defaults to the file stem).
    pub name: String,
    /// One line saying what the memory holds; shown in `MEMORY.md`.
    pub description: String,
    /// The memory type (`type:` in the file).
    #[serde(rename = "type")]
    pub kind: MemoryType,
    /// Who wrote it: `session <id> turn <n>`, or `user`.
    #[serde(default)]
    pub source: String,
    /// When it was created.
    #[serde(default)]
    pub created: String,
    /// When its content last changed.
    #[serde(default)]
    pub modified: String,
    /// When recall last attached it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_used: Option<String>,
    /// How many times recall attached it.
    #[serde(default)]
    pub use_count: u32,
    /// After this time (or date, `2025-12-31`) recall no longer returns it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<String>,
    /// Files the memory is about: `path@<git blob sha1>`, path relative to the repository root.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<String>,
}

impl Frontmatter {
    /// The frontmatter of a file that has none (or a broken one): name from the file stem,
    /// description from the body's first line, the scope's default type, everything else empty.
    pub fn fallback(scope: Scope, file: &str, body: &str) -> Frontmatter {
        Frontmatter {
            name: file_stem(file).to_string(),
            description: derive_description(body),
            kind: scope.default_type(),
            source: String::new(),
            created: String::new(),
            modified: String::new(),
            last_used: None,
            use_count: 0,
            expires: None,
            evidence: Vec::new(),
        }
    }
}

/// One memory as loaded from disk.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Its scope.
    pub scope: Scope,
    /// Its path relative to the scope root, `/`-separated: `pnpm.md`, `feedback/tone.md`.
    pub file: String,
    /// Its real path.
    pub path: PathBuf,
    /// Its frontmatter (a fallback when the file's was missing or broken, see `warning`).
    pub meta: Frontmatter,
    /// The Markdown body, leading blank lines and trailing whitespace removed.
    pub body: String,
    /// Why the frontmatter could not be used, when it could not.
    pub warning: Option<String>,
}

impl Entry {
    /// `<scope>/<file without .md>`: `project/pnpm`, `user/feedback/tone`.
    pub fn id(&self) -> String {
        format!("{}/{}", self.scope, self.file.strip_suffix(".md").unwrap_or(&self.file))
    }

    /// The path the model uses for it: `/memories/project/pnpm.md`.
    pub fn virtual_path(&self) -> String {
        format!("/memories/{}/{}", self.scope, self.file)
    }
}

/// Splits a memory file into its frontmatter and body. The error says what is wrong (no
/// frontmatter, no closing `---`, invalid YAML with its line), for a warning naming the file.
pub fn parse(text: &str) -> Result<(Frontmatter, String), String> {
    let (yaml, body) = split(text)?;
    let meta = match parse_flat(yaml) {
        Some(meta) => meta,
        None => parse_yaml(yaml)?,
    };
    Ok((meta, normalize_body(body)))
}

/// Splits `text` into the YAML between the fences and the rest.
pub(crate) fn split(text: &str) -> Result<(&str, &str), String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(first_end) = text.find('\n') else {
        return Err(missing(text));
    };
    if !is_fence(&text[..first_end]) {
        return Err(missing(text));
    }
    let yaml_start = first_end + 1;
    let mut offset = yaml_start;
    for line in text[yaml_start..].split_inclusive('\n') {
        if is_fence(line) {
            return Ok((&text[yaml_start..offset], &text[offset + line.len()..]));
        }
        offset += line.len();
        if offset - yaml_start > MAX_FRONTMATTER_BYTES {
            return Err(format!(
                "the frontmatter is over {MAX_FRONTMATTER_BYTES} bytes (its closing `---` line must come within them)"
            ));
        }
    }
    Err("the frontmatter has no closing `---` line".to_string())
}

fn missing(text: &str) -> String {
    if is_fence(text) {
        "the frontmatter has no closing `---` line".to_string()
    } else {
        "no YAML frontmatter (the file must start with a line `---`)".to_string()
    }
}

/// Writes a memory file: `---`, the frontmatter, `---`, a blank line, the body and a newline.
/// [`parse`] gives back `meta` and the body normalised (leading blank lines and trailing
/// whitespace removed).
pub fn render(meta: &Frontmatter, body: &str) -> String {
    // Serialising plain strings, numbers and lists of strings cannot fail; keep a readable
    // fallback rather than panic if it ever does.
    let yaml = serde_yaml_ng::to_string(meta).unwrap_or_else(|error| format!("# {error}\n"));
    let body = normalize_body(body);
    let mut out = String::with_capacity(yaml.len() + body.len() + 12);
    out.push_str("---\n");
    out.push_str(&yaml);
    out.push_str("---\n\n");
    out.push_str(&body);
    out.push('\n');
    out
}

/// `body` without leading blank lines and trailing whitespace.
pub(crate) fn normalize_body(body: &str) -> String {
    body.trim_start_matches(['\n', '\r']).trim_end().to_string()
}

/// The first non-empty line of `body` (a leading `#` heading marker removed), cut to
/// [`MAX_DERIVED_DESCRIPTION_CHARS`] characters.
pub(crate) fn derive_description(body: &str) -> String {
    let line = body
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty() && !is_fence(line))
        .unwrap_or("")
        .trim_start_matches('#')
        .trim();
    line.chars().take(MAX_DERIVED_DESCRIPTION_CHARS).collect()
}

/// `feedback/tone.md` → `tone`.
pub(crate) fn file_stem(file: &str) -> &str {
    let name = file.rsplit('/').next().unwrap_or(file);
    name.strip_suffix(".md").unwrap_or(name)
}

fn is_fence(line: &str) -> bool {
    line.trim_end() == "---"
}

fn parse_yaml(yaml: &str) -> Result<Frontmatter, String> {
    let text = if yaml.trim().is_empty() { "{}" } else { yaml };
    serde_yaml_ng::from_str(text).map_err(|error| format!("invalid YAML frontmatter: {error}"))
}

/// Reads the flat form [`render`] writes (`key: plain value` lines, `evidence:` followed by
/// `- item` lines). `None` for anything else, which then goes to the YAML parser.
fn parse_flat(yaml: &str) -> Option<Frontmatter> {
    let mut name = None;
    let mut description = None;
    let mut kind = None;
    let mut meta = Frontmatter::fallback(Scope::User, "", "");
    let mut in_evidence = false;
    for line in yaml.lines() {
        if let Some(item) = line.strip_prefix("- ") {
            if !in_evidence {
                return None;
            }
            meta.evidence.push(plain(item)?);
            continue;
        }
        in_evidence = false;
        let (key, value) = line.split_once(':')?;
        let value = value.strip_prefix(' ').unwrap_or(value);
        match key {
            "name" => name = Some(plain(value)?),
            "description" => description = Some(plain(value)?),
            "type" => kind = Some(value.parse().ok()?),
            "source" => meta.source = plain(value)?,
            "created" => meta.created = plain(value)?,
            "modified" => meta.modified = plain(value)?,
            "last_used" => meta.last_used = Some(plain(value)?),
            "use_count" => meta.use_count = value.trim().parse().ok()?,
            "expires" => meta.expires = Some(plain(value)?),
            "evidence" if value.trim().is_empty() => in_evidence = true,
            _ => return None,
        }
    }
    meta.name = name?;
    meta.description = description?;
    meta.kind = kind?;
    Some(meta)
}

/// A YAML scalar the line parser can read for certain: plain text without YAML indicators, or
/// single-quoted text. `None` when the YAML parser must decide.
fn plain(value: &str) -> Option<String> {
    if let Some(inner) = value.strip_prefix('\'').and_then(|rest| rest.strip_suffix('\'')) {
        if inner.replace("''", "").contains('\'') {
            return None;
        }
        return Some(inner.replace("''", "'"));
    }
    let first = value.chars().next()?;
    let special = "-?:,[]{}#&*!|>'\"%@`~";
    if special.contains(first)
        || value.contains(": ")
        || value.contains(" #")
        || value.ends_with(':')
        || value != value.trim()
        || matches!(value, "null" | "Null" | "NULL" | "true" | "false" | "True" | "False" | "yes" | "no")
    {
        return None;
    }
    Some(value.to_string())
}

#[cfg(test)]
#[path = "entry_tests.rs"]
mod tests;
