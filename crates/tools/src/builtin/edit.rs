//! `edit_file{path, old_string, new_string, replace_all?}`: exact string replacement that leaves
//! every byte outside the replaced span as it was.
//!
//! Order: check the arguments (empty or identical strings are refused before any I/O) → resolve
//! and read the file → the [`FileTracker`](crate::FileTracker) must have seen these exact bytes →
//! decode in the file's own encoding ([`crate::files::text`]; binary or lossy text is refused) →
//! match (`old_string` as given, else with its line endings converted to the file's) → exactly one
//! match unless `replace_all` → replace, with `new_string`'s line endings converted to the file's
//! → encode back (BOM, UTF-16, Latin-1 preserved; unrepresentable characters refused) → write →
//! record the new state → unified diff. A Python file that parsed before the edit and would not
//! after it ([`crate::syntax`]) gets a warning in the result, or the edit is refused
//! ([`EditFile::strict`]).

use lathe_protocol::{FileChange, ResultView, ToolPreview};
use schemars::JsonSchema;
use serde::Deserialize;

use super::write::{check_fresh, counted_diff};
use super::{MAX_READ_BYTES, blocking, io_reason, read_limited};
use crate::context::ToolContext;
use crate::files::text::{Decoded, LineEnding, decode, encode, line_ending, to_crlf};
use crate::syntax::{Language, SyntaxError};
use crate::tool::{Access, Effect, Tool, ToolError, ToolOutput};

/// Characters of diff shown after an edit.
const MAX_DIFF_CHARS: usize = 8_000;

/// The `edit_file` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct EditFile {
    strict: bool,
}

impl EditFile {
    /// An `edit_file` for models that do not repair what they break (the local model). It refuses,
    /// leaving the file unchanged, an edit after which a file that parsed no longer does (the default
    /// makes it and warns in the result), and an edit that renames a name back while an earlier
    /// edit's rename of it is unfinished (the result points to the lines still to change instead).
    pub fn strict() -> Self {
        Self { strict: true }
    }
}

/// Arguments of `edit_file`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct EditArgs {
    /// Relative to the workspace, or absolute.
    pub path: String,
    /// Exact text to replace, including whitespace; must be unique unless replace_all.
    pub old_string: String,
    /// Replacement text.
    pub new_string: String,
    /// Replace every occurrence (default false).
    pub replace_all: Option<bool>,
}

impl Tool for EditFile {
    type Args = EditArgs;

