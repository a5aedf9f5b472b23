//! The `memory` tool: Anthropic's memory tool commands (`memory_20250818`: `view`, `create`,
//! `str_replace`, `insert`, `delete`, `rename`) over `/memories/user/…` and `/memories/project/…`
//! (<https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/memory-tool>), offered the same
//! way on every provider.
//!
//! A write is its own kind of access (`Access::Memory`, rules `Memory` / `Memory(project/**)`),
//! so the permission engine decides it like an edit; the dialog shows the entry's diff. What a
//! write changed is recorded in the ledger ([`lathe_protocol::memory::MemoryWrite`], with the
//! files saved to the session's file history first, so `/rewind` restores them); a value that looks
//! like a secret is refused before anything is written, and the refusal is recorded without it.
//! [`MemoryViewTool`] is the same tool with `view` only: read-only sessions and sub-agents get it.

use std::sync::Arc;

use lathe_protocol::memory::{MemoryRefusal, MemoryWrite};
use lathe_protocol::{FileChange, Meta, ResultView, ToolPreview};
use lathe_tools::builtin::{MAX_PREVIEW_DIFF_CHARS, unified_diff};
use lathe_tools::{Access, Effect, Tool, ToolContext, ToolError, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::session::SessionMemory;
use super::{MEMORY_TOOL, MemoryArgs, MemoryCommandName, MemoryError, Planned};

const DESCRIPTION: &str = "\
Memory across sessions: Markdown files in /memories/user/ (the user's, all projects) and \
/memories/project/ (this repository). Save stated preferences (\"always use pnpm\"), corrections, \
conventions not in the code, pointers to references; never secrets or what code or git history \
says. Optional YAML frontmatter: name, description, type (user|feedback|project|reference), \
evidence (paths).";

const VIEW_DESCRIPTION: &str = "\
Long-term memory kept across sessions, as Markdown files under /memories/user/ and \
/memories/project/; read-only here: command view shows a file or a directory.";

/// The `memory` tool with every command.
#[derive(Debug, Clone)]
pub struct MemoryTool {
    memory: Arc<SessionMemory>,
}

impl MemoryTool {
    /// The tool over a session's memory.
    pub fn new(memory: Arc<SessionMemory>) -> MemoryTool {
        MemoryTool { memory }
    }
}

/// The virtual path below `/memories/` a call names (`project/pnpm.md`), for rules: the path as
/// resolution normalises it (`//memories/user//a.md` is `user/a.md`), so a rule sees what would be
/// written; a path that does not resolve keeps its text (the call fails before it runs).
fn rule_path(memory: &SessionMemory, path: Option<&str>) -> String {
    let raw = path.unwrap_or("").trim();
    if let Ok(target) = super::paths::resolve_file(memory.roots(), raw, super::paths::Access::Read) {
        return format!("{}/{}", target.scope.as_str(), target.file);
    }
    let stripped = raw.trim_start_matches('/');
    let stripped = stripped.strip_prefix("memories").unwrap_or(stripped);
    stripped.trim_start_matches('/').to_string()
}

/// A planned write, refused when the text it would leave holds a secret (pieces of one spread
/// over several calls, or over `old_str` and what is around it).
fn checked(planned: Planned) -> Result<Planned, MemoryError> {
    let mut kinds: Vec<&'static str> = Vec::new();
    for write in &planned.writes {
        if let Some(after) = &write.after {
            let before = write.before.as_deref().unwrap_or("");
            for hit in super::secrets::find_secrets(after) {
                if !before.contains(&after[hit.start..hit.end]) && !kinds.contains(&hit.kind) {
                    kinds.push(hit.kind);
                }
            }
        }
    }
    if kinds.is_empty() { Ok(planned) } else { Err(MemoryError::Secret { kinds }) }
}

fn planned(memory: &SessionMemory, args: &MemoryArgs) -> Result<Planned, MemoryError> {
    super::plan(memory.roots(), args, &memory.source(), chrono::Utc::now(), memory.repo_root())
        .and_then(checked)
}

fn sha256(text: &Option<String>) -> Option<String> {
    text.as_ref().map(|text| hex::encode(Sha256::digest(text.as_bytes())))
}

impl Tool for MemoryTool {
    type Args = MemoryArgs;

    fn name(&self) -> &'static str {
        MEMORY_TOOL
    }

    fn description(&self) -> &'static str {
        DESCRIPTION
    }

    fn effect(&self) -> Effect {
        Effect::Mutating
    }

    fn access(&self, args: &MemoryArgs, _ctx: &ToolContext) -> Access {
        let write = args.command != MemoryCommandName::View;
        let named = if args.command == MemoryCommandName::Rename { &args.old_path } else { &args.path };
        Access::Memory { path: rule_path(&self.memory, named.as_deref()), write }
    }

    fn summary(&self, args: &Value) -> String {
        let command = args.get("command").and_then(Value::as_str).unwrap_or("?");
        let path = args.get("path").or_else(|| args.get("old_path")).and_then(Value::as_str).unwrap_or("");
        match args.get("new_path").and_then(Value::as_str) {
            Some(to) => format!("{command} {path} → {to}"),
            None => format!("{command} {path}"),
        }
    }

    fn preview(&self, args: &MemoryArgs, _ctx: &ToolContext) -> Option<ToolPreview> {
        if args.command == MemoryCommandName::View {
            return None;
        }
        let planned = planned(&self.memory, args).ok()?;
        let write = planned.writes.first()?;
        let shown = if args.command == MemoryCommandName::Rename { &args.new_path } else { &args.path };
        let label = format!("/memories/{}", rule_path(&self.memory, shown.as_deref()));
        let before = write.before.clone().unwrap_or_default();
        let after = write.after.clone().unwrap_or_default();
        let unified = unified_diff(&before, &after, &label, MAX_PREVIEW_DIFF_CHARS);
        let change = if write.before.is_some() { FileChange::Edit } else { FileChange::Write };
        Some(ToolPreview::Diff { path: label, unified, change })
    }

    fn precheck(&self, args: &MemoryArgs, ctx: &ToolContext) -> Result<(), ToolError> {
        if args.command == MemoryCommandName::View {
            return Ok(());
        }
        if args.command == MemoryCommandName::Rename {
            // The permission decision is on the old path; the new one must not escape a rule.
            let (from, to) = (
                rule_path(&self.memory, args.old_path.as_deref()),
                rule_path(&self.memory, args.new_path.as_deref()),
            );
            if from.split('/').next() != to.split('/').next() {
                return Err(ToolError::Failed(format!(
                    "memory: a rename stays within one scope (`{from}` to `{to}`): create the entry in the \
                     other scope and delete this one; nothing was written"
                )));
            }
            if let Some(policy) = &ctx.policy {
                let decision = policy.decide(MEMORY_TOOL, &Access::Memory { path: to.clone(), write: true });
                if decision.verdict == lathe_policy::Verdict::Deny {
                    return Err(ToolError::Refused(format!(
                        "memory: renaming to `{to}`: {}",
                        decision.reason
                    )));
                }
            }
        }
        match planned(&self.memory, args) {
            // A refused secret is answered by the run, which records the refusal.
            Ok(_) | Err(MemoryError::Secret { .. }) => Ok(()),
            Err(error) => Err(ToolError::Failed(self.memory.virtualize(&error.to_string()))),
        }
    }

    async fn run(&self, args: MemoryArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if args.command == MemoryCommandName::View {
            return view(&self.memory, args.path.as_deref(), args.view_range.as_deref());
        }
        let planned = match planned(&self.memory, &args) {
            Ok(planned) => planned,
            Err(MemoryError::Secret { kinds }) => {
                let error = MemoryError::Secret { kinds: kinds.clone() };
                let refusal = MemoryRefusal {
                    call_id: ctx.call_id.clone(),
                    kinds: kinds.iter().map(|kind| kind.to_string()).collect(),
                };
                return Ok(ToolOutput {
                    is_error: true,
                    ledger: vec![Meta::MemoryRefused(refusal)],
                    ..ToolOutput::text(error.to_string())
                });
            }
            Err(error) => return Err(ToolError::Failed(self.memory.virtualize(&error.to_string()))),
        };
        super::apply(&planned)
            .map_err(|error| ToolError::Failed(self.memory.virtualize(&error.to_string())))?;
        self.memory.reload();
        let ledger = planned
            .writes
            .iter()
            .map(|write| {
                let is_index = write.path.file_name().is_some_and(|name| name == super::INDEX_FILE);
                let id = if is_index {
                    let scope = write.path.parent().map(|dir| dir.display().to_string()).unwrap_or_default();
                    format!("index/{scope}")
                } else {
                    planned.id.clone()
                };
                Meta::MemoryWrite(MemoryWrite {
                    call_id: ctx.call_id.clone(),
                    id,
                    path: write.path.display().to_string(),
                    before: sha256(&write.before),
                    after: sha256(&write.after),
                })
            })
            .collect();
        Ok(ToolOutput {
            view: Some(ResultView::Line { text: planned.line.clone() }),
            ledger,
            ..ToolOutput::text(planned.message)
        })
    }
}

