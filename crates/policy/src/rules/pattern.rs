//! Shell command patterns of `Bash(…)` rules.
//!
//! `*` matches any text (spaces included). A pattern ending in ` *` also matches the command
//! without arguments, and the space keeps a word boundary: `git diff *` matches `git diff` and
//! `git diff HEAD` but not `git diffx`, while `git diff*` matches all three. The legacy suffix `:*`
//! means the same as ` *`. A pattern without `*` matches the command exactly.

/// A compiled `Bash(…)` specifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandPattern {
    /// The pattern with runs of spaces collapsed and the legacy `:*` rewritten to ` *`.
    pattern: String,
}

impl CommandPattern {
    /// Compiles `pattern`.
    pub fn new(pattern: &str) -> CommandPattern {
        let collapsed = pattern.split_whitespace().collect::<Vec<_>>().join(" ");
        let pattern = match collapsed.strip_suffix(":*") {
            Some(prefix) => format!("{} *", prefix.trim_end()),
            None => collapsed,
        };
        CommandPattern { pattern }
    }

    /// Whether it matches every command (`*`).
    pub fn is_blanket(&self) -> bool {
        self.pattern.chars().all(|c| c == '*' || c == ' ')
    }

    /// Whether it matches `command` (a simple command's rule text, words joined by one space).
    pub fn matches(&self, command: &str) -> bool {
        let collapsed;
        let command = if command.contains("  ") || command.starts_with(' ') || command.ends_with(' ') {
            collapsed = command.split_whitespace().collect::<Vec<_>>().join(" ");
            collapsed.as_str()
        } else {
            command
        };
        if let Some(prefix) = self.pattern.strip_suffix(" *")
            && wildcard(prefix, command)
        {
            return true;
        }
        wildcard(&self.pattern, command)
    }
}

/// Glob-style match where `*` matches any (possibly empty) text and everything else is literal.
pub(crate) fn wildcard(pattern: &str, text: &str) -> bool {
    let p = pattern.as_bytes();
    let t = text.as_bytes();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == b'*' {
        pi += 1;
    }
    pi == p.len()
}
