//! Temp directories for tests whose fixtures must lie *outside* every place Lathe lets tools write.
//!
//! Lathe's path guard and sandbox allow writes to the workspace and to the temp dirs (`$TMPDIR` and
//! `/tmp`). A test that checks "a write outside the workspace is refused" therefore needs its
//! outside fixture somewhere no temp dir contains, whatever the checkout's location: the build's
//! own temp dir (`CARGO_TARGET_TMPDIR`) lies inside `/tmp` when the checkout does.
//! [`outside_tempdir`] picks the first candidate that is not inside a temp dir and fails the test,
//! naming every candidate, when none is.

use std::path::{Path, PathBuf};

/// The temp dirs Lathe allows writes to, as real paths: `$TMPDIR` (or the platform's temp dir) and
/// `/tmp`. The same two the path guard uses (`lathe_policy::path::Guard`).
pub fn allowed_temp_dirs() -> Vec<PathBuf> {
    let real = |path: &Path| path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let mut dirs = vec![real(&std::env::temp_dir())];
    let tmp = real(Path::new("/tmp"));
    if !dirs.contains(&tmp) {
        dirs.push(tmp);
    }
    dirs
}

/// Whether `path` (made real first) lies inside one of [`allowed_temp_dirs`].
pub fn inside_a_temp_dir(path: &Path) -> bool {
    let real = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    allowed_temp_dirs().iter().any(|dir| real.starts_with(dir))
}

/// A new temp directory that no allowed temp dir contains. `preferred` is tried first (pass
/// `env!("CARGO_TARGET_TMPDIR")`), then `/var/tmp`, then `$HOME/.cache/lathe-tests`.
///
/// # Panics
/// When no candidate can hold a directory outside the temp dirs: the message names each candidate
/// and why it was passed over. A test must not go on with an "outside" fixture that is inside.
pub fn outside_tempdir(preferred: &str) -> tempfile::TempDir {
    let mut candidates = vec![PathBuf::from(preferred), PathBuf::from("/var/tmp")];
    if let Some(home) = std::env::var_os("HOME").filter(|home| !home.is_empty()) {
        candidates.push(PathBuf::from(home).join(".cache/lathe-tests"));
    }
    let mut passed_over = Vec::new();
    for candidate in candidates {
        if inside_a_temp_dir(&candidate) {
            passed_over.push(format!("{} (inside a temp dir)", candidate.display()));
            continue;
        }
        let made = std::fs::create_dir_all(&candidate)
            .and_then(|()| tempfile::Builder::new().prefix("lathe-test-").tempdir_in(&candidate));
        match made {
            Ok(dir) if !inside_a_temp_dir(dir.path()) => return dir,
            Ok(dir) => {
                passed_over.push(format!("{} (inside a temp dir once made real)", dir.path().display()))
            }
            Err(error) => passed_over.push(format!("{} ({error})", candidate.display())),
        }
    }
    panic!(
        "no place for fixtures outside the temp dirs {:?}: {}",
        allowed_temp_dirs(),
        passed_over.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_outside_dir_is_outside_every_temp_dir_even_when_the_preferred_place_is_inside() {
        // A checkout under /tmp puts CARGO_TARGET_TMPDIR there: the preferred place is then inside.
        for preferred in ["/tmp", std::env::temp_dir().to_str().unwrap_or("/tmp")] {
            let dir = outside_tempdir(preferred);
            assert!(!inside_a_temp_dir(dir.path()), "{preferred}: {}", dir.path().display());
            assert!(dir.path().is_dir());
        }
    }

    #[test]
    fn a_path_under_tmp_counts_as_inside() {
        assert!(inside_a_temp_dir(Path::new("/tmp/some/where")));
        assert!(inside_a_temp_dir(&std::env::temp_dir().join("x")));
    }
}
