//! Helpers for the memory tests: a temporary home with the three scope roots, a fixed clock and
//! entry writers.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use chrono::{DateTime, TimeZone, Utc};

use super::Roots;
use super::command::{MemoryArgs, MemoryCommandName, Source};
use super::entry::{Frontmatter, MemoryType, render};

/// A temporary folder holding `home/` (Lathe's home) and `repo/` (a workspace).
pub(crate) struct Fixture {
    pub dir: tempfile::TempDir,
    pub roots: Roots,
}

impl Fixture {
    pub fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let roots = Roots {
            user: base.join("home/memory"),
            project: base.join("home/projects/key/memory"),
            shared: Some(base.join("repo/.lathe/memory")),
        };
        Fixture { dir, roots }
    }

    pub fn base(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }
}

/// 2025-06-01T12:00:00Z.
pub(crate) fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 6, 1, 12, 0, 0).unwrap()
}

pub(crate) fn source() -> Source {
    Source { session: "0193abcd".to_string(), turn: 2 }
}

pub(crate) fn args(command: MemoryCommandName) -> MemoryArgs {
    MemoryArgs {
        command,
        path: None,
        file_text: None,
        old_str: None,
        new_str: None,
        insert_line: None,
        insert_text: None,
        old_path: None,
        new_path: None,
        view_range: None,
    }
}

pub(crate) fn meta(name: &str, description: &str, kind: MemoryType) -> Frontmatter {
    Frontmatter {
        name: name.to_string(),
        description: description.to_string(),
        kind,
        source: "user".to_string(),
        created: "2025-05-01T00:00:00Z".to_string(),
        modified: "2025-05-01T00:00:00Z".to_string(),
        last_used: None,
        use_count: 0,
        expires: None,
        evidence: Vec::new(),
    }
}

/// Writes `root/file` with `meta` and `body`, creating folders.
pub(crate) fn write_entry(root: &Path, file: &str, meta: &Frontmatter, body: &str) -> PathBuf {
    let path = root.join(file);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, render(meta, body)).unwrap();
    path
}

/// Runs git in `dir` with a fixed identity and no user configuration; panics on failure.
pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}
