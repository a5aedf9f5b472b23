//! `@path` imports in instruction files (Claude Code's memory-file syntax): `@docs/style.md`,
//! `@~/notes.md`, `@/etc/team.md`. A path is resolved relative to the file that imports it (`~/`
//! against the user's home, absolute as given). Imports inside code spans and fenced code blocks
//! are text, not imports. To tell an import from a mention (`@alice`), the path must contain a `/`
//! or a `.`.

use std::path::{Path, PathBuf};

/// The `@path` imports of `text`, in order, as written (without the `@`).
pub fn find_imports(text: &str) -> Vec<String> {
    let mut imports = Vec::new();
    let mut fence: Option<&str> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let marker = ["```", "~~~"].into_iter().find(|marker| trimmed.starts_with(marker));
        match (fence, marker) {
            (None, Some(marker)) => {
                fence = Some(marker);
                continue;
            }
            (Some(open), Some(marker)) if open == marker => {
                fence = None;
                continue;
            }
            (Some(_), _) => continue,
            (None, None) => {}
        }
        imports.extend(line_imports(line));
    }
    imports
}

/// The imports of one line outside its inline code spans.
fn line_imports(line: &str) -> Vec<String> {
    let mut outside = String::with_capacity(line.len());
    let mut in_code = false;
    for ch in line.chars() {
        if ch == '`' {
            in_code = !in_code;
            outside.push(' ');
        } else if !in_code {
            outside.push(ch);
        }
    }
    outside
        .split_whitespace()
        .filter_map(|word| word.strip_prefix('@'))
        .map(|path| path.trim_end_matches(['.', ',', ';', ':', ')', '!', '?', '"', '\'']))
        .filter(|path| !path.is_empty() && (path.contains('/') || path.contains('.')) && !path.contains('@'))
        .map(str::to_string)
        .collect()
}

/// Where an import written in the file `from` points.
pub fn resolve(import: &str, from: &Path, user_home: Option<&Path>) -> PathBuf {
    if let (Some(rest), Some(home)) = (import.strip_prefix("~/"), user_home) {
        return home.join(rest);
    }
    let path = Path::new(import);
    if path.is_absolute() {
        return path.to_path_buf();
    }
    from.parent().unwrap_or(Path::new("/")).join(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imports_outside_code_are_found_and_mentions_are_not() {
        let text = "See @docs/style.md and @~/notes.md, also @/etc/team.md.\n\
                    Ask @alice. Mail a@b.com.\n\
                    Inline `@not/this.md` is code.\n\
                    ```\n@inside/block.md\n```\n\
                    ~~~md\n@also/inside.md\n~~~\n\
                    After the block: @after.md";
        assert_eq!(find_imports(text), ["docs/style.md", "~/notes.md", "/etc/team.md", "after.md"]);
    }

    #[test]
    fn imports_resolve_relative_to_the_importing_file() {
        let from = Path::new("/repo/pkg/AGENTS.md");
        assert_eq!(resolve("docs/a.md", from, None), PathBuf::from("/repo/pkg/docs/a.md"));
        assert_eq!(resolve("~/x.md", from, Some(Path::new("/home/u"))), PathBuf::from("/home/u/x.md"));
        assert_eq!(resolve("/etc/t.md", from, None), PathBuf::from("/etc/t.md"));
    }
}
