//! `read_file{path, offset?, limit?, column?}`: a file as `cat -n`-style numbered lines, an image
//! as image content, a directory as a listing.
//!
//! Order: resolve the path → `stat` (a directory is listed; a missing path is an error) → images by
//! extension, confirmed by signature and checked by decoding ([`crate::files::image`]; one that
//! fails becomes a text note, so an image no provider can decode never enters the conversation) →
//! read the bytes on the blocking pool (FIFOs and devices included, at most
//! [`MAX_READ_BYTES`](super::MAX_READ_BYTES)) → decode ([`crate::files::text`]; binary is refused)
//! → record the state in the [`FileTracker`](crate::FileTracker) (a partial read counts) → render
//! the requested lines.
//!
//! Rendering, so that the model can reproduce the file exactly: each line is shown up to
//! [`MAX_LINE_CHARS`] characters; a longer one ends with a note giving the column to read on from,
//! and `column` (a 1-based character position) starts the first line read there, so one long
//! line (minified code) can be paged through. A file that does not end with a newline gets the
//! marker `\ No newline at end of file` after its last line (as in a diff); CRLF line endings, a
//! BOM or another encoding are named in a footer. The whole is capped at 256 KiB with a footer that
//! says how to read on.

use base64::Engine as _;
use lathe_protocol::{Content, ResultView};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{MAX_READ_BYTES, blocking, io_reason, read_limited};
use crate::context::ToolContext;
use crate::files::image;
use crate::files::text::{Decoded, LineEnding, TextEncoding, decode, line_ending};
use crate::tool::{Access, Effect, Tool, ToolError, ToolOutput};

/// Lines returned when `limit` is not given.
pub const DEFAULT_LIMIT: usize = 2000;
/// Characters kept of one line.
pub const MAX_LINE_CHARS: usize = 2000;
/// Cap on the rendered output, in bytes.
pub const MAX_OUTPUT_BYTES: usize = 256 * 1024;
/// Largest image returned as image content, in bytes.
pub const MAX_IMAGE_BYTES: u64 = image::MAX_IMAGE_BYTES;
/// The marker after a last line that has no newline.
pub const NO_FINAL_NEWLINE: &str = "\\ No newline at end of file";

/// The `read_file` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadFile;

/// Arguments of `read_file`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadArgs {
    /// File or directory (relative to the workspace, or absolute).
    pub path: String,
    /// First line to read, 1-based.
    #[schemars(range(min = 1))]
    pub offset: Option<u64>,
    /// Number of lines to read (default 2000).
    #[schemars(range(min = 1))]
    pub limit: Option<u64>,
    /// 1-based column the first line starts at (to page through a long line).
    #[schemars(range(min = 1))]
    pub column: Option<u64>,
}

impl Tool for ReadFile {
    type Args = ReadArgs;

    fn name(&self) -> &'static str {
        "read_file"
    }

    fn description(&self) -> &'static str {
        "Read a text file as numbered lines (`cat -n` style; default first 2000 lines, use offset/limit \
         for more), an image, or a directory listing. Read a file before editing or overwriting it."
    }

    fn effect(&self) -> Effect {
        Effect::ReadOnly
    }

    fn access(&self, args: &ReadArgs, ctx: &ToolContext) -> Access {
        Access::Read(vec![ctx.resolve(&args.path)])
    }

    /// The path, with the lines asked for: `src/lib.rs:10-59`, `src/lib.rs:10-`, `src/lib.rs:1-50`.
    fn summary(&self, args: &Value) -> String {
        let Some(path) = args.get("path").and_then(Value::as_str) else {
            return crate::tool::summarize_args(args);
        };
        let offset = args.get("offset").and_then(Value::as_u64);
        let limit = args.get("limit").and_then(Value::as_u64);
        let line = match (offset, limit) {
            (Some(o), Some(l)) => format!("{path}:{o}-{}", o.saturating_add(l.saturating_sub(1))),
            (Some(o), None) => format!("{path}:{o}-"),
            (None, Some(l)) => format!("{path}:1-{l}"),
            (None, None) => path.to_string(),
        };
        crate::tool::one_line(&line)
    }

    /// Reads, and offers `read N lines` (the numbered lines of the output) as the result's view.
    async fn run(&self, args: ReadArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let mut output = self.read(args, ctx).await?;
        let lines = output.text_content().lines().filter(|line| is_numbered(line)).count();
        let text = format!("read {lines} line{}", if lines == 1 { "" } else { "s" });
        output.view = Some(ResultView::Line { text });
        Ok(output)
    }
}