    fn name(&self) -> &'static str {
        "edit_file"
    }

    fn description(&self) -> &'static str {
        "Replace an exact string in a file you have read. old_string must match exactly (whitespace \
         included) and be unique unless replace_all is true. Returns a diff."
    }

    fn effect(&self) -> Effect {
        Effect::Mutating
    }

    fn access(&self, args: &EditArgs, ctx: &ToolContext) -> Access {
        Access::Write(vec![ctx.resolve(&args.path)])
    }

    /// The diff of the file on disk to the file as the call would write it. `None` when the call
    /// would fail ([`Tool::precheck`] refuses it) or the file is too large to preview.
    fn preview(&self, args: &EditArgs, ctx: &ToolContext) -> Option<ToolPreview> {
        let planned = self.plan_edit(args, ctx).ok()?;
        if planned.decoded.text.len() as u64 > super::preview::MAX_PREVIEW_BYTES {
            return None;
        }
        Some(super::preview::diff(
            ctx,
            &args.path,
            &planned.decoded.text,
            &planned.new_text,
            FileChange::Edit,
        ))
    }

    /// Every refusal of [`Tool::run`] but the strict profile's parse check.
    fn precheck(&self, args: &EditArgs, ctx: &ToolContext) -> Result<(), ToolError> {
        self.plan_edit(args, ctx).map(|_| ())
    }

    async fn run(&self, args: EditArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let Planned { path, shown, decoded, plan, lines, mut new_text, mut trimmed } =
            self.plan_edit(&args, ctx)?;
        // Where the replacement starts: the text before it is unchanged.
        let edited_at = decoded.text.find(&plan.old).unwrap_or(0);
        let (mut broken, mut unreachable) = checked(ctx, &path, &decoded.text, &new_text, edited_at).await?;
        // A definition put inside the function above it, after its return: the strict edit_file
        // makes it that function's sibling when the result is then clean (see `edit_indent`).
        let bodiless = super::edit_indent::definition_without_body(&plan.old, &plan.new);
        let nested = self.strict
            && !bodiless
            && !args.replace_all.unwrap_or(false)
            && (broken.is_some() || unreachable.is_some());
        if let Some(sibling) =
            nested.then(|| super::edit_indent::as_sibling(&decoded.text, &plan.old, &plan.new)).flatten()
        {
            let text = decoded.text.replacen(&plan.old, &sibling, 1);
            if let (None, None) = checked(ctx, &path, &decoded.text, &text, edited_at).await? {
                new_text = text;
                (broken, unreachable) = (None, None);
                let note = "new_string put the new definition inside the one above it, after its return, \
                            where it would never run; it was dedented to sit beside that one instead.";
                trimmed = Some(trimmed.map_or(note.to_string(), |before| format!("{before}\n{note}")));
            }
        }
        let body = if bodiless {
            " new_string must also hold the new definition's body (its indented lines)."
        } else {
            ""
        };
        if let (Some((language, error)), true) = (&broken, self.strict) {
            return Err(ToolError::Failed(format!(
                "edit_file: {shown} was left unchanged: after this edit it would not parse as {} ({error}). \
                 new_string must be whole lines with the file's indentation.{body}",
                language.name()
            )));
        }
        if let (Some((_, found)), true) = (&unreachable, self.strict) {
            return Err(ToolError::Failed(format!(
                "edit_file: {shown} was left unchanged: after this edit, line {}: {}. A new top-level \
                 function or class starts at column 0 (no indentation).{body}",
                found.line, found.what
            )));
        }
        let new_bytes = encode(&new_text, decoded.encoding)
            .map_err(|e| ToolError::Failed(format!("edit_file: {shown} was left unchanged: {e}")))?;
        if let Some(editor) = &ctx.editor {
            editor.write(&path, new_text.clone()).await.map_err(|e| {
                ToolError::Failed(format!("edit_file: the editor could not write {shown}: {e}"))
            })?;
        } else {
            let target = path.clone();
            let to_write = new_bytes.clone();
            blocking(ctx, move || std::fs::write(&target, &to_write)).await?.map_err(|e| {
                ToolError::Failed(format!("edit_file: cannot write {shown}: {}", io_reason(&e)))
            })?;
        }
        let mtime = tokio::fs::metadata(&path).await.ok().and_then(|m| m.modified().ok());
        ctx.files.record(&path, &new_bytes, mtime);
        let (diff, change) = counted_diff(&decoded.text, &new_text, &shown, MAX_DIFF_CHARS);
        let what = if lines.len() == 1 {
            "1 occurrence".to_string()
        } else {
            format!("{} occurrences", lines.len())
        };
        let mut text = format!("Edited {shown}: replaced {what}.\n{diff}");
        let view = ResultView::Diff { path: shown.clone(), unified: diff };
        if let Some(note) = trimmed {
            text.push_str(&format!("\n{note}"));
        }
        if let Some((language, error)) = broken {
            text.push_str(&format!(
                "\nWarning: {shown} no longer parses as {} ({error}); it did before this edit.",
                language.name()
            ));
        }
        if let Some((_, found)) = unreachable {
            text.push_str(&format!("\nWarning: {shown} line {}: {}.", found.line, found.what));
        }
        let leftovers = super::edit_hint::leftover_names(&plan.old, &plan.new, &new_text);
        if let Some(note) = super::edit_hint::leftover_note(&leftovers, &new_text) {
            text.push_str(&format!("\n{note}"));
        }
        for name in leftovers {
            ctx.files.note_leftover(crate::files::LeftoverName {
                path: path.clone(),
                shown: shown.clone(),
                name: name.to_string(),
                edit: (plan.old.clone(), plan.new.clone()),
            });
        }
        Ok(ToolOutput { view: Some(view), change: Some(change), ..ToolOutput::text(text) })
    }
}

/// Whether `after` (the file `path` after an edit made at byte `edited_at` of `before`) breaks its
/// parse, or else adds unreachable code ([`crate::syntax`]).
async fn checked(
    ctx: &ToolContext,
    path: &std::path::Path,
    before: &str,
    after: &str,
    edited_at: usize,
) -> Result<(Option<(Language, SyntaxError)>, Option<(Language, SyntaxError)>), ToolError> {
    let (path, before, after) = (path.to_path_buf(), before.to_string(), after.to_string());
    blocking(ctx, move || {
        let broken = crate::syntax::broken_by_edit(&path, &before, &after, edited_at);
        let unreachable =
            broken.is_none().then(|| crate::syntax::unreachable_by_edit(&path, &before, &after));
        (broken, unreachable.flatten())
    })
    .await
}

