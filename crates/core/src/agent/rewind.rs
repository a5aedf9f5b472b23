//! The agent's side of file history: saving files before calls change them, listing user turns,
//! and rewinding (see [`crate::history`] for the storage and the rules).

use lathe_protocol::{FileRewind, LedgerItem, Meta, ToolCall};

use super::Agent;
use crate::history::{self, RewindError};

/// What a rewind did.
#[derive(Debug, Clone, PartialEq)]
pub struct Rewound {
    /// The user turn rewound to.
    pub turn: u32,
    /// Its prompt, for the front end to offer again.
    pub prompt: String,
    /// The files restored, re-created or deleted.
    pub files: Vec<FileRewind>,
}

impl Agent {
    /// The current user turn (1-based; 0 before the first message).
    pub fn user_turn(&self) -> u32 {
        history::turn_starts(self.transcript.items()).len() as u32
    }

    /// Saves the files `calls` would change (memory files included), once per file and user turn, recording each in the
    /// ledger before any of the calls runs. A file that cannot be saved gets a warning.
    pub(crate) fn snapshot_files(&mut self, calls: &[ToolCall]) {
        let Some(store) = self.transcript.history().cloned() else { return };
        let turn = self.user_turn();
        if turn == 0 {
            return;
        }
        let start = history::turn_starts(self.transcript.items()).last().copied().unwrap_or(0);
        let paths: Vec<_> = calls
            .iter()
            .flat_map(|call| {
                let file = history::changed_path(call).map(|path| self.ctx.resolve(path));
                file.into_iter().chain(self.memory_paths(call))
            })
            .collect();
        for path in paths {
            let name = path.display().to_string();
            let saved = self.transcript.items()[start..].iter().any(
                |item| matches!(item, LedgerItem::Meta(Meta::FileSnapshot { path, .. }) if *path == name),
            );
            if saved {
                continue;
            }
            match store.save(&path) {
                Ok(blob) => self.append(LedgerItem::Meta(Meta::FileSnapshot { turn, path: name, blob })),
                Err(error) => self
                    .transcript
                    .warn(format!("file history: cannot save {name} ({error}); /rewind will not restore it")),
            }
        }
    }

    /// The user turns of the conversation with the files a rewind to each would change.
    pub fn user_turns(&self) -> Vec<lathe_protocol::UserTurn> {
        history::user_turns(self.transcript.items(), self.transcript.history())
    }

    /// What a rewind to `turn` would change on disk.
    pub fn rewind_preview(&self, turn: u32) -> Result<Vec<FileRewind>, RewindError> {
        let store = self.transcript.history().ok_or(RewindError::NoHistory)?;
        Ok(history::plan(self.transcript.items(), store, turn)?.into_iter().map(|step| step.file).collect())
    }

    /// Restores the files changed in user turn `turn` and later to their state before it, then
    /// cuts the conversation just before that turn's message (recorded as [`Meta::Rewind`]).
    /// On an error, files handled before the failing one are restored and the conversation is
    /// left as it was.
    pub fn rewind(&mut self, turn: u32) -> Result<Rewound, RewindError> {
        let store = self.transcript.history().cloned().ok_or(RewindError::NoHistory)?;
        let steps = history::plan(self.transcript.items(), &store, turn)?;
        for step in &steps {
            step.apply(&store)?;
        }
        let starts = history::turn_starts(self.transcript.items());
        let count = starts.len() as u32;
        let start = *(turn as usize)
            .checked_sub(1)
            .and_then(|index| starts.get(index))
            .ok_or(RewindError::NoSuchTurn { turn, count })?;
        let prompt = match &self.transcript.items()[start] {
            LedgerItem::User(message) => history::message_text(message),
            LedgerItem::Assistant(_)
            | LedgerItem::ToolResult(_)
            | LedgerItem::Compaction(_)
            | LedgerItem::Meta(_) => String::new(),
        };
        self.transcript.truncate(start);
        self.append(LedgerItem::Meta(Meta::Rewind { turn }));
        self.sync();
        Ok(Rewound { turn, prompt, files: steps.into_iter().map(|step| step.file).collect() })
    }
}
