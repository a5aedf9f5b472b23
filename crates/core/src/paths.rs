//! Where Lathe keeps things on disk (ARCHITECTURE.md §5).
//!
//! Everything lives under Lathe's home, `$LATHE_HOME` or `~/.lathe`:
//! `config.toml`, `sessions/<project-key>/<session-id>.jsonl`, `tool-results/`.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Lathe's home directory: `$LATHE_HOME` if set, else `~/.lathe` (else `./.lathe` when no home
/// directory is known).
pub fn lathe_home() -> PathBuf {
    if let Some(home) = std::env::var_os("LATHE_HOME").filter(|value| !value.is_empty()) {
        return PathBuf::from(home);
    }
    match dirs::home_dir() {
        Some(home) => home.join(".lathe"),
        None => PathBuf::from(".lathe"),
    }
}

/// The folder holding one project's sessions: `<home>/sessions/<project-key>`.
pub fn sessions_dir(home: &Path, project: &Path) -> PathBuf {
    home.join("sessions").join(project_key(project))
}

/// A readable, collision-safe folder name for a project directory: the path's last characters
/// slugged (`work-main`) plus 8 hex digits of its SHA-256.
pub fn project_key(project: &Path) -> String {
    let text = project.to_string_lossy();
    let slug: String =
        text.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
    let slug = slug.trim_matches('-');
    let tail: String = {
        let chars: Vec<char> = slug.chars().collect();
        let start = chars.len().saturating_sub(40);
        chars[start..].iter().collect()
    };
    let digest = Sha256::digest(text.as_bytes());
    format!("{}-{}", tail.trim_matches('-'), &hex::encode(digest)[..8])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_key_is_readable_and_distinct() {
        let a = project_key(Path::new("/home/me/src/app"));
        let b = project_key(Path::new("/home/me/src/App"));
        assert!(a.starts_with("home-me-src-app-"), "{a}");
        assert_ne!(a, b);
    }
}