/// Whether `line` is a numbered line of a file (`    12\ttext`).
fn is_numbered(line: &str) -> bool {
    line.trim_start()
        .split_once('\t')
        .is_some_and(|(number, _)| !number.is_empty() && number.chars().all(|c| c.is_ascii_digit()))
}

impl ReadFile {
    async fn read(&self, args: ReadArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let path = ctx.resolve(&args.path);
        let shown = ctx.display_path(&path);
        let meta = tokio::fs::metadata(&path)
            .await
            .map_err(|e| ToolError::Failed(format!("read_file: cannot read {shown}: {}", read_reason(&e))))?;
        if meta.is_dir() {
            let root = path.clone();
            let policy = ctx.policy.clone();
            let listing = blocking(ctx, move || {
                super::list_dir::render_tree(
                    &root,
                    1,
                    super::list_dir::MAX_ENTRIES,
                    super::walk::Ignored::Skip,
                    policy,
                )
            })
            .await?;
            return Ok(ToolOutput::text(format!("{shown} is a directory:\n{listing}")));
        }
        if has_image_extension(&path) {
            if meta.len() > MAX_IMAGE_BYTES {
                return Err(ToolError::Failed(format!(
                    "read_file: {shown} is an image of {} bytes, larger than the {MAX_IMAGE_BYTES}-byte limit",
                    meta.len()
                )));
            }
            let p = path.clone();
            let bytes = blocking(ctx, move || std::fs::read(p)).await?.map_err(|e| {
                ToolError::Failed(format!("read_file: cannot read {shown}: {}", read_reason(&e)))
            })?;
            // The name only suggests an image; the bytes decide. A Git LFS pointer or an empty
            // file named .png is read as text; an image that does not decode is described, not
            // sent (an image block providers cannot decode would break every later request of
            // the session).
            if image::sniff(&bytes).is_some() {
                ctx.files.record(&path, &bytes, meta.modified().ok());
                let (bytes, checked) = blocking(ctx, move || {
                    let checked = image::check(&bytes);
                    (bytes, checked)
                })
                .await?;
                return Ok(match checked {
                    Ok(checked) => ToolOutput {
                        content: vec![Content::Image {
                            media_type: checked.media_type.to_string(),
                            data: base64::engine::general_purpose::STANDARD.encode(&bytes),
                        }],
                        ..ToolOutput::default()
                    },
                    Err(reason) => ToolOutput::text(format!(
                        "[{shown} was not shown as an image: {reason}. It is {} bytes; inspect it with shell \
                         tools (e.g. `file {shown}` or `xxd {shown} | head`) if needed]",
                        bytes.len()
                    )),
                });
            }
        }
        let p = path.clone();
        let (bytes, cut) = blocking(ctx, move || read_limited(&p, MAX_READ_BYTES))
            .await?
            .map_err(|e| ToolError::Failed(format!("read_file: cannot read {shown}: {}", read_reason(&e))))?;
        let mut decoded = match decode(&bytes) {
            Decoded::Text(text) => text,
            Decoded::Binary { reason } => {
                return Err(ToolError::Failed(format!(
                    "read_file: {shown} looks like a binary file ({} bytes): {reason}; \
                     inspect it with shell tools (e.g. `xxd | head`) if needed",
                    bytes.len()
                )));
            }
        };
        if !cut {
            ctx.files.record(&path, &bytes, meta.modified().ok());
        }
        // The editor's text (unsaved edits included) is what the model reads; the disk's bytes,
        // recorded above, are what a later write is checked against.
        if let Some(editor) = &ctx.editor {
            match editor.read(&path).await {
                Ok(text) => decoded.text = text,
                Err(error) => {
                    tracing::debug!(path = %path.display(), "the editor could not read it: {error}")
                }
            }
        }
        let offset = args.offset.unwrap_or(1).max(1) as usize;
        let limit = args.limit.map_or(DEFAULT_LIMIT, |l| l.max(1) as usize);
        let column = args.column.unwrap_or(1).max(1) as usize;
        let mut out = render_lines(&decoded.text, offset, limit, column);
        if decoded.encoding != TextEncoding::Utf8 {
            out.push_str(&format!("\n[encoding: {}]", decoded.encoding.label()));
        }
        if line_ending(&decoded.text) == LineEnding::Crlf {
            out.push_str("\n[line endings: CRLF]");
        }
        if decoded.lossy {
            out.push_str("\n[some bytes are not valid in this encoding and are shown as U+FFFD]");
        }
        if cut {
            out.push_str(&format!("\n[only the first {MAX_READ_BYTES} bytes of {shown} were read]"));
        }
        Ok(ToolOutput::text(out))
    }
}