impl EditFile {
    /// The edit checked against the file on disk, up to the text it would write: every refusal
    /// of the call but the strict profile's parse check. Shared by [`Tool::precheck`] (before the
    /// user is asked), [`Tool::preview`] (the diff shown is the one the call would make) and
    /// [`Tool::run`].
    fn plan_edit(&self, args: &EditArgs, ctx: &ToolContext) -> Result<Planned, ToolError> {
        let path = ctx.resolve(&args.path);
        let shown = ctx.display_path(&path);
        if args.old_string.is_empty() {
            return Err(ToolError::Failed(format!(
                "edit_file: old_string is empty; include the text to replace (to create {shown} use write_file)"
            )));
        }
        if args.old_string == args.new_string {
            return Err(ToolError::Failed(
                "edit_file: old_string and new_string are identical; nothing would change. Put the changed \
                 text in new_string (to add lines, new_string is old_string plus the new lines)."
                    .to_string(),
            ));
        }
        let meta = std::fs::metadata(&path).map_err(|e| {
            ToolError::Failed(match e.kind() {
                std::io::ErrorKind::NotFound => {
                    format!("edit_file: {shown} does not exist; create it with write_file")
                }
                _ => format!("edit_file: cannot access {shown}: {}", io_reason(&e)),
            })
        })?;
        if meta.is_dir() {
            return Err(ToolError::Failed(format!("edit_file: {shown} is a directory")));
        }
        let (bytes, cut) = read_limited(&path, MAX_READ_BYTES)
            .map_err(|e| ToolError::Failed(format!("edit_file: cannot read {shown}: {}", io_reason(&e))))?;
        if cut {
            return Err(ToolError::Failed(format!(
                "edit_file: {shown} is larger than {MAX_READ_BYTES} bytes; edit it with shell tools"
            )));
        }
        check_fresh(ctx, &path, &shown, &bytes, "edit_file")?;
        let decoded = match decode(&bytes) {
            Decoded::Text(text) => text,
            Decoded::Binary { reason } => {
                return Err(ToolError::Failed(format!(
                    "edit_file: {shown} looks like a binary file ({reason}); it cannot be edited as text"
                )));
            }
        };
        if decoded.lossy {
            return Err(ToolError::Failed(format!(
                "edit_file: {shown} has bytes that are not valid {}; editing it as text would corrupt \
                 them, so it was left unchanged (use shell tools for byte-level edits)",
                decoded.encoding.label()
            )));
        }
        let replace_all = args.replace_all.unwrap_or(false);
        let plan = plan_replacement(&decoded.text, &args.old_string, &args.new_string).map_err(|miss| {
            ToolError::Failed(format!("edit_file: old_string was not found in {shown}. {miss}"))
        })?;
        let lines = match_lines(&decoded.text, &plan.old);
        if lines.len() > 1 && !replace_all {
            return Err(ToolError::Failed(format!(
                "edit_file: old_string occurs {} times in {shown} (lines {}); add surrounding lines to \
                 make it unique, or set replace_all",
                lines.len(),
                join_numbers(&lines)
            )));
        }
        let mut plan = plan;
        let trimmed = super::edit_hint::copied_tail(&decoded.text, &plan.old, &plan.new).map(|cut| {
            plan.new.truncate(cut);
            // The copy started on a new line: that line break belonged to it unless old_string
            // ends with one too.
            if !plan.old.ends_with('\n') && plan.new.ends_with('\n') {
                plan.new.pop();
                if plan.new.ends_with('\r') {
                    plan.new.pop();
                }
            }
            "new_string ended with a copy of the lines that follow old_string; they were kept once, not \
             duplicated."
        });
        if plan.new == plan.old {
            return Err(ToolError::Failed(format!(
                "edit_file: {shown} was left unchanged: without the copy of the lines that follow it, \
                 new_string is old_string"
            )));
        }
        if let Some(lines) = super::edit_hint::duplicated_insertion(&decoded.text, &plan.old, &plan.new) {
            let at_end = super::edit_hint::unique_last_line(&decoded.text).map_or(String::new(), |last| {
                format!(
                    " To add code at the end of {shown}, old_string is its last line, {}, and new_string is \
                     that line followed by the new code.",
                    serde_json::Value::String(last.to_string())
                )
            });
            return Err(ToolError::Failed(format!(
                "edit_file: {shown} was left unchanged: new_string adds lines that are already next to \
                 old_string, so the edit would duplicate them:\n{lines}\nTo change a line, put it in \
                 old_string and its new text in new_string; to add code, new_string is old_string plus only \
                 the new lines.{at_end}"
            )));
        }
        let mut trimmed = trimmed.map(str::to_string);
        // A change written as an insertion (the changed lines put above the old ones): the strict
        // edit_file makes it the change it means, and says so.
        let rewritten = if self.strict && !replace_all {
            super::edit_hint::change_written_as_insertion(&decoded.text, &plan.old, &plan.new).and_then(
                |pairs| Some((super::edit_hint::as_change(&decoded.text, &plan.old, &pairs)?, pairs)),
            )
        } else {
            None
        };
        let new_text = match rewritten {
            Some((text, pairs)) => {
                let changed: Vec<String> =
                    pairs.iter().map(|(from, to)| format!("`{}` → `{}`", from.trim(), to.trim())).collect();
                trimmed = Some(format!(
                    "new_string repeated the lines below old_string with changes; those lines were changed \
                     instead of copied: {}.",
                    changed.join(", ")
                ));
                text
            }
            None if replace_all => decoded.text.replace(&plan.old, &plan.new),
            None => decoded.text.replacen(&plan.old, &plan.new, 1),
        };
        let undone = if self.strict { ctx.files.undone_rename(&path, &plan.old, &plan.new) } else { None };
        let still_used = undone.map(|name| (super::edit_hint::lines_using(&decoded.text, &name), name));
        if let Some((uses, name)) = still_used
            && !uses.is_empty()
        {
            let renamed_to =
                super::edit_hint::renamed(&plan.old, &plan.new).map_or("the new name", |(from, _)| from);
            return Err(ToolError::Failed(format!(
                "edit_file: {shown} was left unchanged: this edit would undo your rename of `{name}` to \
                 `{renamed_to}`. Finish the rename instead: `{name}` is still used in {shown}:\n{}\nChange \
                 those lines to use `{renamed_to}`.",
                super::edit_hint::listed_lines(&uses)
            )));
        }
        Ok(Planned { path, shown, decoded, plan, lines, new_text, trimmed })
    }
}

