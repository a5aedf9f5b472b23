//! `write_file{path, content}`: creates a file with exactly `content` (UTF-8), or overwrites one
//! with `content` stored the way the file already was.
//!
//! Order: resolve → if the path exists, it must be a file this session has read, written or edited,
//! unchanged on disk since ([`FileTracker`](crate::FileTracker)) → encode ([`stored_as_before`]:
//! an existing text file keeps its encoding — UTF-8, UTF-8 with BOM, UTF-16 with BOM, Latin-1 —
//! and its line-ending style; text the encoding cannot hold is refused with the reason, never
//! converted) → create parent directories → write → record the new state (the file now counts as
//! read) → summarise (size when created, what was kept and a short unified diff when overwritten,
//! plus a warning when the new content drops most of the old lines: [`shrink_warning`]). The
//! result's view is the diff (all additions for a new file); the permission preview is the diff
//! against the file on disk ([`super::preview`]).

use lathe_protocol::{FileChange, FileLines, ResultView, ToolPreview};
use schemars::JsonSchema;
use serde::Deserialize;

use super::preview::MAX_PREVIEW_DIFF_CHARS;
use super::{MAX_READ_BYTES, io_reason, read_limited};
use crate::context::ToolContext;
use crate::files::Staleness;
use crate::files::text::{Decoded, LineEnding, TextEncoding, decode, encode, line_ending, to_crlf};
use crate::tool::{Access, Effect, Tool, ToolError, ToolOutput};

/// Characters of diff shown after an overwrite.
const MAX_DIFF_CHARS: usize = 4_000;

/// Non-empty lines an overwritten file must have had for a shrink warning.
const SHRINK_MIN_LINES: usize = 8;

/// The `write_file` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteFile;

/// Arguments of `write_file`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WriteArgs {
    /// Relative to the workspace, or absolute.
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

    /// The diff of the file on disk (nothing, when it does not exist) to the bytes the call would
    /// store (its line endings and encoding kept). `None` when the call would fail or the file
    /// cannot be previewed as text.
    fn preview(&self, args: &WriteArgs, ctx: &ToolContext) -> Option<ToolPreview> {
        let old = super::preview::current_text(&ctx.resolve(&args.path))?.unwrap_or_default();
        let planned = plan_write(args, ctx).ok()?;
        let new = String::from_utf8_lossy(&planned.stored.bytes);
        let new = new.strip_prefix('\u{feff}').unwrap_or(&new);
        Some(super::preview::diff(ctx, &args.path, &old, new, FileChange::Write))
    }

    /// Every refusal of the run: a directory, a file not read in this session or changed since.
    fn precheck(&self, args: &WriteArgs, ctx: &ToolContext) -> Result<(), ToolError> {
        plan_write(args, ctx).map(|_| ())
    }

    async fn run(&self, args: WriteArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let PlannedWrite { path, shown, existing, stored } = plan_write(&args, ctx)?;
        if let Some(editor) = &ctx.editor {
            editor.write(&path, args.content.clone()).await.map_err(|e| {
                ToolError::Failed(format!("write_file: the editor could not write {shown}: {e}"))
            })?;
        } else if let Some(parent) = path.parent() {
            tokio::fs::create_dir_all(parent).await.map_err(|e| {
                ToolError::Failed(format!(
                    "write_file: cannot create directory {}: {}",
                    ctx.display_path(parent),
                    io_reason(&e)
                ))
            })?;
        }
        if ctx.editor.is_none() {
            tokio::fs::write(&path, &stored.bytes).await.map_err(|e| {
                ToolError::Failed(format!("write_file: cannot write {shown}: {}", io_reason(&e)))
            })?;
        }
        let mtime = tokio::fs::metadata(&path).await.ok().and_then(|m| m.modified().ok());
        ctx.files.record(&path, &stored.bytes, mtime);
        let lines = args.content.lines().count();
        let size = stored.bytes.len();
        let kept =
            if stored.kept.is_empty() { String::new() } else { format!("; kept {}", stored.kept.join(", ")) };
        let (summary, unified, change) = match (existing, stored.old_text) {
            (None, _) => {
                let new_text = args.content.replace("\r\n", "\n");
                let (diff, change) = counted_diff("", &new_text, &shown, MAX_PREVIEW_DIFF_CHARS);
                (format!("Created {shown} ({size} bytes, {lines} lines)."), diff, Some(change))
            }
            (Some(old), _) if old == stored.bytes => {
                (format!("Wrote {shown}: content unchanged ({size} bytes)."), String::new(), None)
            }
            (Some(old), old_text) => {
                let shrink = old_text.as_deref().and_then(|old_text| shrink_warning(old_text, &args.content));
                let old_text = old_text.unwrap_or_else(|| String::from_utf8_lossy(&old).into_owned());
                let new_text = args.content.replace("\r\n", "\n");
                let (diff, change) =
                    counted_diff(&old_text.replace("\r\n", "\n"), &new_text, &shown, MAX_DIFF_CHARS);
                let mut summary = format!("Overwrote {shown} ({size} bytes, {lines} lines{kept}).\n{diff}");
                if let Some(warning) = shrink {
                    summary.push_str(&format!("\n{warning}"));
                }
                (summary, diff, Some(change))
            }
        };
        let view = ResultView::Diff { path: shown, unified };
        Ok(ToolOutput { view: Some(view), change, ..ToolOutput::text(summary) })
    }
}

