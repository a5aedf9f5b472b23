//! The workspace's absolute path taken out of the local model's prompt.
//!
//! Greedy decoding follows every token of the prompt: with the workspace's path in it (the
//! environment block, a traceback `File "/tmp/x/ws/app.py"`, `pwd`), the same task took other
//! calls and gave other answers in a directory of another name. Every whole occurrence of the
//! workspace root (as configured and as resolved) is written relative to it before the prompt is
//! evaluated: `ROOT/app.py` becomes `app.py`, `ROOT` alone becomes `.`. An occurrence that is part
//! of a longer path (`/x/ROOT/…`, `ROOT2/…`) stays as it is.

use std::path::Path;

/// Roots of fewer components are left alone (`/`, `/tmp`): too short to tell from other paths.
const MIN_COMPONENTS: usize = 3;

/// The forms of `workspace` to take out, longest first: as given and as resolved (symlinks).
pub fn roots(workspace: &Path) -> Vec<String> {
    let mut roots: Vec<String> = Vec::new();
    let resolved = std::fs::canonicalize(workspace).ok();
    for path in std::iter::once(workspace).chain(resolved.as_deref()) {
        let text = path.to_string_lossy().trim_end_matches('/').to_string();
        if path.is_absolute() && path.components().count() >= MIN_COMPONENTS && !roots.contains(&text) {
            roots.push(text);
        }
    }
    roots.sort_by_key(|root| std::cmp::Reverse(root.len()));
    roots
}

/// A character that continues a path (so a root followed or preceded by it is part of another path).
fn path_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '~' | '+' | '@')
}

/// `text` with every whole occurrence of each of `roots` written relative to it.
pub fn relativize(text: &str, roots: &[String]) -> String {
    let mut text = text.to_string();
    for root in roots.iter().filter(|root| !root.is_empty()) {
        let mut out = String::with_capacity(text.len());
        let mut rest = text.as_str();
        while let Some(at) = rest.find(root.as_str()) {
            let (before, from) = rest.split_at(at);
            let after = &from[root.len()..];
            let joined = before.chars().next_back().is_some_and(path_char);
            out.push_str(before);
            match after.chars().next() {
                _ if joined => {
                    out.push_str(root);
                    rest = after;
                }
                Some('/') => {
                    // `ROOT/x` → `x`; `ROOT/` at the end or before a non-path character → `.`.
                    let tail = &after[1..];
                    if !tail.chars().next().is_some_and(|c| path_char(c) && c != '/') {
                        out.push('.');
                    }
                    rest = tail;
                }
                Some(c) if path_char(c) => {
                    out.push_str(root);
                    rest = after;
                }
                _ => {
                    out.push('.');
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        text = out;
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> Vec<String> {
        vec!["/tmp/abc/ws".to_string()]
    }

    #[test]
    fn paths_in_the_workspace_become_relative_and_the_root_a_dot() {
        let text = "Working directory: /tmp/abc/ws\nFile \"/tmp/abc/ws/app.py\", line 3\n/tmp/abc/ws/ ok";
        assert_eq!(relativize(text, &root()), "Working directory: .\nFile \"app.py\", line 3\n. ok");
        assert_eq!(relativize("cd /tmp/abc/ws && ls /tmp/abc/ws/src/", &root()), "cd . && ls src/");
    }

    #[test]
    fn longer_paths_that_only_contain_the_root_are_kept() {
        for text in ["/tmp/abc/ws2/app.py", "/x/tmp/abc/ws/app.py", "/tmp/abc/ws.old", "a/tmp/abc/ws"] {
            assert_eq!(relativize(text, &root()), text);
        }
    }

    #[test]
    fn short_roots_are_never_taken_out() {
        assert!(roots(Path::new("/")).is_empty());
        assert!(roots(Path::new("/tmp")).is_empty());
        assert!(roots(Path::new("relative/path/here")).is_empty());
        assert_eq!(roots(Path::new("/no/such/dir/")), ["/no/such/dir"]);
    }

    #[test]
    fn the_same_text_in_two_directories_reads_the_same() {
        let one = relativize("error in /tmp/a/ws/x.py; cwd /tmp/a/ws", &["/tmp/a/ws".into()]);
        let two = relativize("error in /tmp/bbbb/ws/x.py; cwd /tmp/bbbb/ws", &["/tmp/bbbb/ws".into()]);
        assert_eq!(one, two);
        assert_eq!(one, "error in x.py; cwd .");
    }
}
