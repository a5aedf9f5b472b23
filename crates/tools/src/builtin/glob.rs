//! `glob{pattern, path?, include_ignored?}`: files whose path (relative to the search root)
//! matches a glob, newest first.
//!
//! What is walked follows the search tools' shared rule (`walk.rs`): ignore files and hidden
//! entries are honoured unless the pattern names the entry (its literal leading directories are
//! walked even if ignored, a fully literal pattern naming an existing file finds it, a dot-entry in
//! the pattern includes hidden ones) or `include_ignored` is set; symlinks to files match like
//! files, symlinked directories are not entered (and are reported). When nothing matches, the
//! ignored files that would have matched are named, with how to include them. `*` does not cross
//! `/`; `**` does. At most [`MAX_PATHS`] paths, relative to the workspace.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use globset::{GlobBuilder, GlobMatcher};
use lathe_policy::Policy;
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::walk::{Hidden, INCLUDE_IGNORED_HINT, Ignored, Kind, linked_dirs_note, walker};
use super::{blocking, io_reason};
use crate::context::ToolContext;
use crate::tool::{Access, Effect, Tool, ToolError, ToolOutput};

/// Paths returned at most.
pub const MAX_PATHS: usize = 200;
/// Entries looked at when searching ignored files for a pattern that matched nothing.
const IGNORED_SCAN_LIMIT: usize = 50_000;

/// The `glob` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct Glob;

/// Arguments of `glob`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct GlobArgs {
    /// Glob such as "**/*.rs" or "src/*.py" (`*` stays within one directory).
    pub pattern: String,
    /// Directory to search (default: workspace).
    pub path: Option<String>,
    /// Also gitignored and hidden files.
    pub include_ignored: Option<bool>,
}

impl Tool for Glob {
    type Args = GlobArgs;

    fn name(&self) -> &'static str {
        "glob"
    }

    fn description(&self) -> &'static str {
        "Find files by glob, newest first, at most 200 paths. Skips gitignored and hidden files \
         unless the pattern names them or include_ignored; symlinked directories are not entered."
    }

    fn effect(&self) -> Effect {
        Effect::ReadOnly
    }

    fn access(&self, args: &GlobArgs, ctx: &ToolContext) -> Access {
        Access::Read(vec![args.path.as_deref().map_or_else(|| ctx.workspace.clone(), |p| ctx.resolve(p))])
    }

    async fn run(&self, args: GlobArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let root = match &args.path {
            Some(p) => ctx.resolve(p),
            None => ctx.workspace.clone(),
        };
        let shown_root = ctx.display_path(&root);
        let meta = tokio::fs::metadata(&root)
            .await
            .map_err(|e| ToolError::Failed(format!("glob: cannot search {shown_root}: {}", io_reason(&e))))?;
        if !meta.is_dir() {
            return Err(ToolError::Failed(format!("glob: {shown_root} is not a directory")));
        }
        let pattern = relative_pattern(&args.pattern, &root);
        let matcher = GlobBuilder::new(&pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| ToolError::Failed(format!("glob: invalid pattern {:?}: {e}", args.pattern)))?
            .compile_matcher();
        let hidden = if names_dot_entry(&pattern) { Hidden::Include } else { Hidden::Skip };
        let ignored = Ignored::from_flag(args.include_ignored);
        let cancel = ctx.cancel.clone();
        let walk_root = root.clone();
        let policy = ctx.policy.clone();
        let search = blocking(ctx, move || {
            let found = find(&walk_root, &pattern, &matcher, (hidden, ignored), &policy, &cancel);
            let skipped = if found.paths.is_empty() && ignored == Ignored::Skip {
                let everything = (Hidden::Include, Ignored::Include);
                let all = find(&walk_root, &pattern, &matcher, everything, &policy, &cancel);
                all.paths.into_iter().map(|(_, path)| path).collect()
            } else {
                Vec::new()
            };
            (found, skipped)
        })
        .await?;
        let (found, skipped) = search;
        let linked_note = linked_dirs_note(
            &found
                .linked_dirs
                .iter()
                .map(|(path, target)| (ctx.display_path(path), target.clone()))
                .collect::<Vec<_>>(),
        );
        let mut out = if found.paths.is_empty() {
            let mut text = format!("No files match {:?} under {shown_root}.", args.pattern);
            if !skipped.is_empty() {
                let names: Vec<String> = skipped.iter().take(5).map(|path| ctx.display_path(path)).collect();
                let more = if skipped.len() > 5 {
                    format!(", … ({} more)", skipped.len() - 5)
                } else {
                    String::new()
                };
                text.push_str(&format!(
                    " {} ignored or hidden file{} would match ({}{more}); {INCLUDE_IGNORED_HINT}.",
                    skipped.len(),
                    if skipped.len() == 1 { "" } else { "s" },
                    names.join(", ")
                ));
            }
            text.push('\n');
            text
        } else {
            let mut paths = found.paths;
            paths.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
            let total = paths.len();
            let mut lines: Vec<String> =
                paths.into_iter().take(MAX_PATHS).map(|(_, path)| ctx.display_path(&path)).collect();
            if total > MAX_PATHS {
                lines.push(format!(
                    "[{} more files not shown; narrow the pattern or the path]",
                    total - MAX_PATHS
                ));
            }
            lines.join("\n") + "\n"
        };
        for note in linked_note.into_iter().chain(found.denied) {
            out.push_str(&note);
            out.push('\n');
        }
        Ok(ToolOutput::text(out))
    }
}

