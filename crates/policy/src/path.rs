//! The path guard's core question: does a path lie inside a root, once `..` and symlinks are
//! resolved? (FEATURES.md §D "Path guard": `..` and symlinks are resolved before the check.)

use std::path::{Path, PathBuf};

/// Whether `path` lies inside `root` after resolving symlinks. A path that does not exist yet is
/// judged by its longest existing ancestor (canonicalised) plus the rest, so `out/new.txt` where
/// `out` links outside the root is outside.
pub fn is_inside(root: &Path, path: &Path) -> bool {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    real_path(path).starts_with(&root)
}

/// `path` with its longest existing ancestor canonicalised and the non-existing rest appended
/// (`..` in the rest are applied lexically).
pub fn real_path(path: &Path) -> PathBuf {
    let mut existing = path;
    let mut rest = Vec::new();
    while !existing.exists() {
        let (Some(parent), Some(name)) = (existing.parent(), existing.file_name()) else { break };
        rest.push(name.to_os_string());
        existing = parent;
    }
    let mut real = existing.canonicalize().unwrap_or_else(|_| existing.to_path_buf());
    for part in rest.iter().rev() {
        if part == ".." {
            real.pop();
        } else {
            real.push(part);
        }
    }
    real
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn symlinks_and_dotdot_are_resolved_before_the_check() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::os::unix::fs::symlink(dir.path(), root.join("out")).unwrap();
        let table = [
            (root.join("src/new.rs"), true),
            (root.join("a/b/c.txt"), true),
            (root.join("out/escape.txt"), false),
            (dir.path().join("elsewhere.txt"), false),
            (root.join("src/../../x.txt"), false),
        ];
        for (path, inside) in table {
            assert_eq!(is_inside(&root, &path), inside, "{}", path.display());
        }
    }
}
