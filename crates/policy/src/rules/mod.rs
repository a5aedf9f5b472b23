//! Permission rules, compatible with Claude Code's settings (FEATURES.md §D "Rules").
//!
//! A rule is a tool name, optionally with a specifier in parentheses:
//!
//! | form | matches |
//! |---|---|
//! | `Bash`, `Read`, `shell`, `mcp__server`, `mcp__server__tool` | every call of that tool (or server) |
//! | `Bash(npm run test)` | exactly that command |
//! | `Bash(git diff *)` | `git diff` and `git diff …` (word boundary), not `git diffx` |
//! | `Bash(git diff*)` | anything starting with `git diff` |
//! | `Bash(npm test:*)` | the legacy prefix form, like `Bash(npm test *)` |
//! | `Read(./src/**)`, `Edit(/docs/*.md)`, `Read(//etc/hosts)`, `Read(~/.ssh/**)`, `Read(.env)` | gitignore-style paths: `//` absolute, `~/` home, `/` the settings file's project (home for user files), `./path` and `dir/path` the working directory (in every file, user files too), a bare name at any depth |
//! | `WebFetch(domain:example.com)`, `WebFetch(domain:127.0.0.1)` | fetches from that host (not its subdomains) |
//! | `WebFetch(domain:*.example.com)` | fetches from its subdomains (not `example.com` itself) |
//!
//! Claude's tool names map onto Lathe's (`Bash`→`shell`, `Read`→`read_file`, `Edit`→`edit_file`,
//! `Write`→`write_file`, `Glob`→`glob`, `Grep`→`grep`, `LS`→`list_dir`, `WebFetch`→`web_fetch`); a
//! `Read(…)` path rule covers every reading tool (`read_file`, `grep`, `glob`, `list_dir`) and an
//! `Edit(…)`/`Write(…)` path rule every writing one. A shell rule is matched against each simple
//! command of a command line on its own (see [`crate::shell`]).

mod pattern;

use std::fmt;
use std::path::Path;

use globset::{GlobBuilder, GlobMatcher};

pub use pattern::CommandPattern;

/// Which list a rule is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RuleKind {
    /// `permissions.deny`: binds in every mode.
    Deny,
    /// `permissions.ask`: always asks.
    Ask,
    /// `permissions.allow`: runs without asking.
    Allow,
}

impl RuleKind {
    /// The settings key: `deny`, `ask`, `allow`.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleKind::Deny => "deny",
            RuleKind::Ask => "ask",
            RuleKind::Allow => "allow",
        }
    }
}

/// The kind of tool a rule's name refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolName {
    /// `Bash` / `shell`.
    Shell,
    /// `Read` / `read_file`.
    Read,
    /// `Edit` / `edit_file`.
    Edit,
    /// `Write` / `write_file`.
    Write,
    /// Any other name, in Lathe's spelling (`glob`, `grep`, `list_dir`, `web_fetch`, `mcp__…`).
    Other(String),
}

impl ToolName {
    /// Parses a rule's tool name, mapping Claude's names to Lathe's
    /// ([`lathe_protocol::tool_names`]).
    pub fn parse(name: &str) -> ToolName {
        match lathe_protocol::tool_names::lathe_name(name) {
            Some("shell") => ToolName::Shell,
            Some("read_file") => ToolName::Read,
            Some("edit_file") => ToolName::Edit,
            Some("write_file") => ToolName::Write,
            Some(other) => ToolName::Other(other.to_string()),
            None => ToolName::Other(name.to_string()),
        }
    }

    /// Whether this name is Lathe's `tool`.
    pub fn is(&self, tool: &str) -> bool {
        match self {
            ToolName::Shell => tool == "shell",
            ToolName::Read => tool == "read_file",
            ToolName::Edit => tool == "edit_file",
            ToolName::Write => tool == "write_file",
            ToolName::Other(name) => name == tool,
        }
    }
}

/// What a rule's specifier says.
#[derive(Debug, Clone)]
pub enum Specifier {
    /// No parentheses (or `Bash(*)`): every call of the tool.
    All,
    /// A shell command pattern.
    Command(CommandPattern),
    /// A gitignore-style path pattern, compiled against absolute paths.
    Paths(Vec<GlobMatcher>),
    /// `domain:host` for `WebFetch`.
    Domain(String),
    /// `Memory(project/**)`: globs over an entry's virtual path below `/memories/`.
    Memory(Vec<GlobMatcher>),
    /// MCP: `mcp__server` (every tool of the server) or `mcp__server__tool` (`*` allowed).
    Mcp {
        /// The server name.
        server: String,
        /// The tool pattern, `None` for every tool.
        tool: Option<String>,
    },
}

