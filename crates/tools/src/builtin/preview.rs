//! What `edit_file` and `write_file` show before they run: the unified diff the call would make to
//! the file on disk ([`ToolPreview::Diff`]), for the permission prompt.
//!
//! A preview reads the file the call names, as the call itself would, and writes nothing. It is
//! made only for a regular file of at most [`MAX_PREVIEW_BYTES`] that decodes as text; anything
//! else (a directory, a FIFO, a binary or unreadable file) gets no preview, and the front end shows
//! the arguments instead.

use std::path::Path;

use lathe_protocol::{FileChange, ToolPreview};

use super::read_limited;
use super::write::unified_diff;
use crate::context::ToolContext;
use crate::files::text::{Decoded, decode};

/// Largest file a preview reads, in bytes.
pub const MAX_PREVIEW_BYTES: u64 = 8 * 1024 * 1024;

/// Characters of diff a preview or a result view carries at most.
pub const MAX_PREVIEW_DIFF_CHARS: usize = 64_000;

/// What `path` holds now: `Some(None)` when nothing is there, `Some(Some(text))` for a text file
/// (decoded in its own encoding), `None` when it cannot be shown as text.
pub(crate) fn current_text(path: &Path) -> Option<Option<String>> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(None),
        Ok(meta) if meta.is_file() && meta.len() <= MAX_PREVIEW_BYTES => {}
        Ok(_) | Err(_) => return None,
    }
    let (bytes, cut) = read_limited(path, MAX_PREVIEW_BYTES).ok()?;
    if cut {
        return None;
    }
    match decode(&bytes) {
        Decoded::Text(text) if !text.lossy => Some(Some(text.text)),
        Decoded::Text(_) | Decoded::Binary { .. } => None,
    }
}

/// The preview of changing the file at `path` (as the model named it) from `old` to `new`.
pub(crate) fn diff(ctx: &ToolContext, path: &str, old: &str, new: &str, change: FileChange) -> ToolPreview {
    let shown = ctx.display_path(&ctx.resolve(path));
    let unified =
        unified_diff(&old.replace("\r\n", "\n"), &new.replace("\r\n", "\n"), &shown, MAX_PREVIEW_DIFF_CHARS);
    ToolPreview::Diff { path: shown, unified, change }
}

#[cfg(test)]
#[path = "preview_tests.rs"]
mod tests;