/// A pattern starting with the search root is made relative to it.
fn relative_pattern(pattern: &str, root: &Path) -> String {
    let stripped =
        Path::new(pattern).strip_prefix(root).ok().and_then(|rest| rest.to_str().map(str::to_string));
    stripped.unwrap_or_else(|| pattern.trim_start_matches("./").to_string())
}

/// Whether some path component of the pattern starts with a dot (`.github/**`, `.gitignore`).
fn names_dot_entry(pattern: &str) -> bool {
    pattern.split('/').any(|part| part.starts_with('.') && part != "." && part != "..")
}

/// Whether a pattern component holds glob syntax.
fn is_literal(part: &str) -> bool {
    !part.contains(['*', '?', '[', ']', '{', '}', '\\'])
}

/// What a walk found.
#[derive(Default)]
struct Found {
    /// Matching files (and links to files) with their modification times.
    paths: Vec<(SystemTime, PathBuf)>,
    /// Symlinked directories that were not entered, with their targets.
    linked_dirs: Vec<(PathBuf, PathBuf)>,
    /// The note on entries a deny rule hid.
    denied: Option<String>,
}

/// Files under `root` matching `pattern` (root-relative). The pattern's literal leading
/// directories are where the walk starts, so they are searched even if ignored; a fully literal
/// pattern that names an existing file finds it whatever the ignore files say.
fn find(
    root: &Path,
    pattern: &str,
    matcher: &GlobMatcher,
    (hidden, ignored): (Hidden, Ignored),
    policy: &Option<Arc<Policy>>,
    cancel: &CancellationToken,
) -> Found {
    let mut found = Found::default();
    let parts: Vec<&str> = pattern.split('/').filter(|part| !part.is_empty()).collect();
    if !parts.is_empty() && parts.iter().all(|part| is_literal(part)) {
        let named = root.join(pattern);
        if let Ok(meta) = std::fs::metadata(&named)
            && meta.is_file()
        {
            found.paths.push((meta.modified().unwrap_or(SystemTime::UNIX_EPOCH), named));
            return found;
        }
    }
    let literal_dirs = parts.iter().take(parts.len().saturating_sub(1)).take_while(|part| is_literal(part));
    let mut base = root.to_path_buf();
    for part in literal_dirs {
        if !base.join(part).is_dir() {
            break;
        }
        base.push(part);
    }
    let limit = match ignored {
        Ignored::Include => IGNORED_SCAN_LIMIT,
        Ignored::Skip => usize::MAX,
    };
    let (walk, denied) = walker(&base, hidden, ignored, policy.clone(), "glob");
    for (seen, entry) in walk.build().enumerate() {
        if cancel.is_cancelled() || seen >= limit {
            break;
        }
        let Ok(entry) = entry else { continue };
        let Ok(rel) = entry.path().strip_prefix(root) else { continue };
        match Kind::of(&entry) {
            kind if kind.is_file_like() => {
                if matcher.is_match(rel) {
                    let mtime = std::fs::metadata(entry.path())
                        .and_then(|meta| meta.modified())
                        .unwrap_or(SystemTime::UNIX_EPOCH);
                    found.paths.push((mtime, entry.into_path()));
                }
            }
            // The walk's base itself was named (the path or the pattern): entered, not reported.
            Kind::LinkToDir(_) if entry.depth() == 0 => {}
            Kind::LinkToDir(target) => found.linked_dirs.push((entry.into_path(), target)),
            Kind::File | Kind::LinkToFile(_) | Kind::Dir | Kind::BrokenLink(_) => {}
        }
    }
    found.denied = denied.note();
    found
}

#[cfg(test)]
#[path = "glob_tests.rs"]
mod tests;
