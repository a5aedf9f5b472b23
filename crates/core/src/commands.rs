//! Custom commands (FEATURES.md §H): Markdown prompt files users keep in `.lathe/commands/`,
//! `.claude/commands/` and the user-level folders ([`crate::definitions::search_dirs`]); a file in
//! a sub-folder gets a namespaced name (`frontend/lint.md` is `/frontend:lint`). A skill is also a
//! command (`/<skill-name> args`).
//!
//! Optional YAML frontmatter: `description`, `argument-hint`, `allowed-tools`, `model`. Expansion
//! of `/name args`, in this order: `$ARGUMENTS` (everything after the name) and `$1`…`$9`
//! (whitespace-separated, quotes group) → `` !`cmd` `` replaced by the command's output, run through
//! the `shell` tool only when the session's permission policy allows it without asking (otherwise the note
//! says why it did not run, and a warning is given) → `@path` naming an existing file appends that
//! file's contents. Nothing is scanned at start-up: `/name` is looked up by its path
//! ([`find`]); [`list`] scans for a front end's menu.
//!
//! `allowed-tools` (Claude's or Lathe's names), when given, restricts: `` !`cmd` `` runs only when
//! it names the shell, and the session host offers only those tools for the command's turn (the
//! session's tools come back after it); the permission policy still decides every call.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use lathe_policy::{Policy, Verdict};
use lathe_tools::{DynTool, ToolContext};
use serde::Deserialize;
use serde_json::json;

use crate::definitions::{Scope, search_dirs};
use crate::frontmatter::{FrontmatterError, NameList, read_body, read_head};
use crate::skills::SkillSet;
use crate::tool_scope::ToolList;

/// Largest file an `@path` include adds, in bytes; a larger one is cut with a note.
pub const MAX_INCLUDE_BYTES: usize = 64 * 1024;

#[derive(Debug, Default, Deserialize)]
struct CommandMeta {
    description: Option<String>,
    #[serde(rename = "argument-hint")]
    argument_hint: Option<String>,
    #[serde(default, rename = "allowed-tools")]
    allowed_tools: NameList,
    model: Option<String>,
}

/// One custom command file.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandDef {
    /// The name typed after `/` (`frontend:lint`).
    pub name: String,
    /// From the frontmatter, or the body's first line.
    pub description: String,
    /// What the arguments are (`[file] [message]`).
    pub argument_hint: Option<String>,
    /// `allowed-tools`, as written.
    pub allowed_tools: Vec<String>,
    /// The model this command runs on, when not the session's (`inherit` means the session's).
    pub model: Option<String>,
    /// The file.
    pub file: PathBuf,
    /// Project or user.
    pub scope: Scope,
    body_offset: u64,
}

impl CommandDef {
    fn load(name: String, file: &Path, scope: Scope) -> Result<CommandDef, FrontmatterError> {
        let head = read_head::<CommandMeta>(file)?;
        let meta = head.meta.unwrap_or_default();
        let description = match meta.description {
            Some(text) => crate::skills::one_line(&text),
            None => read_body(file, head.body_offset)?.lines().next().unwrap_or_default().trim().to_string(),
        };
        Ok(CommandDef {
            name,
            description,
            argument_hint: meta.argument_hint,
            allowed_tools: meta.allowed_tools.names().unwrap_or_default(),
            model: meta.model.filter(|model| !model.trim().is_empty() && model.trim() != "inherit"),
            file: file.to_path_buf(),
            scope,
            body_offset: head.body_offset,
        })
    }
}

/// The command called `name` (`frontend:lint`), from the first search folder holding its file.
pub fn find(workspace: &Path, lathe_home: &Path, name: &str) -> Result<Option<CommandDef>, FrontmatterError> {
    let parts: Vec<&str> = name.split(':').collect();
    if parts.iter().any(|part| part.is_empty() || *part == "." || *part == ".." || part.contains(['/', '\\']))
    {
        return Ok(None);
    }
    let relative: PathBuf = parts.iter().collect::<PathBuf>().with_extension("md");
    for (dir, scope) in search_dirs(workspace, lathe_home, "commands") {
        let file = dir.join(&relative);
        if file.is_file() {
            return CommandDef::load(name.to_string(), &file, scope).map(Some);
        }
    }
    Ok(None)
}