fn view(memory: &SessionMemory, path: Option<&str>, range: Option<&[i64]>) -> Result<ToolOutput, ToolError> {
    let path = path.unwrap_or("/memories");
    super::view_visible(memory.roots(), path, range, &|rule_path| memory.readable(rule_path))
        .map(|text| ToolOutput::text(super::secrets::redact_lines(&text)))
        .map_err(|error| ToolError::Failed(memory.virtualize(&error.to_string())))
}

/// The arguments of the view-only tool.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct MemoryViewArgs {
    /// Always `view`.
    pub command: ViewCommand,
    /// `/memories`, a scope (`/memories/project`) or a file.
    pub path: Option<String>,
    /// `[start, end]` lines of a file, 1-based; end -1 = to the end.
    pub view_range: Option<Vec<i64>>,
}

/// The one command of the view-only tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ViewCommand {
    /// Show a file or a directory.
    View,
}

/// The `memory` tool with `view` only (read-only sessions, sub-agents).
#[derive(Debug, Clone)]
pub struct MemoryViewTool {
    memory: Arc<SessionMemory>,
}

impl MemoryViewTool {
    /// The view-only tool over a session's memory.
    pub fn new(memory: Arc<SessionMemory>) -> MemoryViewTool {
        MemoryViewTool { memory }
    }
}

impl Tool for MemoryViewTool {
    type Args = MemoryViewArgs;

    fn name(&self) -> &'static str {
        MEMORY_TOOL
    }

    fn description(&self) -> &'static str {
        VIEW_DESCRIPTION
    }

    fn effect(&self) -> Effect {
        Effect::ReadOnly
    }

    fn access(&self, args: &MemoryViewArgs, _ctx: &ToolContext) -> Access {
        Access::Memory { path: rule_path(&self.memory, args.path.as_deref()), write: false }
    }

    async fn run(&self, args: MemoryViewArgs, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        view(&self.memory, args.path.as_deref(), args.view_range.as_deref())
    }
}
