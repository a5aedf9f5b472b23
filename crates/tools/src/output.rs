//! Keeping tool output within the in-context budget: [`cap_output`] (head + tail, full text spilled
//! to a file the model can read back) and [`clean_terminal`] (ANSI escapes and `\r` progress bars).
//!
//! Shared by every tool, and later by MCP tools, so every oversized result looks the same to the
//! model: the first part, a marker naming how much was left out and where the whole text is, and
//! the last part.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Keeps `text` within `max_chars` characters (Unicode scalar values).
///
/// When it is longer, the full text is written to a new file in `spill_dir` (created if needed),
/// named after `label` (e.g. `shell`), and the returned text is the head (about 40% of the budget)
/// and the tail (the rest), cut at line boundaries where possible, with a marker line between them
/// giving the number of characters left out and the spill path. Returns the text to show and the
/// spill path (`None` when nothing was cut, or when writing the spill file failed — the marker then
/// says so).
pub fn cap_output(text: &str, max_chars: usize, spill_dir: &Path, label: &str) -> (String, Option<PathBuf>) {
    let total = text.chars().count();
    if total <= max_chars {
        return (text.to_string(), None);
    }
    let spill = spill(text, spill_dir, label);
    let budget = max_chars.saturating_sub(300).max(max_chars / 2);
    let head_chars = budget * 2 / 5;
    let tail_chars = budget - head_chars;
    let head = head_part(text, head_chars);
    let tail = tail_part(text, tail_chars);
    let omitted = total - head.chars().count() - tail.chars().count();
    let lines_total = text.lines().count();
    let where_ = match &spill {
        Ok(path) => format!(
            "full output ({total} chars, {lines_total} lines) saved to {}; read it with read_file (offset/limit) or grep",
            path.display()
        ),
        Err(e) => format!("full output ({total} chars) could not be saved: {e}"),
    };
    let mut out = String::with_capacity(max_chars + 200);
    out.push_str(head);
    if !head.ends_with('\n') && !head.is_empty() {
        out.push('\n');
    }
    out.push_str(&format!("\n[... {omitted} chars omitted; {where_} ...]\n\n"));
    out.push_str(tail);
    (out, spill.ok())
}

/// Writes `text` to a fresh file `<spill_dir>/<label>-<unix ms>-<pid>-<n>.txt`.
pub fn spill(text: &str, spill_dir: &Path, label: &str) -> std::io::Result<PathBuf> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    std::fs::create_dir_all(spill_dir)?;
    let ms = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let safe: String = label
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
        .collect();
    let path = spill_dir.join(format!("{safe}-{ms}-{}-{n}.txt", std::process::id()));
    std::fs::write(&path, text)?;
    Ok(path)
}

/// The first `max_chars` characters, shortened to end at a newline if one is in the second half.
fn head_part(text: &str, max_chars: usize) -> &str {
    let end = text.char_indices().nth(max_chars).map_or(text.len(), |(i, _)| i);
    let cut = &text[..end];
    match cut.rfind('\n') {
        Some(nl) if nl >= end / 2 => &text[..=nl],
        _ => cut,
    }
}

/// The last `max_chars` characters, shortened to start after a newline if one is in the first half.
fn tail_part(text: &str, max_chars: usize) -> &str {
    let total = text.chars().count();
    let skip = total.saturating_sub(max_chars);
    let start = text.char_indices().nth(skip).map_or(text.len(), |(i, _)| i);
    let cut = &text[start..];
    match cut.find('\n') {
        Some(nl) if nl < cut.len() / 2 && nl + 1 < cut.len() => &cut[nl + 1..],
        _ => cut,
    }
}

/// Cleans terminal output for the model: on each line, only the text after the last `\r` is kept
/// (progress bars redraw with `\r`; a CRLF line ending is just a line ending), then ANSI escape
/// sequences are removed (strip-ansi-escapes). Tabs and newlines are kept.
pub fn clean_terminal(raw: &[u8]) -> String {
    let mut out: Vec<u8> = Vec::with_capacity(raw.len());
    let mut lines = raw.split(|&b| b == b'\n').peekable();
    while let Some(line) = lines.next() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let visible = match line.iter().rposition(|&b| b == b'\r') {
            Some(cr) => &line[cr + 1..],
            None => line,
        };
        // strip-ansi-escapes drops C0 controls, tabs included: strip between the tabs.
        let mut first = true;
        for piece in visible.split(|&b| b == b'\t') {
            if !first {
                out.push(b'\t');
            }
            first = false;
            if piece.contains(&0x1B) || piece.iter().any(|&b| b < 0x20 || b == 0x7F) {
                out.extend_from_slice(&strip_ansi_escapes::strip(piece));
            } else {
                out.extend_from_slice(piece);
            }
        }
        if lines.peek().is_some() {
            out.push(b'\n');
        }
    }
    match String::from_utf8(out) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

#[cfg(test)]
#[path = "output_tests.rs"]
mod tests;
