//! `view`: a folder lists its entries (path, size in bytes, type, description), a file shows its
//! frontmatter as one summary line and then its body with line numbers (`     1\t…`, as
//! Anthropic's memory tool does). The model sees virtual paths only.

use std::fmt::Write;

use super::ops::{read_current, read_existing};
use super::paths::{self, ViewTarget};
use super::{Entry, INDEX_FILE, MemoryError, Roots, Scope, clean_body, clean_line, store};

/// What `path` holds, for the model: a listing for `/memories` or a folder, the numbered body
/// for a file, limited to `view_range` (`[start, end]`, 1-based, end `-1` = to the end).
pub fn view(roots: &Roots, path: &str, view_range: Option<&[i64]>) -> Result<String, MemoryError> {
    view_visible(roots, path, view_range, &|_| true)
}

/// [`view`], listing only the entries `visible` accepts (given `<scope>/<file>`, as `Memory(…)`
/// rules see it): a folder listing never shows an entry a deny rule keeps from being read.
pub fn view_visible(
    roots: &Roots,
    path: &str,
    view_range: Option<&[i64]>,
    visible: &dyn Fn(&str) -> bool,
) -> Result<String, MemoryError> {
    match paths::resolve_view(roots, path)? {
        ViewTarget::Root => {
            let mut out = String::from(
                "/memories: long-term memory. user/ = about the user, every project; project/ = this \
                 repository, private; shared/ = committed in the repository, read only.\n",
            );
            for scope in Scope::ALL {
                if roots.root(scope).is_some() {
                    out.push('\n');
                    list(roots, scope, "", visible, &mut out);
                }
            }
            Ok(out)
        }
        ViewTarget::Dir { scope, dir, path: real } => {
            if !dir.is_empty() && !real.is_dir() {
                return Err(MemoryError::NotFound { path: path.to_string() });
            }
            let mut out = String::new();
            list(roots, scope, &dir, visible, &mut out);
            Ok(out)
        }
        ViewTarget::File(target) => {
            let not_found = || MemoryError::NotFound { path: path.to_string() };
            let (header, body) = if target.file == INDEX_FILE {
                let text = read_current(&target.path)?.ok_or_else(not_found)?;
                (format!("{} (the index Lathe maintains)", target.virtual_path()), text)
            } else {
                let (_, entry) = read_existing(&target)?.ok_or_else(not_found)?;
                (summary(&entry), entry.body)
            };
            numbered(&header, &body, view_range)
        }
    }
}

/// Appends the listing of `dir` (relative, empty for the root) in `scope` to `out`.
fn list(roots: &Roots, scope: Scope, dir: &str, visible: &dyn Fn(&str) -> bool, out: &mut String) {
    let loaded = store::load_scope(roots, scope);
    let prefix = if dir.is_empty() { String::new() } else { format!("{dir}/") };
    let (entries, hidden): (Vec<&Entry>, Vec<&Entry>) = loaded
        .entries
        .iter()
        .filter(|entry| entry.file.starts_with(&prefix))
        .partition(|entry| visible(&format!("{scope}/{}", entry.file)));
    let read_only = if scope == Scope::Shared { ", read only" } else { "" };
    let _ = writeln!(out, "/memories/{scope}/{prefix} ({} entries{read_only})", entries.len());
    if !hidden.is_empty() {
        let _ = writeln!(out, "  ({} more not shown: a deny rule keeps them from being read)", hidden.len());
    }
    if entries.is_empty() {
        out.push_str("  (no memories yet)\n");
    }
    for entry in entries {
        let bytes = std::fs::metadata(&entry.path).map_or(0, |meta| meta.len());
        let broken = if entry.warning.is_some() { " (frontmatter missing or broken)" } else { "" };
        let _ = writeln!(
            out,
            "  {}  {bytes} bytes  [{}] {}{broken}",
            clean_line(&entry.virtual_path()),
            entry.meta.kind,
            clean_line(&entry.meta.description)
        );
    }
    let root = roots.root(scope).map(|root| root.display().to_string()).unwrap_or_default();
    for warning in loaded.warnings.iter().filter(|warning| !root.is_empty() && warning.starts_with(&root)) {
        let _ = writeln!(out, "  warning: /memories/{scope}{}", clean_line(&warning[root.len()..]));
    }
}

/// The one-line frontmatter summary shown above a file's body.
fn summary(entry: &Entry) -> String {
    let meta = &entry.meta;
    let mut line = format!(
        "{} — [{}] {}: {}",
        entry.virtual_path(),
        meta.kind,
        clean_line(&meta.name),
        clean_line(&meta.description)
    );
    let _ = write!(line, " (source: {}", if meta.source.is_empty() { "unknown" } else { &meta.source });
    if !meta.modified.is_empty() {
        let _ = write!(line, "; modified {}", meta.modified);
    }
    let _ = write!(line, "; used {} times", meta.use_count);
    if let Some(expires) = &meta.expires {
        let _ = write!(line, "; expires {expires}");
    }
    if !meta.evidence.is_empty() {
        let _ = write!(line, "; evidence: {}", meta.evidence.join(", "));
    }
    line.push(')');
    let mut line = clean_line(&line);
    if entry.warning.is_some() {
        line.push_str(" [its frontmatter is missing or broken; saving it again writes a fresh one]");
    }
    line
}

fn numbered(header: &str, body: &str, view_range: Option<&[i64]>) -> Result<String, MemoryError> {
    let body = clean_body(body);
    let lines: Vec<&str> = body.lines().collect();
    let (start, end) = range(view_range, lines.len())?;
    let mut out = format!("{}\n", clean_line(header));
    for (number, line) in lines.iter().enumerate().take(end).skip(start - 1) {
        let _ = writeln!(out, "{:>6}\t{line}", number + 1);
    }
    Ok(out)
}

/// The 1-based inclusive line range to show, checked against `count` lines.
fn range(view_range: Option<&[i64]>, count: usize) -> Result<(usize, usize), MemoryError> {
    let Some(range) = view_range else { return Ok((1, count)) };
    let invalid =
        |why: String| MemoryError::InvalidArgument { message: format!("view_range {range:?} {why}") };
    let [start, end] = range else {
        return Err(invalid("must be two numbers, [start, end]".to_string()));
    };
    let last = count.max(1) as i64;
    if *start < 1 || *start > last {
        return Err(invalid(format!("starts outside the file, which has {count} lines")));
    }
    let end = if *end == -1 { count as i64 } else { *end };
    if end < *start {
        return Err(invalid("ends before it starts (use -1 for the end of the file)".to_string()));
    }
    Ok((*start as usize, end.min(count as i64) as usize))
}
