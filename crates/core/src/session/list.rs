//! Summaries of a project's sessions, for `lathe sessions` and the resume picker: id, first prompt,
//! start date, user turns, estimated cost.

use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use lathe_protocol::{LedgerItem, Meta, UserOrigin};
use serde::Serialize;

use super::load;
use crate::pricing;

/// One session of a project.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionSummary {
    /// Session id (pass it to `--resume`).
    pub id: String,
    /// The session file.
    pub path: PathBuf,
    /// The first prompt the user typed (empty when there is none yet).
    pub first_prompt: String,
    /// When the session started, milliseconds since the Unix epoch (the file's modification time
    /// when the start record is missing).
    pub started_ms: u64,
    /// When the file was last written, milliseconds since the Unix epoch.
    pub updated_ms: u64,
    /// User turns in the conversation.
    pub turns: u32,
    /// Estimated cost in US dollars of every response in the file, from the model catalog's prices.
    pub cost_usd: f64,
    /// The model last used.
    pub model: String,
    /// Lines of the file that could not be read.
    pub skipped_lines: usize,
    /// Saving failed at some point; later items are missing.
    pub incomplete: bool,
}

/// Every session in `dir` (one project's folder), newest first. A folder that does not exist has
/// none; files that cannot be read are left out.
pub fn list(dir: &Path) -> Vec<SessionSummary> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut sessions: Vec<SessionSummary> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
        .filter_map(|path| summarise(&path))
        .collect();
    sessions.sort_by(|a, b| b.updated_ms.cmp(&a.updated_ms).then_with(|| b.id.cmp(&a.id)));
    sessions
}

fn summarise(path: &Path) -> Option<SessionSummary> {
    let updated_ms = std::fs::metadata(path)
        .and_then(|meta| meta.modified())
        .ok()
        .and_then(|time| time.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |duration| duration.as_millis() as u64);
    let loaded = load(path).ok()?;
    let mut summary = SessionSummary {
        id: loaded.id,
        path: path.to_path_buf(),
        first_prompt: String::new(),
        started_ms: updated_ms,
        updated_ms,
        turns: 0,
        cost_usd: 0.0,
        model: String::new(),
        skipped_lines: loaded.warnings.len(),
        incomplete: loaded.incomplete,
    };
    let mut provider = String::new();
    for item in &loaded.items {
        match item {
            LedgerItem::User(message) if message.origin == UserOrigin::User => {
                summary.turns += 1;
                if summary.first_prompt.is_empty() {
                    summary.first_prompt = crate::history::message_text(message);
                }
            }
            LedgerItem::Assistant(message) => {
                summary.cost_usd += pricing::cost(&message.model, &provider, &message.usage);
            }
            LedgerItem::Meta(Meta::SessionStart { model, provider: name, time_ms, .. }) => {
                summary.started_ms = *time_ms;
                summary.model.clone_from(model);
                provider.clone_from(name);
            }
            LedgerItem::Meta(Meta::ModelSwitch { model, provider: name }) => {
                summary.model.clone_from(model);
                provider.clone_from(name);
            }
            LedgerItem::User(_)
            | LedgerItem::ToolResult(_)
            | LedgerItem::Compaction(_)
            | LedgerItem::Meta(_) => {}
        }
    }
    Some(summary)
}
