//! `list_dir{path, depth?, include_ignored?}`: a tree view of a directory, sorted by name, capped
//! at [`MAX_ENTRIES`].
//!
//! What is listed follows the search tools' shared rule (`walk.rs`): entries that `.gitignore`
//! ignores and hidden (dot) entries are left out unless `include_ignored` is set, and the listing
//! says how many it hid and which; symlinks are shown as `name -> target` (`name/ -> target` for a
//! directory) and never entered.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use lathe_policy::Policy;
use schemars::JsonSchema;
use serde::Deserialize;

use super::walk::{Hidden, INCLUDE_IGNORED_HINT, Ignored, Kind, walker};
use super::{blocking, io_reason};
use crate::context::ToolContext;
use crate::tool::{Access, Effect, Tool, ToolError, ToolOutput};

/// Default depth of the tree.
pub const DEFAULT_DEPTH: usize = 2;
/// Entries shown before the listing is cut.
pub const MAX_ENTRIES: usize = 500;
/// Names of hidden entries quoted in the note.
const HIDDEN_NAMES_SHOWN: usize = 5;

/// The `list_dir` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct ListDir;

/// Arguments of `list_dir`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListDirArgs {
    /// Relative to the workspace, or absolute.
    pub path: String,
    /// Levels to descend (default 2).
    #[schemars(range(min = 1))]
    pub depth: Option<u64>,
    /// Also gitignored and hidden entries.
    pub include_ignored: Option<bool>,
}

impl Tool for ListDir {
    type Args = ListDirArgs;

    fn name(&self) -> &'static str {
        "list_dir"
    }

    fn description(&self) -> &'static str {
        "List a directory as a tree (default depth 2). Gitignored and hidden entries are left out \
         (and counted) unless include_ignored is set; symlinks are shown, not entered."
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
        let ignored = Ignored::from_flag(args.include_ignored);
        let root = path.clone();
        let policy = ctx.policy.clone();
        let tree = blocking(ctx, move || render_tree(&root, depth, MAX_ENTRIES, ignored, policy)).await?;
        Ok(ToolOutput::text(format!("{shown}/\n{tree}")))
    }
}

/// The entries under `root` down to `depth` levels, one per line, indented two spaces per level,
/// directories with a trailing `/`, symlinks with `-> target`, sorted by name. After
/// `max_entries` lines a note says how many entries were left out; another says how many ignored
/// or hidden entries the listed directories hold, and another which deny rules of `policy` hid how
/// many (those are not named).
pub(crate) fn render_tree(
    root: &Path,
    depth: usize,
    max_entries: usize,
    ignored: Ignored,
    policy: Option<Arc<Policy>>,
) -> String {
    let (mut walker, denied) = walker(root, Hidden::Skip, ignored, policy.clone(), "list_dir");
    let walker = walker.max_depth(Some(depth)).sort_by_file_path(|a, b| a.cmp(b)).build();
    let mut out = String::new();
    let mut shown = 0usize;
    let mut cut = 0usize;
    let mut listed: BTreeSet<PathBuf> = BTreeSet::new();
    // Directories whose children were listed: the root and every directory above the depth limit.
    let mut expanded: Vec<PathBuf> = vec![root.to_path_buf()];
    for entry in walker {
        let Ok(entry) = entry else { continue };
        if entry.depth() == 0 {
            continue;
        }
        listed.insert(entry.path().to_path_buf());
        let kind = Kind::of(&entry);
        if kind == Kind::Dir && entry.depth() < depth {
            expanded.push(entry.path().to_path_buf());
        }
        if shown >= max_entries {
            cut += 1;
            continue;
        }
        out.push_str(&"  ".repeat(entry.depth()));
        out.push_str(&entry.file_name().to_string_lossy());
        match &kind {
            Kind::Dir => out.push('/'),
            Kind::LinkToDir(target) => {
                out.push_str(&format!("/ -> {} (symlink, not entered)", target.display()))
            }
            Kind::LinkToFile(target) => out.push_str(&format!(" -> {}", target.display())),
            Kind::BrokenLink(target) => out.push_str(&format!(" -> {} (broken symlink)", target.display())),
            Kind::File => {}
        }
        out.push('\n');
        shown += 1;
    }
    if shown == 0 {
        out.push_str("  (empty)\n");
    }
    if cut > 0 {
        out.push_str(&format!("[{cut} more entries not shown; list a subdirectory or use glob]\n"));
    }
    if ignored == Ignored::Skip
        && let Some(note) = hidden_note(root, &expanded, &listed, policy.as_deref())
    {
        out.push_str(&note);
    }
    if let Some(note) = denied.note() {
        out.push_str(&note);
        out.push('\n');
    }
    out
}

/// The note on entries of the `expanded` directories that the walk left out (ignored or hidden;
/// not those a deny rule of `policy` hid, whose names are not shown).
fn hidden_note(
    root: &Path,
    expanded: &[PathBuf],
    listed: &BTreeSet<PathBuf>,
    policy: Option<&Policy>,
) -> Option<String> {
    let mut hidden: Vec<String> = Vec::new();
    for dir in expanded {
        let Ok(entries) = std::fs::read_dir(dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if listed.contains(&path)
                || policy.is_some_and(|policy| policy.read_denied("list_dir", &path).is_some())
            {
                continue;
            }
            let mut name = path.strip_prefix(root).unwrap_or(&path).display().to_string();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                name.push('/');
            }
            hidden.push(name);
        }
    }
    if hidden.is_empty() {
        return None;
    }
    hidden.sort();
    let names: Vec<&str> = hidden.iter().take(HIDDEN_NAMES_SHOWN).map(String::as_str).collect();
    let more = if hidden.len() > HIDDEN_NAMES_SHOWN { ", …" } else { "" };
    let count = hidden.len();
    let entries = if count == 1 { "entry" } else { "entries" };
    Some(format!(
        "[{count} ignored or hidden {entries} not shown: {}{more}; {INCLUDE_IGNORED_HINT}]\n",
        names.join(", ")
    ))
}

#[cfg(test)]
#[path = "list_dir_tests.rs"]
mod tests;
