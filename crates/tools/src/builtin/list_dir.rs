//! `list_dir{path, depth?}`: a tree view of a directory, skipping what `.gitignore` and hidden-file
//! rules hide (the `ignore` crate's standard filters), sorted by name, capped at [`MAX_ENTRIES`].

use std::path::Path;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Hidden, blocking, io_reason, walker};
use crate::context::ToolContext;
use crate::tool::{Access, Effect, Tool, ToolError, ToolOutput};

/// Default depth of the tree.
pub const DEFAULT_DEPTH: usize = 2;
/// Entries shown before the listing is cut.
pub const MAX_ENTRIES: usize = 500;

/// The `list_dir` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct ListDir;

/// Arguments of `list_dir`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListDirArgs {
    /// Directory path (relative to the workspace or absolute).
    pub path: String,
    /// Levels to descend (default 2).
    #[schemars(range(min = 1))]
    pub depth: Option<u64>,
}

impl Tool for ListDir {
    type Args = ListDirArgs;

    fn name(&self) -> &'static str {
        "list_dir"
    }

    fn description(&self) -> &'static str {
        "List a directory as a tree (default depth 2), skipping gitignored and hidden files."
    }

    fn effect(&self) -> Effect {
        Effect::ReadOnly
    }

    fn access(&self, args: &ListDirArgs, ctx: &ToolContext) -> Access {
        Access::Read(vec![ctx.resolve(&args.path)])
    }

    async fn run(&self, args: ListDirArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let path = ctx.resolve(&args.path);
        let shown = ctx.display_path(&path);
        let meta = tokio::fs::metadata(&path)
            .await
            .map_err(|e| ToolError::Failed(format!("list_dir: cannot list {shown}: {}", io_reason(&e))))?;
        if !meta.is_dir() {
            return Err(ToolError::Failed(format!(
                "list_dir: {shown} is a file, not a directory; use read_file"
            )));
        }
        let depth = args.depth.map_or(DEFAULT_DEPTH, |d| d.clamp(1, 20) as usize);
        let root = path.clone();
        let tree = blocking(ctx, move || render_tree(&root, depth, MAX_ENTRIES)).await?;
        Ok(ToolOutput::text(format!("{shown}/\n{tree}")))
    }
}

/// The entries under `root` down to `depth` levels, one per line, indented two spaces per level,
/// directories with a trailing `/`, sorted by name.
/// After `max_entries` lines a note says how many entries were left out.
pub fn render_tree(root: &Path, depth: usize, max_entries: usize) -> String {
    let walker = walker(root, Hidden::Skip).max_depth(Some(depth)).sort_by_file_path(|a, b| a.cmp(b)).build();
    let mut out = String::new();
    let mut shown = 0usize;
    let mut hidden = 0usize;
    let mut entries: Vec<(usize, String, bool)> = Vec::new();
    for entry in walker {
        let Ok(entry) = entry else { continue };
        if entry.depth() == 0 {
            continue;
        }
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        let name = entry.file_name().to_string_lossy().into_owned();
        entries.push((entry.depth(), name, is_dir));
    }
    for (level, name, is_dir) in entries {
        if shown >= max_entries {
            hidden += 1;
            continue;
        }
        out.push_str(&"  ".repeat(level));
        out.push_str(&name);
        if is_dir {
            out.push('/');
        }
        out.push('\n');
        shown += 1;
    }
    if shown == 0 {
        out.push_str("  (empty)\n");
    }
    if hidden > 0 {
        out.push_str(&format!("[{hidden} more entries not shown; list a subdirectory or use glob]\n"));
    }
    out
}

#[cfg(test)]
#[path = "list_dir_tests.rs"]
mod tests;