/// `write_file` that only creates files: an existing path is refused with a pointer to
/// `edit_file`, and nothing is written. For models that rewrite a whole file to change one line
/// and drop code on the way (Lathe's profile for the embedded local model).
#[derive(Debug, Clone, Copy, Default)]
pub struct CreateFile;

impl Tool for CreateFile {
    type Args = WriteArgs;

    fn name(&self) -> &'static str {
        "write_file"
    }

    fn description(&self) -> &'static str {
        "Create a new file with the given content. Creates parent directories. An existing file is \
         never overwritten: change it with edit_file."
    }

    fn effect(&self) -> Effect {
        Effect::Mutating
    }

    fn access(&self, args: &WriteArgs, ctx: &ToolContext) -> Access {
        WriteFile.access(args, ctx)
    }

    fn preview(&self, args: &WriteArgs, ctx: &ToolContext) -> Option<ToolPreview> {
        WriteFile.preview(args, ctx)
    }

    /// Refuses a path that exists.
    fn precheck(&self, args: &WriteArgs, ctx: &ToolContext) -> Result<(), ToolError> {
        let path = ctx.resolve(&args.path);
        if std::fs::symlink_metadata(&path).is_ok() {
            return Err(ToolError::Failed(format!(
                "write_file: {} already exists and was left unchanged; change it with edit_file \
                 (old_string: whole lines copied from the file)",
                ctx.display_path(&path)
            )));
        }
        WriteFile.precheck(args, ctx)
    }

    async fn run(&self, args: WriteArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Tool::precheck(self, &args, ctx)?;
        WriteFile.run(args, ctx).await
    }
}

/// A write planned by [`plan_write`].
struct PlannedWrite {
    path: std::path::PathBuf,
    shown: String,
    /// The bytes on disk before the write, when the file exists.
    existing: Option<Vec<u8>>,
    stored: Stored,
}

/// The write checked against the file on disk, up to the bytes it would store: every refusal of
/// the call (a directory, a file not read in this session or changed since, an encoding that
/// cannot hold the content). Shared by the precheck, the preview and the run.
fn plan_write(args: &WriteArgs, ctx: &ToolContext) -> Result<PlannedWrite, ToolError> {
    let path = ctx.resolve(&args.path);
    let shown = ctx.display_path(&path);
    let existing = match std::fs::metadata(&path) {
        Ok(meta) if meta.is_dir() => {
            return Err(ToolError::Failed(format!("write_file: {shown} is a directory; give a file path")));
        }
        Ok(_) => {
            let (bytes, _) = read_limited(&path, MAX_READ_BYTES).map_err(|e| {
                ToolError::Failed(format!("write_file: cannot read {shown}: {}", io_reason(&e)))
            })?;
            check_fresh(ctx, &path, &shown, &bytes, "write_file")?;
            Some(bytes)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(ToolError::Failed(format!("write_file: cannot access {shown}: {}", io_reason(&e))));
        }
    };
    let stored = match &existing {
        Some(old) => stored_as_before(old, &args.content).map_err(|reason| {
            ToolError::Failed(format!("write_file: {shown} was left unchanged: {reason}"))
        })?,
        None => Stored { bytes: args.content.as_bytes().to_vec(), old_text: None, kept: Vec::new() },
    };
    Ok(PlannedWrite { path, shown, existing, stored })
}

/// The bytes to write over an existing file, and what was kept of its form.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Stored {
    /// What goes on disk.
    pub bytes: Vec<u8>,
    /// The old content as text, when it was text.
    pub old_text: Option<String>,
    /// What of the old form was kept (`UTF-8 with BOM`, `CRLF line endings`), for the summary.
    pub kept: Vec<&'static str>,
}

