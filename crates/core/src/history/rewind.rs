//! Rewinding: which user turns there are, what a rewind to one of them would change on disk, doing
//! it, and replaying recorded rewinds when a session file is loaded.

use std::collections::HashSet;
use std::path::Path;

use lathe_protocol::{FileRewind, LedgerItem, Meta, RewindAction, UserOrigin, UserTurn};

use super::{FileHistory, message_text};

/// A rewind that cannot be done.
#[derive(Debug, thiserror::Error)]
pub enum RewindError {
    /// There is no such user turn.
    #[error("there is no user turn {turn} (the conversation has {count})")]
    NoSuchTurn {
        /// The turn asked for.
        turn: u32,
        /// User turns in the conversation.
        count: u32,
    },
    /// The session keeps no file history (nothing is saved).
    #[error("this session keeps no file history (its session directory cannot be written)")]
    NoHistory,
    /// A file could not be restored; files handled before it were restored.
    #[error("cannot restore {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

/// Ledger indices of the user's own messages, in order: entry `n - 1` starts user turn `n`.
pub fn turn_starts(items: &[LedgerItem]) -> Vec<usize> {
    items
        .iter()
        .enumerate()
        .filter(|(_, item)| matches!(item, LedgerItem::User(message) if message.origin == UserOrigin::User))
        .map(|(index, _)| index)
        .collect()
}

/// Replays the [`Meta::Rewind`] items of a file's `items`: each one drops the items from its turn's
/// user message up to itself. The result is the conversation the session had when it was written.
pub fn apply_rewinds(items: Vec<LedgerItem>) -> Vec<LedgerItem> {
    if !items.iter().any(|item| matches!(item, LedgerItem::Meta(Meta::Rewind { .. }))) {
        return items;
    }
    let mut kept: Vec<LedgerItem> = Vec::with_capacity(items.len());
    let mut starts: Vec<usize> = Vec::new();
    for item in items {
        match &item {
            LedgerItem::Meta(Meta::Rewind { turn }) => {
                if let Some(&start) = (*turn as usize).checked_sub(1).and_then(|index| starts.get(index)) {
                    kept.truncate(start);
                    starts.truncate(*turn as usize - 1);
                }
            }
            LedgerItem::User(message) if message.origin == UserOrigin::User => starts.push(kept.len()),
            LedgerItem::User(_)
            | LedgerItem::Assistant(_)
            | LedgerItem::ToolResult(_)
            | LedgerItem::Compaction(_)
            | LedgerItem::Meta(_) => {}
        }
        kept.push(item);
    }
    kept
}

/// What a rewind to user turn `turn` would do: for every file snapshotted in that turn or later,
/// the state its first such snapshot saved, compared with the disk now. Files already in that
/// state are left out.
pub fn plan(items: &[LedgerItem], history: &FileHistory, turn: u32) -> Result<Vec<Planned>, RewindError> {
    let starts = turn_starts(items);
    let count = starts.len() as u32;
    let start = match (turn as usize).checked_sub(1).and_then(|index| starts.get(index)) {
        Some(start) => *start,
        None => return Err(RewindError::NoSuchTurn { turn, count }),
    };
    let mut first: Vec<(String, Option<String>)> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for item in &items[start..] {
        if let LedgerItem::Meta(Meta::FileSnapshot { path, blob, .. }) = item
            && seen.insert(path.as_str())
        {
            first.push((path.clone(), blob.clone()));
        }
    }
    let mut planned = Vec::new();
    for (path, blob) in first {
        let current = std::fs::read(&path).ok();
        let action = match (&blob, &current) {
            (None, None) => continue,
            (None, Some(_)) => RewindAction::Delete,
            (Some(_), None) => RewindAction::Recreate,
            (Some(blob), Some(bytes)) => {
                let same = history.read(blob).map(|saved| saved == *bytes).unwrap_or(false);
                if same {
                    continue;
                }
                RewindAction::Restore
            }
        };
        planned.push(Planned { file: FileRewind { path, action }, blob });
    }
    Ok(planned)
}

/// One step of a rewind: the file, what happens to it, and the saved bytes to write back.
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    /// The file and the action, as shown to the user.
    pub file: FileRewind,
    /// The saved state to write back (`None` for a delete).
    pub blob: Option<String>,
}

impl Planned {
    /// Carries out this step.
    pub fn apply(&self, history: &FileHistory) -> Result<(), RewindError> {
        let io = |source| RewindError::Io { path: self.file.path.clone(), source };
        let path = Path::new(&self.file.path);
        match &self.blob {
            None => match std::fs::remove_file(path) {
                Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(io(error)),
                Ok(()) | Err(_) => Ok(()),
            },
            Some(blob) => {
                let bytes = history.read(blob).map_err(io)?;
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).map_err(io)?;
                }
                std::fs::write(path, bytes).map_err(io)
            }
        }
    }
}

/// Every user turn with the files a rewind to it would change.
pub fn user_turns(items: &[LedgerItem], history: Option<&FileHistory>) -> Vec<UserTurn> {
    turn_starts(items)
        .iter()
        .enumerate()
        .map(|(index, start)| {
            let turn = index as u32 + 1;
            let prompt = match &items[*start] {
                LedgerItem::User(message) => message_text(message),
                LedgerItem::Assistant(_)
                | LedgerItem::ToolResult(_)
                | LedgerItem::Compaction(_)
                | LedgerItem::Meta(_) => String::new(),
            };
            let files = history
                .and_then(|history| plan(items, history, turn).ok())
                .map(|planned| planned.into_iter().map(|step| step.file).collect())
                .unwrap_or_default();
            UserTurn { turn, prompt, files }
        })
        .collect()
}