/// One parsed rule and where it came from.
#[derive(Debug, Clone)]
pub struct Rule {
    /// The rule as written (`Bash(git diff *)`).
    pub text: String,
    /// Which list it is in.
    pub kind: RuleKind,
    /// The settings file it came from (or `session` for rules approved in this session).
    pub source: String,
    /// Whether that file is inside the project (`.claude/…`, `.lathe/…`): a repository's own
    /// settings never allow writes to the user's memory (`Memory(user/…)`).
    pub project: bool,
    /// The tool it names.
    pub tool: ToolName,
    /// What it matches.
    pub specifier: Specifier,
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} rule `{}` in {}", self.kind.as_str(), self.text, self.source)
    }
}

/// Why a rule could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// An empty string.
    #[error("the rule is empty")]
    Empty,
    /// `(` without `)` or text after `)`.
    #[error("unbalanced parentheses")]
    Unbalanced,
    /// `WebFetch(…)` without `domain:`.
    #[error("WebFetch rules take `domain:HOST`")]
    Domain,
    /// A path pattern globset cannot compile.
    #[error("invalid path pattern: {0}")]
    Glob(String),
    /// A tool name with characters no tool has.
    #[error("`{0}` is not a tool name")]
    Name(String),
}

/// The directories path patterns are relative to (Claude Code's rule, in every settings file:
/// <https://docs.anthropic.com/en/docs/claude-code/iam#read-%26-edit>).
#[derive(Debug, Clone, Copy)]
pub struct Anchors<'a> {
    /// What `/path` is relative to: the settings file's project (the home directory for user
    /// settings).
    pub root: &'a Path,
    /// What `path` and `./path` are relative to: the working directory, whichever file the rule
    /// is in.
    pub cwd: &'a Path,
    /// What `~/` means.
    pub home: Option<&'a Path>,
}

