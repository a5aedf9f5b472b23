//! Path-scoped rules: `.claude/rules/**/*.md` (in the repository root and in `~/.claude/rules`).
//! A rule whose frontmatter has `paths:` (one glob or a list) is loaded only once a file matching
//! one of its globs is read; its text is then added to the conversation as an injected message
//! right after that read's result. A rule without `paths:` applies everywhere and is part of the
//! system prompt's instructions.
//!
//! ```markdown
//! ---
//! paths:
//!   - "src/api/**/*.rs"
//!   - "tests/api/**"
//! ---
//! Every handler returns `ApiError`, never a bare string.
//! ```

use std::path::{Path, PathBuf};

use globset::{Glob, GlobSet, GlobSetBuilder};

/// One path-scoped rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// The rule file.
    pub path: PathBuf,
    /// The directory its globs are relative to (the repository root, or the workspace for the
    /// user's own rules).
    pub base: PathBuf,
    /// The globs as written.
    pub globs: Vec<String>,
    matcher: GlobSet,
    /// The rule's text (without the frontmatter).
    pub text: String,
}

impl Rule {
    /// A rule for `globs` (relative to `base`); `Err` names a glob that does not parse.
    pub fn new(path: PathBuf, base: PathBuf, globs: Vec<String>, text: String) -> Result<Rule, String> {
        let mut builder = GlobSetBuilder::new();
        for glob in &globs {
            builder.add(Glob::new(glob).map_err(|error| format!("glob `{glob}`: {error}"))?);
        }
        let matcher = builder.build().map_err(|error| error.to_string())?;
        Ok(Rule { path, base, globs, matcher, text })
    }

    /// Whether reading `file` (absolute) loads this rule.
    pub fn applies_to(&self, file: &Path) -> bool {
        file.strip_prefix(&self.base).is_ok_and(|relative| self.matcher.is_match(relative))
    }

    /// The injected message that loads it.
    pub fn message(&self) -> String {
        format!(
            "{}{} (they apply to files matching {}):\n{}",
            RULE_HEADER,
            self.path.display(),
            self.globs.join(", "),
            self.text.trim()
        )
    }
}

/// How an injected rule message starts.
const RULE_HEADER: &str = "Instructions from ";

/// The frontmatter of a Markdown file: its `paths:` globs (`None` without a `paths:` key) and
/// the text after it.
pub fn frontmatter(text: &str) -> (Option<Vec<String>>, &str) {
    let Some(rest) = text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n")) else {
        return (None, text);
    };
    let Some(end) = rest.lines().position(|line| line.trim_end() == "---") else { return (None, text) };
    let header: Vec<&str> = rest.lines().take(end).collect();
    let body_start = rest.lines().take(end + 1).map(|line| line.len() + 1).sum::<usize>().min(rest.len());
    let body = &rest[body_start..];
    let unquote = |value: &str| value.trim().trim_matches(['"', '\'']).to_string();
    let mut paths = None;
    for (index, line) in header.iter().enumerate() {
        let Some(value) = line.strip_prefix("paths:") else { continue };
        let value = value.trim();
        let mut globs: Vec<String> =
            if let Some(list) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
                list.split(',').map(unquote).collect()
            } else if !value.is_empty() {
                vec![unquote(value)]
            } else {
                header[index + 1..]
                    .iter()
                    .map_while(|item| item.trim_start().strip_prefix("- ").map(unquote))
                    .collect()
            };
        globs.retain(|glob| !glob.is_empty());
        paths = Some(globs);
    }
    (paths, body)
}

/// The rules of a session and which of them were loaded.
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    /// Every path-scoped rule found at start.
    pub rules: Vec<Rule>,
}

impl RuleSet {
    /// The messages of the rules that apply to any of `files` (absolute paths), in rule order.
    pub(crate) fn due<'a>(&'a self, files: &'a [PathBuf]) -> impl Iterator<Item = String> + 'a {
        self.rules.iter().filter(|rule| files.iter().any(|file| rule.applies_to(file))).map(Rule::message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontmatter_paths_as_a_list_inline_or_one_glob() {
        let (paths, body) =
            frontmatter("---\npaths:\n  - \"src/**/*.rs\"\n  - tests/**\n---\nUse ApiError.\n");
        assert_eq!(paths, Some(vec!["src/**/*.rs".to_string(), "tests/**".to_string()]));
        assert_eq!(body, "Use ApiError.\n");
        let (paths, _) = frontmatter("---\npaths: src/**/*.{ts,tsx}\n---\nx");
        assert_eq!(paths, Some(vec!["src/**/*.{ts,tsx}".to_string()]));
        let (paths, _) = frontmatter("---\npaths: [\"a/**\", 'b/*.md']\n---\nx");
        assert_eq!(paths, Some(vec!["a/**".to_string(), "b/*.md".to_string()]));
        let (paths, body) = frontmatter("# No frontmatter\n");
        assert_eq!((paths, body), (None, "# No frontmatter\n"));
    }

    #[test]
    fn a_rule_applies_to_matching_files_under_its_base() {
        let rule = Rule::new(
            "/r/.claude/rules/api.md".into(),
            "/r".into(),
            vec!["src/api/**/*.rs".into()],
            "t".into(),
        )
        .unwrap_or_else(|error| panic!("{error}"));
        assert!(rule.applies_to(Path::new("/r/src/api/v1/users.rs")));
        assert!(!rule.applies_to(Path::new("/r/src/cli/main.rs")));
        assert!(!rule.applies_to(Path::new("/elsewhere/src/api/x.rs")));
    }
}
