//! `glob{pattern, path?}`: files whose path (relative to the search root) matches a glob, newest
//! first.
//!
//! The walk uses the `ignore` crate's standard filters (`.gitignore`, `.ignore`, hidden files —
//! unless the pattern itself names a dot-file or dot-directory) and never follows symlinks, so a
//! symlink loop cannot trap it. `*` does not cross `/`; `**` does. At most [`MAX_PATHS`] paths,
//! relative to the workspace.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use globset::GlobBuilder;
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::{Hidden, blocking, io_reason, walker};
use crate::context::ToolContext;
use crate::tool::{Access, Effect, Tool, ToolError, ToolOutput};

/// Paths returned at most.
pub const MAX_PATHS: usize = 200;

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
}

impl Tool for Glob {
    type Args = GlobArgs;

    fn name(&self) -> &'static str {
        "glob"
    }

    fn description(&self) -> &'static str {
        "Find files by glob pattern (gitignore-aware), newest first, at most 200 paths."
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
        let cancel = ctx.cancel.clone();
        let walk_root = root.clone();
        let mut found =
            blocking(ctx, move || find(&walk_root, hidden, &cancel, |rel| matcher.is_match(rel))).await?;
        if found.is_empty() {
            return Ok(ToolOutput::text(format!("No files match {:?} under {shown_root}.", args.pattern)));
        }
        found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        let total = found.len();
        let mut out: Vec<String> =
            found.into_iter().take(MAX_PATHS).map(|(_, path)| ctx.display_path(&path)).collect();
        if total > MAX_PATHS {
            out.push(format!("[{} more files not shown; narrow the pattern or the path]", total - MAX_PATHS));
        }
        Ok(ToolOutput::text(out.join("\n") + "\n"))
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

/// Files under `root` (standard ignore filters, no symlink following) whose root-relative path
/// satisfies `keep`, with their modification times.
fn find(
    root: &Path,
    hidden: Hidden,
    cancel: &CancellationToken,
    keep: impl Fn(&Path) -> bool,
) -> Vec<(SystemTime, PathBuf)> {
    let mut found = Vec::new();
    for entry in walker(root, hidden).build() {
        if cancel.is_cancelled() {
            break;
        }
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(root) else { continue };
        if keep(rel) {
            let mtime =
                entry.metadata().ok().and_then(|m| m.modified().ok()).unwrap_or(SystemTime::UNIX_EPOCH);
            found.push((mtime, entry.into_path()));
        }
    }
    found
}

#[cfg(test)]
#[path = "glob_tests.rs"]
mod tests;