/// Whether the name ends in `png`, `jpg`/`jpeg`, `gif` or `webp`.
fn has_image_extension(path: &std::path::Path) -> bool {
    path.extension().and_then(|ext| ext.to_str()).is_some_and(|ext| {
        matches!(ext.to_ascii_lowercase().as_str(), "png" | "jpg" | "jpeg" | "gif" | "webp")
    })
}

/// Renders lines `offset..offset+limit` (1-based) as `{number:>6}\t{line}`, the first of them
/// from character `column` (1-based), each cut after [`MAX_LINE_CHARS`] characters with a note
/// saying where to read on; then the [`NO_FINAL_NEWLINE`] marker when the last line was shown
/// and has no newline, and footers for the byte cap and lines left unread.
pub fn render_lines(text: &str, offset: usize, limit: usize, column: usize) -> String {
    if text.is_empty() {
        return "(empty file)".to_string();
    }
    let total = text.lines().count();
    if offset > total {
        return format!("(the file has {total} lines; offset {offset} is past the end)");
    }
    let mut out = String::new();
    let mut last = offset - 1;
    let mut capped = false;
    for (index, line) in text.lines().enumerate().skip(offset - 1).take(limit) {
        let number = index + 1;
        let start = if number == offset { column } else { 1 };
        let rendered = render_line(number, line, start);
        if out.len() + rendered.len() > MAX_OUTPUT_BYTES {
            capped = true;
            break;
        }
        out.push_str(&rendered);
        last = number;
    }
    if last == total && !capped && !text.ends_with('\n') {
        out.push_str(NO_FINAL_NEWLINE);
        out.push('\n');
    }
    if capped {
        out.push_str(&format!(
            "\n[output capped at 256 KiB after line {last} of {total}; read on with offset={}]",
            last + 1
        ));
    } else if last < total {
        out.push_str(&format!(
            "\n[showing lines {offset}-{last} of {total}; read on with offset={}]",
            last + 1
        ));
    }
    out
}

/// One numbered line from character `start` (1-based), at most [`MAX_LINE_CHARS`] characters.
fn render_line(number: usize, line: &str, start: usize) -> String {
    let mut rendered = format!("{number:>6}\t");
    let from = match line.char_indices().nth(start - 1) {
        Some((at, _)) => at,
        None if start == 1 => line.len(),
        None => {
            let chars = line.chars().count();
            rendered.push_str(&format!(
                "[line {number} has {chars} characters; column {start} is past its end]\n"
            ));
            return rendered;
        }
    };
    if start > 1 {
        rendered.push_str(&format!("[from column {start}] "));
    }
    let rest = &line[from..];
    match rest.char_indices().nth(MAX_LINE_CHARS) {
        Some((cut, _)) => {
            let end = start + MAX_LINE_CHARS;
            rendered.push_str(&rest[..cut]);
            rendered.push_str(&format!(
                " … [line cut: {} chars in total; read on with offset={number}, column={end}]",
                line.chars().count()
            ));
        }
        None => rendered.push_str(rest),
    }
    rendered.push('\n');
    rendered
}

/// Why a read failed; a missing file says how to look for the right one, or create it (a model
/// asked to create a file often reads it first; one asked about code often guesses a path).
fn read_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => {
            "it does not exist. To find a file, search with grep or list files with shell `ls`; if the task \
             is to create it, call write_file"
                .to_string()
        }
        _ => io_reason(e),
    }
}

#[cfg(test)]
#[path = "read_tests.rs"]
mod tests;