/// Every command, by name (the first folder wins on a clash), and a warning for each file that
/// could not be read or is shadowed.
pub fn list(workspace: &Path, lathe_home: &Path) -> (Vec<CommandDef>, Vec<String>) {
    let mut commands: Vec<CommandDef> = Vec::new();
    let mut warnings = Vec::new();
    for (dir, scope) in search_dirs(workspace, lathe_home, "commands") {
        let mut files = Vec::new();
        collect_md(&dir, &dir, 0, &mut files);
        files.sort();
        for (name, file) in files {
            if let Some(known) = commands.iter().find(|known| known.name == name) {
                warnings.push(format!(
                    "command /{name} in {} is shadowed by {}",
                    file.display(),
                    known.file.display()
                ));
                continue;
            }
            match CommandDef::load(name, &file, scope) {
                Ok(command) => commands.push(command),
                Err(error) => warnings.push(format!("command skipped: {error}")),
            }
        }
    }
    commands.sort_by(|a, b| a.name.cmp(&b.name));
    (commands, warnings)
}

fn collect_md(root: &Path, dir: &Path, depth: usize, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_dir() && depth < 3 {
            collect_md(root, &path, depth + 1, out);
        } else if path.extension().is_some_and(|ext| ext == "md")
            && let Ok(relative) = path.with_extension("").strip_prefix(root)
        {
            let name: Vec<String> =
                relative.components().map(|part| part.as_os_str().to_string_lossy().into_owned()).collect();
            out.push((name.join(":"), path));
        }
    }
}

/// What a `/name args` line became.
#[derive(Debug, Clone, PartialEq)]
pub struct Expansion {
    /// The command's name.
    pub name: String,
    /// The prompt to send.
    pub text: String,
    /// The model to run it on, when the command names one.
    pub model: Option<String>,
    /// `allowed-tools` of the command.
    pub allowed_tools: Vec<String>,
    /// Things the user should know (a `!` command that did not run, a missing include).
    pub warnings: Vec<String>,
}

/// What expansion needs from the session.
#[derive(Clone)]
pub struct ExpandContext {
    /// The workspace root.
    pub workspace: PathBuf,
    /// Lathe's home.
    pub lathe_home: PathBuf,
    /// The session's skills (`/<skill-name>` expands a skill).
    pub skills: Arc<SkillSet>,
    /// The session's permission policy (decides whether `` !`cmd` `` runs; an ask is a refusal).
    pub policy: Arc<Policy>,
    /// The `shell` tool, when the session has one.
    pub shell: Option<Arc<dyn DynTool>>,
    /// The tool context `` !`cmd` `` runs with.
    pub tool_ctx: ToolContext,
}

/// Expands `input` when it is `/name args` naming a custom command or a skill; `None` when it is
/// not (the text is then sent as it is). `Err` names the file that could not be read.
pub async fn expand(input: &str, ctx: &ExpandContext) -> Option<Result<Expansion, FrontmatterError>> {
    let rest = input.trim_start().strip_prefix('/')?;
    let (name, arguments) = match rest.find(char::is_whitespace) {
        Some(at) => (&rest[..at], rest[at..].trim()),
        None => (rest, ""),
    };
    if name.is_empty() {
        return None;
    }
    let (body, model, allowed_tools) = match find(&ctx.workspace, &ctx.lathe_home, name) {
        Err(error) => return Some(Err(error)),
        Ok(Some(command)) => match read_body(&command.file, command.body_offset) {
            Ok(body) => (body, command.model, command.allowed_tools),
            Err(error) => return Some(Err(error)),
        },
        Ok(None) => {
            let skill = ctx.skills.get(name)?;
            match skill.body() {
                Ok(body) => (body, None, skill.allowed_tools.clone()),
                Err(error) => return Some(Err(error)),
            }
        }
    };
    let mut warnings = Vec::new();
    let text = substitute_arguments(&body, arguments);
    // `allowed-tools`, when given, bind `` !`cmd` `` too, scopes included (`Bash(git status:*)`).
    const NO_SHELL: NoShell = ("this session has no shell tool", "no shell tool");
    const LEFT_OUT: NoShell = ("the command's allowed-tools leave out Bash", "allowed-tools leave out Bash");
    let shell = match &ctx.shell {
        None => Err(NO_SHELL),
        Some(shell) if allowed_tools.is_empty() => Ok(shell.clone()),
        Some(shell) => {
            let owner = format!("the allowed-tools of /{name}");
            ToolList::parse(&allowed_tools, &owner, &ctx.workspace).grant(shell.clone()).ok_or(LEFT_OUT)
        }
    };
    let text = run_bang_commands(&text, ctx, shell, &mut warnings).await;
    let text = include_files(&text, ctx, &mut warnings);
    Some(Ok(Expansion { name: name.to_string(), text, model, allowed_tools, warnings }))
}

