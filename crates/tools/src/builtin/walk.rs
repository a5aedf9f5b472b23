//! What the search tools see: one rule for `glob`, `grep` and `list_dir`.
//!
//! 1. **Ignored and hidden entries are skipped**: whatever `.gitignore`, `.ignore`,
//!    `.git/info/exclude` or the global git excludes match (inside a git repository or not), and
//!    names starting with a dot. `.git` itself is never shown.
//! 2. **Named entries are not skipped**: the `path` argument is walked even if it is ignored, and
//!    so are the literal directories a glob pattern starts with (`dist/*.js` walks `dist`;
//!    `dist/bundle.js` finds that file) — as ripgrep does for the paths it is given. A pattern
//!    naming a dot-entry (`.github/**`) includes hidden entries.
//! 3. **`include_ignored: true`** walks ignored and hidden entries too.
//! 4. **What was skipped is said**: `glob` that finds nothing names the ignored files that would
//!    have matched, `list_dir` says how many entries each listing hid, and `grep` that finds
//!    nothing says that ignored files were not searched — each with how to include them.
//! 5. **Symbolic links are never followed inside a walk** (no loops, no escaping the tree): a link
//!    to a file counts as a file (`glob` lists it, `grep` searches it, `list_dir` shows `name ->
//!    target`), a link to a directory is listed but not entered (`list_dir` shows `name/ ->
//!    target`; `glob` and `grep` say how many they did not enter). A `path` that is a link to a
//!    directory is entered, since it was named.
//!    `@path` completion in the terminal UI lists a directory by the same rules ([`dir_entries`]).
//! 6. **What a deny rule forbids reading is never shown** (`Read(config/prod.key)` in any settings
//!    file): the walk leaves it out and the result says which rule hid how many entries.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ignore::DirEntry;

use lathe_policy::Policy;

#[cfg(doc)]
use crate::ToolContext;

/// How to include what rule 1 skips, for the notes of rule 4.
pub(crate) const INCLUDE_IGNORED_HINT: &str = "pass include_ignored: true to include them";

/// Whether a walk yields hidden (dot) files and directories.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hidden {
    /// Skip them, as ripgrep does by default.
    Skip,
    /// Yield them (the pattern names one explicitly).
    Include,
}

/// Whether a walk honours the ignore files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ignored {
    /// Skip ignored entries (the default).
    Skip,
    /// Yield ignored and hidden entries too (`include_ignored: true`).
    Include,
}

impl Ignored {
    /// From the `include_ignored` argument.
    pub(crate) fn from_flag(include: Option<bool>) -> Ignored {
        if include.unwrap_or(false) { Ignored::Include } else { Ignored::Skip }
    }
}

/// What a walk left out because a deny rule forbids reading it (rule 6): each rule with how many
/// entries it hid, filled while the walk runs.
#[derive(Debug, Clone, Default)]
pub(crate) struct Denied(Arc<Mutex<Vec<(String, usize)>>>);

impl Denied {
    fn record(&self, rule: String) {
        let mut seen = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match seen.iter_mut().find(|(known, _)| *known == rule) {
            Some((_, count)) => *count += 1,
            None => seen.push((rule, 1)),
        }
    }

    /// The note for what was left out, e.g. `[1 entry not shown: denied by the deny rule
    /// `Read(config/prod.key)` in ~/.claude/settings.json]`.
    pub(crate) fn note(&self) -> Option<String> {
        let seen = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if seen.is_empty() {
            return None;
        }
        let count: usize = seen.iter().map(|(_, count)| count).sum();
        let what = if count == 1 { "entry" } else { "entries" };
        let rules: Vec<String> = seen.iter().map(|(rule, _)| format!("the {rule}")).collect();
        Some(format!("[{count} {what} not shown: denied by {}]", rules.join(", ")))
    }
}