impl Rule {
    /// Parses `text` as a rule of `kind` from `source`.
    pub fn parse(text: &str, kind: RuleKind, source: &str, anchors: Anchors<'_>) -> Result<Rule, RuleError> {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(RuleError::Empty);
        }
        let (name, inner) = match trimmed.find('(') {
            None if trimmed.contains(')') => return Err(RuleError::Unbalanced),
            None => (trimmed, None),
            Some(open) => {
                let Some(inner) = trimmed[open + 1..].strip_suffix(')') else {
                    return Err(RuleError::Unbalanced);
                };
                (&trimmed[..open], Some(inner))
            }
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return Err(RuleError::Name(name.to_string()));
        }
        if inner.is_some_and(|inner| inner.matches('(').count() != inner.matches(')').count()) {
            return Err(RuleError::Unbalanced);
        }
        let tool = ToolName::parse(name);
        let specifier = match (inner.map(str::trim), &tool) {
            (None | Some("") | Some("*"), _) if !name.starts_with("mcp__") => Specifier::All,
            (None, _) => mcp(name),
            (Some(inner), ToolName::Shell) => Specifier::Command(CommandPattern::new(inner)),
            (Some(inner), ToolName::Read | ToolName::Edit | ToolName::Write) => {
                Specifier::Paths(path_globs(inner, anchors)?)
            }
            (Some(inner), ToolName::Other(other)) if other == "web_fetch" => match inner
                .strip_prefix("domain:")
            {
                Some(host) if !host.trim().is_empty() => Specifier::Domain(host.trim().to_ascii_lowercase()),
                _ => return Err(RuleError::Domain),
            },
            (Some(inner), ToolName::Other(other)) if other == "memory" => {
                Specifier::Memory(memory_globs(inner)?)
            }
            (Some(inner), ToolName::Other(other))
                if matches!(other.as_str(), "glob" | "grep" | "list_dir") =>
            {
                Specifier::Paths(path_globs(inner, anchors)?)
            }
            (Some(_), ToolName::Other(_)) => Specifier::All,
        };
        Ok(Rule {
            text: trimmed.to_string(),
            kind,
            source: source.to_string(),
            project: false,
            tool,
            specifier,
        })
    }

    /// Whether the rule names every call of its tool (`Bash`, `Bash(*)`): such an allow never
    /// lets a destructive command through.
    pub fn is_blanket(&self) -> bool {
        match &self.specifier {
            Specifier::All => true,
            Specifier::Command(pattern) => pattern.is_blanket(),
            Specifier::Paths(_) | Specifier::Domain(_) | Specifier::Mcp { .. } | Specifier::Memory(_) => {
                false
            }
        }
    }

    /// Whether the rule matches a call of `tool` as a whole (bare names, MCP names).
    pub fn matches_tool(&self, tool: &str) -> bool {
        match &self.specifier {
            Specifier::All => self.tool.is(tool),
            Specifier::Mcp { server, tool: pattern } => {
                let Some(rest) =
                    tool.strip_prefix("mcp__").and_then(|rest| rest.strip_prefix(server.as_str()))
                else {
                    return false;
                };
                match (rest.strip_prefix("__"), pattern) {
                    (Some(_), None) => true,
                    (Some(name), Some(pattern)) => pattern::wildcard(pattern, name),
                    (None, _) => false,
                }
            }
            Specifier::Command(_) | Specifier::Paths(_) | Specifier::Domain(_) | Specifier::Memory(_) => {
                false
            }
        }
    }

    /// Whether the rule matches a memory call on `path` (an entry's virtual path below
    /// `/memories/`, `project/pnpm.md`): `Memory` covers every memory call, `Memory(project/**)`
    /// those whose path its globs match. `write` is kept for symmetry with paths; memory rules
    /// cover reads and writes alike.
    pub fn matches_memory(&self, path: &str, write: bool) -> bool {
        let _ = write;
        match &self.specifier {
            Specifier::Memory(globs) => globs.iter().any(|glob| glob.is_match(path)),
            Specifier::All => self.tool.is("memory"),
            Specifier::Command(_) | Specifier::Paths(_) | Specifier::Domain(_) | Specifier::Mcp { .. } => {
                false
            }
        }
    }

    /// Whether the rule matches one simple command (its rule text, see
    /// [`crate::shell::SimpleCommand::rule_text`]).
    pub fn matches_command(&self, text: &str) -> bool {
        match &self.specifier {
            Specifier::Command(pattern) => pattern.matches(text),
            Specifier::All => self.tool == ToolName::Shell,
            Specifier::Paths(_) | Specifier::Domain(_) | Specifier::Mcp { .. } | Specifier::Memory(_) => {
                false
            }
        }
    }

    /// Whether the rule matches reading (`write == false`) or writing `paths` with `tool`: rules of
    /// `Read` cover every reading tool, of `Edit`/`Write` every writing tool (with or without a path).
    pub fn matches_path(&self, tool: &str, write: bool, paths: &[&Path]) -> bool {
        let covers = match &self.tool {
            ToolName::Read => !write,
            ToolName::Edit | ToolName::Write => write,
            ToolName::Shell => false,
            ToolName::Other(name) => name == tool,
        };
        match &self.specifier {
            Specifier::Paths(globs) => {
                covers && paths.iter().any(|path| globs.iter().any(|glob| glob.is_match(path)))
            }
            Specifier::All => covers,
            Specifier::Command(_) | Specifier::Domain(_) | Specifier::Mcp { .. } | Specifier::Memory(_) => {
                false
            }
        }
    }

    /// Whether the rule names exactly `host` (`WebFetch(domain:10.0.0.5)`: no `*.` wildcard, not a
    /// bare `WebFetch`), compared without regard to case.
    pub fn names_host(&self, host: &str) -> bool {
        match &self.specifier {
            Specifier::Domain(domain) => !domain.starts_with("*.") && domain.eq_ignore_ascii_case(host),
            Specifier::All
            | Specifier::Command(_)
            | Specifier::Paths(_)
            | Specifier::Mcp { .. }
            | Specifier::Memory(_) => false,
        }
    }

    /// Whether the rule matches a fetch from `host`: `WebFetch(domain:docs.rs)` that host only
    /// (not its subdomains), `WebFetch(domain:*.docs.rs)` its subdomains (not `docs.rs` itself), a
    /// bare `WebFetch` every host.
    pub fn matches_domain(&self, host: &str) -> bool {
        match &self.specifier {
            Specifier::Domain(domain) => match domain.strip_prefix("*.") {
                Some(parent) => host.ends_with(&format!(".{parent}")),
                None => host.eq_ignore_ascii_case(domain),
            },
            Specifier::All => self.tool.is("web_fetch"),
            Specifier::Command(_) | Specifier::Paths(_) | Specifier::Mcp { .. } | Specifier::Memory(_) => {
                false
            }
        }
    }
}

