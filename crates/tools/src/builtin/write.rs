//! `write_file{path, content}`: creates or overwrites a file with exactly `content` (UTF-8).
//!
//! Order: resolve → if the path exists, it must be a file this session has read, written or edited,
//! unchanged on disk since ([`FileTracker`](crate::FileTracker)) → create parent directories →
//! write → record the new state (the file now counts as read) → summarise (size when created, a
//! short unified diff when overwritten).

use schemars::JsonSchema;
use serde::Deserialize;

use super::{MAX_READ_BYTES, blocking, io_reason, read_limited};
use crate::context::ToolContext;
use crate::files::Staleness;
use crate::tool::{Access, Effect, Tool, ToolError, ToolOutput};

/// Characters of diff shown after an overwrite.
const MAX_DIFF_CHARS: usize = 4_000;

/// The `write_file` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteFile;

/// Arguments of `write_file`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WriteArgs {
    /// File path (relative to the workspace or absolute).
    pub path: String,
    /// The complete new content.
    pub content: String,
}

impl Tool for WriteFile {
    type Args = WriteArgs;

    fn name(&self) -> &'static str {
        "write_file"
    }

    fn description(&self) -> &'static str {
        "Create a file, or overwrite one you have read, with the given content. Creates parent \
         directories. Prefer edit_file for changes to existing files."
    }

    fn effect(&self) -> Effect {
        Effect::Mutating
    }

    fn access(&self, args: &WriteArgs, ctx: &ToolContext) -> Access {
        Access::Write(vec![ctx.resolve(&args.path)])
    }

    async fn run(&self, args: WriteArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let path = ctx.resolve(&args.path);
        let shown = ctx.display_path(&path);
        let existing = match tokio::fs::metadata(&path).await {
            Ok(meta) if meta.is_dir() => {
                return Err(ToolError::Failed(format!(
                    "write_file: {shown} is a directory; give a file path"
                )));
            }
            Ok(_) => {
                let p = path.clone();
                let (bytes, _) =
                    blocking(ctx, move || read_limited(&p, MAX_READ_BYTES)).await?.map_err(|e| {
                        ToolError::Failed(format!("write_file: cannot read {shown}: {}", io_reason(&e)))
                    })?;
                check_fresh(ctx, &path, &shown, &bytes, "write_file")?;
                Some(bytes)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                return Err(ToolError::Failed(format!(
                    "write_file: cannot access {shown}: {}",
                    io_reason(&e)
                )));
            }
        };
        if let Some(parent) = path.parent() {
            tokio::fs::create_dir_all(parent).await.map_err(|e| {
                ToolError::Failed(format!(
                    "write_file: cannot create directory {}: {}",
                    ctx.display_path(parent),
                    io_reason(&e)
                ))
            })?;
        }
        tokio::fs::write(&path, args.content.as_bytes())
            .await
            .map_err(|e| ToolError::Failed(format!("write_file: cannot write {shown}: {}", io_reason(&e))))?;
        let mtime = tokio::fs::metadata(&path).await.ok().and_then(|m| m.modified().ok());
        ctx.files.record(&path, args.content.as_bytes(), mtime);
        let lines = args.content.lines().count();
        let summary = match existing {
            None => format!("Created {shown} ({} bytes, {lines} lines).", args.content.len()),
            Some(old) => {
                let old = String::from_utf8_lossy(&old);
                if old == args.content {
                    format!("Wrote {shown}: content unchanged ({} bytes).", args.content.len())
                } else {
                    let diff = unified_diff(&old, &args.content, &shown, MAX_DIFF_CHARS);
                    format!("Overwrote {shown} ({} bytes, {lines} lines).\n{diff}", args.content.len())
                }
            }
        };
        Ok(ToolOutput::text(summary))
    }
}

/// Refuses to touch a file the session has not seen, or that changed on disk since.
pub(crate) fn check_fresh(
    ctx: &ToolContext,
    path: &std::path::Path,
    shown: &str,
    current: &[u8],
    tool: &str,
) -> Result<(), ToolError> {
    match ctx.files.check_unchanged(path, current) {
        Ok(()) => Ok(()),
        Err(Staleness::NeverRead) => Err(ToolError::Failed(format!(
            "{tool}: {shown} exists but has not been read in this session; read it with read_file first"
        ))),
        Err(Staleness::ChangedOnDisk) => Err(ToolError::Failed(format!(
            "{tool}: {shown} was modified since it was read; read it again before changing it"
        ))),
    }
}

/// A unified diff of `old` → `new` (3 lines of context, `\r` removed for display), cut to
/// `max_chars` with a note.
pub(crate) fn unified_diff(old: &str, new: &str, label: &str, max_chars: usize) -> String {
    let diff = similar::TextDiff::from_lines(old, new);
    let text = diff
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{label}"), &format!("b/{label}"))
        .to_string()
        .replace('\r', "");
    if text.chars().count() <= max_chars {
        text
    } else {
        let cut: String = text.chars().take(max_chars).collect();
        let end = cut.rfind('\n').map_or(cut.len(), |i| i + 1);
        format!("{}[diff cut at {max_chars} chars]\n", &cut[..end])
    }
}

#[cfg(test)]
#[path = "write_tests.rs"]
mod tests;