/// Replaces `$ARGUMENTS` with `arguments` and `$1`…`$9` with its whitespace-separated words
/// (double or single quotes group words; a missing one becomes empty). When the body uses none of
/// them and `arguments` is not empty, the arguments are appended as a last paragraph.
pub fn substitute_arguments(body: &str, arguments: &str) -> String {
    let words = split_words(arguments);
    let mut out = String::with_capacity(body.len() + arguments.len());
    let mut used = false;
    let mut rest = body;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(arguments);
            used = true;
            rest = tail;
        } else if let Some(digit) = after.chars().next().filter(|ch| ('1'..='9').contains(ch)) {
            let index = digit as usize - '1' as usize;
            out.push_str(words.get(index).map(String::as_str).unwrap_or(""));
            used = true;
            rest = &after[1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    if !used && !arguments.is_empty() {
        out.push_str(&format!("\n\nARGUMENTS: {arguments}"));
    }
    out
}

fn split_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for ch in text.chars() {
        match quote {
            Some(q) if ch == q => quote = None,
            Some(_) => current.push(ch),
            None if ch == '"' || ch == '\'' => {
                quote = Some(ch);
                started = true;
            }
            None if ch.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut current));
                    started = false;
                }
            }
            None => {
                current.push(ch);
                started = true;
            }
        }
    }
    if started {
        words.push(current);
    }
    words
}

/// Why `` !`cmd` `` cannot run at all: the warning's words and the short form left in the prompt.
type NoShell = (&'static str, &'static str);

/// Replaces each `` !`cmd` `` with the output of `cmd` run by `shell` (the session's shell, scoped
/// by the command's `allowed-tools` when it has any; `Err` says why there is none), when the
/// permission policy lets it run without asking.
async fn run_bang_commands(
    text: &str,
    ctx: &ExpandContext,
    shell: Result<Arc<dyn DynTool>, NoShell>,
    warnings: &mut Vec<String>,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("!`") {
        let after = &rest[at + 2..];
        let Some(end) = after.find('`') else { break };
        out.push_str(&rest[..at]);
        let command = &after[..end];
        match &shell {
            Ok(shell) => out.push_str(&bang_output(command, shell.as_ref(), ctx, warnings).await),
            Err((why, short)) => {
                warnings.push(format!("!`{command}` not run: {why}"));
                out.push_str(&format!("[!`{command}` not run: {short}]"));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

async fn bang_output(
    command: &str,
    shell: &dyn DynTool,
    ctx: &ExpandContext,
    warnings: &mut Vec<String>,
) -> String {
    let args = json!({ "command": command });
    let decision = match shell.access(&args, &ctx.tool_ctx) {
        Ok(access) => ctx.policy.decide(shell.name(), &access).headless(),
        Err(error) => {
            warnings.push(format!("!`{command}` not run: {error}"));
            return format!("[!`{command}` not run: {error}]");
        }
    };
    match decision.verdict {
        Verdict::Allow => match shell.call(args, &ctx.tool_ctx).await {
            Ok(output) => output.text_content().trim_end().to_string(),
            Err(error) => {
                warnings.push(format!("!`{command}` failed: {error}"));
                format!("[!`{command}` failed: {error}]")
            }
        },
        Verdict::Ask | Verdict::Deny => {
            let reason = decision.reason;
            warnings.push(format!("!`{command}` in the command was not run: {reason}"));
            format!("[!`{command}` not run: {reason}]")
        }
    }
}

/// Appends the contents of every `@path` (at the start or after whitespace) naming a file.
fn include_files(text: &str, ctx: &ExpandContext, warnings: &mut Vec<String>) -> String {
    let mut included: Vec<String> = Vec::new();
    let mut out = text.to_string();
    for word in text.split_whitespace() {
        let Some(path) = word.strip_prefix('@') else { continue };
        let path = path.trim_end_matches([',', '.', ';', ':', ')', '!', '?']);
        if path.is_empty() || included.iter().any(|known| known == path) {
            continue;
        }
        let resolved = ctx.tool_ctx.resolve(path);
        if !resolved.is_file() {
            continue;
        }
        match std::fs::read(&resolved) {
            Ok(bytes) => {
                let cut = bytes.len() > MAX_INCLUDE_BYTES;
                let text = String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_INCLUDE_BYTES)]);
                out.push_str(&format!("\n\nContents of {path}:\n```\n{}\n```", text.trim_end()));
                if cut {
                    out.push_str(&format!("\n[{path} cut at {MAX_INCLUDE_BYTES} bytes]"));
                }
                included.push(path.to_string());
            }
            Err(error) => warnings.push(format!("@{path}: cannot read: {error}")),
        }
    }
    out
}

#[cfg(test)]
#[path = "commands_tests.rs"]
mod tests;
