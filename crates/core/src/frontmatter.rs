//! YAML frontmatter of the Markdown definition files users write: skills (`SKILL.md`), custom
//! commands (`.claude/commands/*.md`) and sub-agents (`.claude/agents/*.md`).
//!
//! A file starts with a line `---`, YAML, and a closing `---`; the Markdown body follows. Start-up
//! reads only the head of each file ([`read_head`]: the size from the metadata, then lines up to the
//! closing fence), so hundreds of installed definitions cost little; the body is read when it is
//! used ([`read_body`]). YAML is parsed by `serde_yaml_ng`.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

/// Largest definition file read, in bytes (frontmatter and body); a larger file is reported and
/// skipped.
pub const MAX_DEFINITION_BYTES: u64 = 256 * 1024;

/// Largest frontmatter, in bytes; a file whose closing `---` is not found within it is reported.
pub const MAX_FRONTMATTER_BYTES: usize = 16 * 1024;

/// Why a definition file could not be used. Each message names the file and what to fix.
#[derive(Debug, thiserror::Error)]
pub enum FrontmatterError {
    /// The file could not be read.
    #[error("{}: cannot read: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The file is larger than [`MAX_DEFINITION_BYTES`].
    #[error("{}: {size} bytes, over the limit of {limit} bytes; skipped", path.display(), limit = MAX_DEFINITION_BYTES)]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size in bytes.
        size: u64,
    },
    /// The file does not start with a `---` line.
    #[error("{}: no YAML frontmatter (the file must start with a line `---`, then `name:` and `description:`, then `---`)", path.display())]
    Missing {
        /// The file.
        path: PathBuf,
    },
    /// The closing `---` was not found within [`MAX_FRONTMATTER_BYTES`].
    #[error("{}: the frontmatter has no closing `---` line", path.display())]
    Unclosed {
        /// The file.
        path: PathBuf,
    },
    /// The frontmatter is not valid YAML or has fields of the wrong type.
    #[error("{}: invalid YAML frontmatter: {message}", path.display())]
    Yaml {
        /// The file.
        path: PathBuf,
        /// The parser's message (with line and column).
        message: String,
    },
}

/// The parsed head of a definition file.
#[derive(Debug, Clone, PartialEq)]
pub struct Head<T> {
    /// The frontmatter, `None` when the file has none.
    pub meta: Option<T>,
    /// Byte offset of the body (just after the closing fence; 0 without frontmatter).
    pub body_offset: u64,
}

/// Reads the frontmatter of `path` without reading its body. A file without frontmatter gives
/// `meta: None`; an empty frontmatter parses as YAML `{}`.
pub fn read_head<T: DeserializeOwned>(path: &Path) -> Result<Head<T>, FrontmatterError> {
    let io = |source| FrontmatterError::Io { path: path.to_path_buf(), source };
    let file = std::fs::File::open(path).map_err(io)?;
    let size = file.metadata().map_err(io)?.len();
    if size > MAX_DEFINITION_BYTES {
        return Err(FrontmatterError::TooLarge { path: path.to_path_buf(), size });
    }
    let mut reader = BufReader::with_capacity(4096, file);
    let mut line = String::new();
    let mut offset = reader.read_line(&mut line).map_err(io)? as u64;
    if !is_fence(&line) {
        return Ok(Head { meta: None, body_offset: 0 });
    }
    let mut yaml = String::new();
    loop {
        line.clear();
        let read = reader.read_line(&mut line).map_err(io)?;
        if read == 0 || yaml.len() > MAX_FRONTMATTER_BYTES {
            return Err(FrontmatterError::Unclosed { path: path.to_path_buf() });
        }
        offset += read as u64;
        if is_fence(&line) {
            break;
        }
        yaml.push_str(&line);
    }
    let text = if yaml.trim().is_empty() { "{}" } else { yaml.as_str() };
    let meta = serde_yaml_ng::from_str(text)
        .map_err(|error| FrontmatterError::Yaml { path: path.to_path_buf(), message: error.to_string() })?;
    Ok(Head { meta: Some(meta), body_offset: offset })
}

/// Reads the body of `path` from `offset` (see [`Head::body_offset`]), with leading blank lines
/// removed; the size limit applies again (the file may have changed since start-up).
pub fn read_body(path: &Path, offset: u64) -> Result<String, FrontmatterError> {
    let io = |source| FrontmatterError::Io { path: path.to_path_buf(), source };
    let file = std::fs::File::open(path).map_err(io)?;
    let size = file.metadata().map_err(io)?.len();
    if size > MAX_DEFINITION_BYTES {
        return Err(FrontmatterError::TooLarge { path: path.to_path_buf(), size });
    }
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(MAX_DEFINITION_BYTES).read_to_end(&mut bytes).map_err(io)?;
    let start = (offset as usize).min(bytes.len());
    let text = String::from_utf8_lossy(&bytes[start..]);
    Ok(text.trim_start_matches(['\n', '\r']).trim_end().to_string())
}

/// A frontmatter list written either as a YAML sequence or as one comma- or space-separated string
/// (`tools: Read, Grep`, `allowed-tools: Bash(git add:*) Read`).
#[derive(Debug, Clone, PartialEq, Default, serde::Deserialize)]
#[serde(untagged)]
pub enum NameList {
    /// Absent or empty.
    #[default]
    None,
    /// `tools: Read, Grep`.
    One(String),
    /// `tools: [Read, Grep]`.
    Many(Vec<String>),
}

impl NameList {
    /// The names, trimmed, empty ones dropped; `None` when the field was absent.
    pub fn names(&self) -> Option<Vec<String>> {
        match self {
            NameList::None => None,
            NameList::One(text) => Some(split_names(text)),
            NameList::Many(items) => Some(
                items.iter().map(|item| item.trim().to_string()).filter(|item| !item.is_empty()).collect(),
            ),
        }
    }
}

/// Splits `Read, Grep` or `Bash(git add:*) Read` into names, keeping parenthesised parts whole.
fn split_names(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for ch in text.chars() {
        match ch {
            '(' => {
                depth += 1;
                current.push(ch);
            }
            ')' => {
                depth = depth.saturating_sub(1);
                current.push(ch);
            }
            ',' | ' ' | '\t' if depth == 0 => {
                if !current.trim().is_empty() {
                    names.push(current.trim().to_string());
                }
                current.clear();
            }
            _ => current.push(ch),
        }
    }
    if !current.trim().is_empty() {
        names.push(current.trim().to_string());
    }
    names
}

fn is_fence(line: &str) -> bool {
    line.trim_end_matches(['\n', '\r']).trim_end() == "---"
}

#[cfg(test)]
#[path = "frontmatter_tests.rs"]
mod tests;