/// An edit planned by [`EditFile::plan_edit`].
struct Planned {
    path: std::path::PathBuf,
    shown: String,
    decoded: crate::files::text::DecodedText,
    plan: Replacement,
    /// Where the occurrences start (1-based lines).
    lines: Vec<usize>,
    new_text: String,
    /// A note on how the edit was read: lines copied from below `old_string` kept once, or a
    /// change written as an insertion made in place.
    trimmed: Option<String>,
}

/// The strings to search for and insert, in the file's line-ending convention.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Replacement {
    pub old: String,
    pub new: String,
}

/// Finds how `old` occurs in `text`: as given, else with its line endings converted to the file's.
/// `new` gets the same treatment, so a CRLF file never gains LF-only lines. On no match, the error
/// text shows the nearest candidates.
pub(crate) fn plan_replacement(text: &str, old: &str, new: &str) -> Result<Replacement, String> {
    let ending = line_ending(text);
    let (old_conv, new_conv) = match ending {
        LineEnding::Crlf => (to_crlf(old), to_crlf(new)),
        LineEnding::Lf => (old.replace("\r\n", "\n"), new.replace("\r\n", "\n")),
    };
    if text.contains(old) {
        let new = match ending {
            LineEnding::Crlf => new_conv,
            LineEnding::Lf => new.to_string(),
        };
        return Ok(Replacement { old: old.to_string(), new });
    }
    if old_conv != old && text.contains(&old_conv) {
        return Ok(Replacement { old: old_conv, new: new_conv });
    }
    Err(super::edit_hint::nearest_candidates(text, old))
}

/// 1-based line numbers where each (non-overlapping) occurrence of `needle` starts.
fn match_lines(text: &str, needle: &str) -> Vec<usize> {
    let mut lines = Vec::new();
    let mut line = 1;
    let mut scanned = 0;
    for (at, _) in text.match_indices(needle) {
        line += text[scanned..at].matches('\n').count();
        scanned = at;
        lines.push(line);
    }
    lines
}

fn join_numbers(numbers: &[usize]) -> String {
    let shown: Vec<String> = numbers.iter().take(20).map(usize::to_string).collect();
    let mut out = shown.join(", ");
    if numbers.len() > 20 {
        out.push_str(&format!(", … ({} more)", numbers.len() - 20));
    }
    out
}

#[cfg(test)]
#[path = "edit_tests.rs"]
mod tests;
