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

use std::path::{Path, PathBuf};

use ignore::DirEntry;

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

/// The walker of the rule above, rooted at `root` (entered even when it is a symlink).
pub(crate) fn walker(root: &Path, hidden: Hidden, ignored: Ignored) -> ignore::WalkBuilder {
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
    builder.filter_entry(|entry| entry.file_name() != ".git");
    builder
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