/// The walker of the rule above, rooted at `root` (entered even when it is a symlink), for `tool`
/// under `policy` (whose deny rules hide entries, rule 6; the session's, [`ToolContext::policy`]),
/// and what it left out for them.
pub(crate) fn walker(
    root: &Path,
    hidden: Hidden,
    ignored: Ignored,
    policy: Option<Arc<Policy>>,
    tool: &'static str,
) -> (ignore::WalkBuilder, Denied) {
    let mut builder = ignore::WalkBuilder::new(root);
    builder.require_git(false).follow_links(false);
    match ignored {
        Ignored::Skip => {
            builder.hidden(matches!(hidden, Hidden::Skip));
        }
        Ignored::Include => {
            builder.standard_filters(false);
        }
    }
    let denied = Denied::default();
    let log = denied.clone();
    // Decided once per walk: with no deny rule that could hide a path, entries are not checked.
    let policy = policy.filter(|policy| policy.denies_paths());
    builder.filter_entry(move |entry| {
        if entry.file_name() == ".git" {
            return false;
        }
        // The root was named, and the call's own permission decision judged it.
        if entry.depth() == 0 {
            return true;
        }
        match policy.as_ref().and_then(|policy| policy.read_denied(tool, entry.path())) {
            Some(rule) => {
                log.record(rule);
                false
            }
            None => true,
        }
    });
    (builder, denied)
}

/// One entry of [`dir_entries`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntryName {
    /// The entry's file name.
    pub name: String,
    /// Whether it is a directory or a link to one (a link is entered only once it is named).
    pub is_dir: bool,
}

/// The entries of `dir` as the rule above lists them, one level deep, sorted by name: ignored and
/// hidden entries left out (hidden ones kept when `include_hidden`), `.git` never, a link to a
/// directory listed as a directory but not entered. Used by `@path` completion in the front ends,
/// so a completion offers what `list_dir` would show. Empty when `dir` cannot be read.
pub fn dir_entries(dir: &Path, include_hidden: bool) -> Vec<DirEntryName> {
    let hidden = if include_hidden { Hidden::Include } else { Hidden::Skip };
    let (mut builder, _) = walker(dir, hidden, Ignored::Skip, None, "list_dir");
    builder.max_depth(Some(1));
    let mut entries: Vec<DirEntryName> = builder
        .build()
        .flatten()
        .filter(|entry| entry.depth() == 1)
        .filter_map(|entry| {
            let name = entry.file_name().to_str()?.to_string();
            let is_dir = matches!(Kind::of(&entry), Kind::Dir | Kind::LinkToDir(_));
            Some(DirEntryName { name, is_dir })
        })
        .collect();
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    entries
}

/// What a walked entry is, with symlinks resolved one step (rule 5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A regular file (or anything else that is not a directory or a link).
    File,
    /// A directory.
    Dir,
    /// A symlink whose target is a file (counts as a file).
    LinkToFile(PathBuf),
    /// A symlink whose target is a directory (listed, not entered).
    LinkToDir(PathBuf),
    /// A symlink whose target is missing.
    BrokenLink(PathBuf),
}

impl Kind {
    /// The kind of `entry`.
    pub(crate) fn of(entry: &DirEntry) -> Kind {
        let Some(file_type) = entry.file_type() else { return Kind::File };
        if file_type.is_dir() {
            return Kind::Dir;
        }
        if !file_type.is_symlink() {
            return Kind::File;
        }
        let target = std::fs::read_link(entry.path()).unwrap_or_default();
        match std::fs::metadata(entry.path()) {
            Ok(meta) if meta.is_dir() => Kind::LinkToDir(target),
            Ok(_) => Kind::LinkToFile(target),
            Err(_) => Kind::BrokenLink(target),
        }
    }

    /// Whether glob lists it and grep searches it.
    pub(crate) fn is_file_like(&self) -> bool {
        matches!(self, Kind::File | Kind::LinkToFile(_))
    }
}

/// The note for symlinked directories a walk did not enter (rule 5), e.g.
/// `[1 symlinked directory not entered: docs -> ../shared/docs; pass it as path to search inside]`.
pub(crate) fn linked_dirs_note(linked: &[(String, PathBuf)]) -> Option<String> {
    if linked.is_empty() {
        return None;
    }
    let shown: Vec<String> =
        linked.iter().take(3).map(|(name, target)| format!("{name} -> {}", target.display())).collect();
    let more = if linked.len() > 3 { format!(", … ({} more)", linked.len() - 3) } else { String::new() };
    let what = if linked.len() == 1 { "directory" } else { "directories" };
    Some(format!(
        "[{} symlinked {what} not entered: {}{more}; pass one as path to search inside]",
        linked.len(),
        shown.join(", ")
    ))
}