/// Compiles a `Memory(…)` specifier: globs over virtual paths below `/memories/` (a leading
/// `/memories/` is dropped), each also covering what is beneath it (`project` = `project/**`).
fn memory_globs(pattern: &str) -> Result<Vec<GlobMatcher>, RuleError> {
    let body = pattern.trim();
    let body = body.strip_prefix("/memories/").or_else(|| body.strip_prefix("memories/")).unwrap_or(body);
    let body = body.trim_start_matches('/').trim_end_matches('/');
    if body.is_empty() {
        return Err(RuleError::Glob("empty memory path".into()));
    }
    let stem = body.trim_end_matches("/**");
    compile_globs(pattern, [body.to_string(), format!("{stem}/**")])
}

/// Compiles `variants` of the rule pattern `pattern` (`*` stays within one path segment).
fn compile_globs(
    pattern: &str,
    variants: impl IntoIterator<Item = String>,
) -> Result<Vec<GlobMatcher>, RuleError> {
    variants
        .into_iter()
        .map(|glob| {
            GlobBuilder::new(&glob)
                .literal_separator(true)
                .build()
                .map(|glob| glob.compile_matcher())
                .map_err(|e| RuleError::Glob(format!("{pattern}: {e}")))
        })
        .collect()
}

fn mcp(name: &str) -> Specifier {
    let rest = &name["mcp__".len()..];
    match rest.split_once("__") {
        Some((server, tool)) => Specifier::Mcp { server: server.to_string(), tool: Some(tool.to_string()) },
        None => Specifier::Mcp { server: rest.to_string(), tool: None },
    }
}

/// Compiles a gitignore-style path pattern into globs over absolute paths: the pattern itself and
/// everything beneath it.
fn path_globs(pattern: &str, anchors: Anchors<'_>) -> Result<Vec<GlobMatcher>, RuleError> {
    let escape = |path: &Path| globset::escape(&path.to_string_lossy());
    let body = pattern.trim_end_matches('/');
    let base = if let Some(rest) = body.strip_prefix("//") {
        format!("/{rest}")
    } else if let Some(rest) = body.strip_prefix("~/") {
        match anchors.home {
            Some(home) => format!("{}/{rest}", escape(home)),
            None => return Err(RuleError::Glob(format!("{pattern}: no home directory"))),
        }
    } else if let Some(rest) = body.strip_prefix('/') {
        format!("{}/{rest}", escape(anchors.root))
    } else if let Some(rest) = body.strip_prefix("./") {
        format!("{}/{rest}", escape(anchors.cwd))
    } else if body.contains('/') {
        format!("{}/{body}", escape(anchors.cwd))
    } else if body.is_empty() {
        return Err(RuleError::Glob("empty path".into()));
    } else {
        format!("**/{body}")
    };
    let base = base.replace("//", "/");
    let stem = base.trim_end_matches("/**").to_string();
    let mut variants = vec![base.clone(), format!("{stem}/**")];
    if stem != base && !stem.is_empty() {
        // `dir/**` also covers `dir` itself (a search rooted there).
        variants.push(stem);
    }
    compile_globs(pattern, variants)
}

/// All rules of a session: from the settings files, plus those approved with "always".
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    /// Every rule, in file order.
    pub rules: Vec<Rule>,
}

impl RuleSet {
    /// Whether some deny rule may forbid reading a path (a path rule, or a bare one such as
    /// `Read`): without one, no read needs checking path by path.
    pub fn denies_paths(&self) -> bool {
        self.rules.iter().any(|rule| {
            rule.kind == RuleKind::Deny && matches!(rule.specifier, Specifier::Paths(_) | Specifier::All)
        })
    }

    /// Whether some deny rule may forbid a memory call: a `Memory(…)` rule, or a bare rule that
    /// names the `memory` tool. Without one, no entry needs checking path by path.
    pub fn denies_memory(&self) -> bool {
        self.rules.iter().any(|rule| {
            rule.kind == RuleKind::Deny
                && match &rule.specifier {
                    Specifier::Memory(_) => true,
                    Specifier::All => rule.tool.is("memory"),
                    Specifier::Command(_)
                    | Specifier::Paths(_)
                    | Specifier::Domain(_)
                    | Specifier::Mcp { .. } => false,
                }
        })
    }

    /// The first rule of `kind` for which `test` holds.
    pub fn find(&self, kind: RuleKind, test: impl Fn(&Rule) -> bool) -> Option<&Rule> {
        self.rules.iter().filter(|rule| rule.kind == kind).find(|rule| test(rule))
    }
}

#[cfg(test)]
#[path = "rules_tests.rs"]
mod tests;
