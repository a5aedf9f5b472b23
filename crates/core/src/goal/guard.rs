//! The integrity guard and the workspace fingerprint of a goal.
//!
//! When a goal starts, the files a check could be gamed through are recorded (path and SHA-256):
//! tests (`tests/**`, `test_*.py`, `*_test.*`, `*.test.*`, `conftest.py`), CI configuration,
//! build and task scripts (Makefile, justfile, `package.json`, `pyproject.toml`, `tox.ini`, …),
//! and the files the check command names. A goal whose protected files changed cannot end as met:
//! it ends as `needs_review` with their diff. The same walk fingerprints the workspace (path,
//! size, modification time of every file `.gitignore` does not exclude), so an iteration that
//! changed nothing is seen.

use std::collections::BTreeMap;
use std::path::Path;

use globset::{Glob, GlobSet, GlobSetBuilder};
use lathe_protocol::goal::ProtectedChange;
use sha2::{Digest, Sha256};

/// The patterns of protected files (gitignore-style globs, relative to the workspace).
pub const PROTECTED: &[&str] = &[
    "tests/**",
    "**/tests/**",
    "test/**",
    "**/test/**",
    "**/test_*.py",
    "**/*_test.*",
    "**/*.test.*",
    "**/*.spec.*",
    "**/conftest.py",
    ".github/workflows/**",
    ".gitlab-ci.yml",
    ".circleci/**",
    "azure-pipelines.yml",
    "Jenkinsfile",
    ".ci/**",
    "**/Makefile",
    "**/makefile",
    "**/GNUmakefile",
    "**/justfile",
    "**/Justfile",
    "**/package.json",
    "pyproject.toml",
    "setup.cfg",
    "tox.ini",
    "noxfile.py",
    "pytest.ini",
];
/// Most files walked; a bigger workspace is fingerprinted on its first files only.
const MAX_FILES: usize = 50_000;
/// Largest protected file whose bytes are kept for the diff, in bytes.
const MAX_KEPT_BYTES: u64 = 256 * 1024;

/// The workspace as a goal saw it.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// Every file: relative path → (size in bytes, modification time in ns).
    pub files: BTreeMap<String, (u64, u128)>,
    /// Protected files: relative path → (SHA-256 hex, bytes when small enough).
    pub protected: BTreeMap<String, (String, Option<Vec<u8>>)>,
}

impl Snapshot {
    /// Walks `workspace` (without following links; `.gitignore` applies; `.git` left out),
    /// protecting [`PROTECTED`] and the files `check` names.
    pub fn take(workspace: &Path, check: Option<&str>) -> Snapshot {
        let protected = protected_set(workspace, check);
        let mut snapshot = Snapshot::default();
        let walk = ignore::WalkBuilder::new(workspace)
            .hidden(false)
            .follow_links(false)
            .filter_entry(|entry| entry.file_name() != ".git")
            .build();
        for entry in walk.flatten().take(MAX_FILES) {
            if !entry.file_type().is_some_and(|kind| kind.is_file()) {
                continue;
            }
            let Ok(relative) = entry.path().strip_prefix(workspace) else { continue };
            let relative = relative.to_string_lossy().replace('\\', "/");
            let Ok(meta) = entry.metadata() else { continue };
            let modified = meta
                .modified()
                .ok()
                .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |since| since.as_nanos());
            snapshot.files.insert(relative.clone(), (meta.len(), modified));
            if protected.is_match(&relative)
                && let Ok(bytes) = std::fs::read(entry.path())
            {
                let hash = hex::encode(Sha256::digest(&bytes));
                let kept = (meta.len() <= MAX_KEPT_BYTES).then_some(bytes);
                snapshot.protected.insert(relative, (hash, kept));
            }
        }
        snapshot
    }

    /// The protected files as (path, SHA-256 hex), for the ledger.
    pub fn protected_hashes(&self) -> Vec<(String, String)> {
        self.protected.iter().map(|(path, (hash, _))| (path.clone(), hash.clone())).collect()
    }

    /// The files changed, added or removed between `self` (earlier) and `now`, sorted.
    pub fn changed_files(&self, now: &Snapshot) -> Vec<String> {
        let mut changed: Vec<String> = now
            .files
            .iter()
            .filter(|(path, stamp)| self.files.get(*path) != Some(*stamp))
            .map(|(path, _)| path.clone())
            .collect();
        changed.extend(self.files.keys().filter(|path| !now.files.contains_key(*path)).cloned());
        changed.sort();
        changed
    }

    /// The protected files of `self` (taken at the goal's start) that differ in `workspace`
    /// now, or are gone, with their diff; and protected files that appeared.
    pub fn protected_changes(&self, workspace: &Path, now: &Snapshot) -> Vec<ProtectedChange> {
        let mut changes = Vec::new();
        for (path, (hash, kept)) in &self.protected {
            match now.protected.get(path) {
                Some((new_hash, _)) if new_hash == hash => {}
                Some(_) => {
                    let after = std::fs::read(workspace.join(path)).unwrap_or_default();
                    changes.push(ProtectedChange {
                        path: path.clone(),
                        diff: diff(path, kept.as_deref(), &after),
                    });
                }
                None => changes.push(ProtectedChange { path: path.clone(), diff: "deleted".into() }),
            }
        }
        for (path, (_, kept)) in &now.protected {
            if !self.protected.contains_key(path) {
                let after = kept.clone().unwrap_or_default();
                changes.push(ProtectedChange { path: path.clone(), diff: diff(path, Some(&[]), &after) });
            }
        }
        changes
    }
}

/// The globs of protected files plus the files `check` names (words that are files in the
/// workspace: `bash scripts/check.sh`, `python3 run_tests.py`).
fn protected_set(workspace: &Path, check: Option<&str>) -> GlobSet {
    let mut builder = GlobSetBuilder::new();
    for pattern in PROTECTED {
        if let Ok(glob) = Glob::new(pattern) {
            builder.add(glob);
        }
    }
    for word in check.unwrap_or("").split(|c: char| c.is_whitespace() || "'\"`;&|()<>".contains(c)) {
        let word = word.trim_start_matches("./");
        if !word.is_empty()
            && !word.starts_with('-')
            && workspace.join(word).is_file()
            && let Ok(glob) = Glob::new(&globset::escape(word))
        {
            builder.add(glob);
        }
    }
    builder.build().unwrap_or_else(|_| GlobSet::empty())
}

/// A unified diff of `path` from `before` (`None`: not kept, too big) to `after`, cut at 8 000
/// characters.
fn diff(path: &str, before: Option<&[u8]>, after: &[u8]) -> String {
    let Some(before) = before else { return "changed (too big to show)".into() };
    let (before, after) = (String::from_utf8_lossy(before), String::from_utf8_lossy(after));
    let text = similar::TextDiff::from_lines(before.as_ref(), after.as_ref())
        .unified_diff()
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string();
    if text.chars().count() <= 8_000 {
        return text;
    }
    let mut cut: String = text.chars().take(8_000).collect();
    cut.push_str("\n[diff cut at 8000 chars]");
    cut
}

#[cfg(test)]
#[path = "guard_tests.rs"]
mod tests;
