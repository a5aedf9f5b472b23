//! What a glob or brace pattern in a command line names on disk (`config/*`, `{a,b}/key`,
//! `prod.ke?`), for the deny `Read(…)` check: the existing paths it matches, found by listing
//! only the directories the pattern walks through (a pattern without `*`, `?`, `[` or `{` is the
//! path itself). Bounded: at most [`MAX_ENTRIES`] directory entries are looked at.

use std::path::{Component, Path, PathBuf};

use globset::GlobBuilder;

/// Most directory entries one expansion looks at.
pub(crate) const MAX_ENTRIES: usize = 4096;

fn is_pattern(part: &str) -> bool {
    part.contains(['*', '?', '[', '{'])
}

/// `path` itself when it is no pattern; else the existing paths it matches (bash's rules: a `*`
/// does not cross `/`).
pub(crate) fn matches(path: &Path) -> Vec<PathBuf> {
    let text = path.to_string_lossy();
    if !is_pattern(&text) {
        return vec![path.to_path_buf()];
    }
    let Ok(glob) = GlobBuilder::new(&text).literal_separator(true).build() else { return Vec::new() };
    let matcher = glob.compile_matcher();
    // The literal directories before the first pattern component, then one level per component.
    let mut base = PathBuf::new();
    let mut depth = 0usize;
    for component in path.components() {
        let part = component.as_os_str().to_string_lossy();
        if depth == 0 && !is_pattern(&part) {
            base.push(component);
        } else if !matches!(component, Component::RootDir) {
            depth += 1;
        }
    }
    let mut found = Vec::new();
    let mut level = vec![base];
    let mut seen = 0usize;
    for _ in 0..depth {
        let mut next = Vec::new();
        for dir in &level {
            let Ok(entries) = std::fs::read_dir(dir) else { continue };
            for entry in entries.flatten() {
                seen += 1;
                if seen > MAX_ENTRIES {
                    return found;
                }
                next.push(entry.path());
            }
        }
        level = next;
    }
    found.extend(level.into_iter().filter(|candidate| matcher.is_match(candidate)));
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_and_braces_name_what_exists() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path();
        std::fs::create_dir_all(root.join("config")).unwrap_or_default();
        std::fs::write(root.join("config/prod.key"), "k").unwrap_or_default();
        std::fs::write(root.join("config/dev.toml"), "d").unwrap_or_default();
        let names = |pattern: &str| {
            let mut found: Vec<String> = matches(&root.join(pattern))
                .iter()
                .map(|p| p.strip_prefix(root).unwrap_or(p).display().to_string())
                .collect();
            found.sort();
            found
        };
        assert_eq!(names("config/*"), ["config/dev.toml", "config/prod.key"]);
        assert_eq!(names("config/prod.ke?"), ["config/prod.key"]);
        assert_eq!(names("{config,x}/prod.key"), ["config/prod.key"]);
        assert_eq!(names("c*/p*"), ["config/prod.key"]);
        assert_eq!(names("config/prod.key"), ["config/prod.key"]);
    }
}