/// `content` stored the way `old` (the bytes on disk) is: in its encoding (BOM included; a BOM
/// character at the start of `content` is not doubled) and with its line endings (CRLF when the
/// file mostly uses CRLF, LF when it uses LF; a file with no line break imposes none). A binary
/// file is replaced by `content` as UTF-8. `Err` when the file's encoding cannot represent
/// `content`.
pub(crate) fn stored_as_before(old: &[u8], content: &str) -> Result<Stored, String> {
    let decoded = match decode(old) {
        Decoded::Text(decoded) => decoded,
        Decoded::Binary { .. } => {
            return Ok(Stored { bytes: content.as_bytes().to_vec(), old_text: None, kept: Vec::new() });
        }
    };
    let mut kept = Vec::new();
    let text = match line_ending(&decoded.text) {
        LineEnding::Crlf => {
            kept.push("CRLF line endings");
            to_crlf(content)
        }
        LineEnding::Lf if decoded.text.contains('\n') => content.replace("\r\n", "\n"),
        LineEnding::Lf => content.to_string(),
    };
    let text = match decoded.encoding {
        TextEncoding::Utf8 => text,
        TextEncoding::Utf8Bom
        | TextEncoding::Utf16LeBom
        | TextEncoding::Utf16BeBom
        | TextEncoding::Windows1252 => {
            kept.insert(0, decoded.encoding.name());
            text.strip_prefix('\u{FEFF}').map(str::to_string).unwrap_or(text)
        }
    };
    let bytes = encode(&text, decoded.encoding).map_err(|error| {
        format!(
            "it is stored as {} and {error}; write only characters that encoding can hold, or convert \
             the file first (e.g. `iconv -f WINDOWS-1252 -t UTF-8` in shell) and read it again",
            decoded.encoding.name()
        )
    })?;
    Ok(Stored { bytes, old_text: Some(decoded.text), kept })
}

/// A warning when `new` drops most of `old` (an existing text file the session has seen): when
/// `old` has at least [`SHRINK_MIN_LINES`] non-empty lines and fewer than half of them are still
/// in `new` (compared without trailing whitespace, each new line matching one old line at most).
/// The write still happens; the warning lets a model that overwrote a file by mistake undo it.
pub(crate) fn shrink_warning(old: &str, new: &str) -> Option<String> {
    let old_lines: Vec<&str> = old.lines().map(str::trim_end).filter(|line| !line.is_empty()).collect();
    if old_lines.len() < SHRINK_MIN_LINES {
        return None;
    }
    let mut available: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for line in new.lines().map(str::trim_end).filter(|line| !line.is_empty()) {
        *available.entry(line).or_default() += 1;
    }
    let new_count: usize = available.values().sum();
    let kept = old_lines
        .iter()
        .filter(|line| match available.get_mut(*line) {
            Some(left) if *left > 0 => {
                *left -= 1;
                true
            }
            Some(_) | None => false,
        })
        .count();
    let total = old_lines.len();
    (kept * 2 < total).then(|| {
        format!(
            "warning: this write removed {} of the {total} lines the file had (kept {kept}; the new content has \
             {new_count} non-empty lines); if that was not intended, restore them: the previous content was \
             shown when you read it.",
            total - kept
        )
    })
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
pub fn unified_diff(old: &str, new: &str, label: &str, max_chars: usize) -> String {
    counted_diff(old, new, label, max_chars).0
}

/// [`unified_diff`], with the lines added and removed over the whole change (the diff may be cut;
/// the counts never are), the file named `label`.
pub fn counted_diff(old: &str, new: &str, label: &str, max_chars: usize) -> (String, FileLines) {
    let diff = similar::TextDiff::from_lines(old, new);
    let mut lines = FileLines { path: label.to_string(), added: 0, removed: 0 };
    for change in diff.iter_all_changes() {
        match change.tag() {
            similar::ChangeTag::Insert => lines.added = lines.added.saturating_add(1),
            similar::ChangeTag::Delete => lines.removed = lines.removed.saturating_add(1),
            similar::ChangeTag::Equal => {}
        }
    }
    let text = diff
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{label}"), &format!("b/{label}"))
        .to_string()
        .replace('\r', "");
    if text.chars().count() <= max_chars {
        (text, lines)
    } else {
        let cut: String = text.chars().take(max_chars).collect();
        let end = cut.rfind('\n').map_or(cut.len(), |i| i + 1);
        (format!("{}[diff cut at {max_chars} chars]\n", &cut[..end]), lines)
    }
}

#[cfg(test)]
#[path = "write_tests.rs"]
mod tests;
