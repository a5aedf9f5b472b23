//! The agent's side of long-term memory ([`crate::memory`]): recall attached to each user prompt,
//! and the memory files a `memory` call would change, for the file history.

use std::path::PathBuf;

use lathe_protocol::memory::MemoryRecall;
use lathe_protocol::{Content, ToolCall, UserMessage, UserOrigin};

use super::Agent;
use crate::history;
use crate::memory::MEMORY_TOOL;

impl Agent {
    /// Attaches the memory entries relevant to a user's prompt to its message (a marked block at
    /// its end) and returns the record of what was given; `None` without memory or when nothing
    /// is relevant. Records the turn the prompt starts, for entries written in it.
    pub(super) fn recall(&mut self, input: &mut UserMessage) -> Option<MemoryRecall> {
        let memory = self.memory.clone()?;
        let turn = self.user_turn() + 1;
        memory.set_turn(turn);
        if input.origin != UserOrigin::User {
            return None;
        }
        let recalled = memory.recall(&history::message_text(input), turn);
        tracing::debug!("memory recalled");
        let (block, record) = recalled?;
        input.content.push(Content::text(block));
        Some(record)
    }

    /// The memory files `call` would change (the entry and its scope's index), when it is a
    /// `memory` write that would succeed; they are saved to the file history before it runs.
    pub(super) fn memory_paths(&self, call: &ToolCall) -> Vec<PathBuf> {
        let Some(memory) = &self.memory else { return Vec::new() };
        if call.name != MEMORY_TOOL || call.incomplete.is_some() {
            return Vec::new();
        }
        let Ok(args) = serde_json::from_value::<crate::memory::MemoryArgs>(call.arguments.clone()) else {
            return Vec::new();
        };
        match crate::memory::plan(
            memory.roots(),
            &args,
            &memory.source(),
            chrono::Utc::now(),
            memory.repo_root(),
        ) {
            Ok(planned) => planned.writes.into_iter().map(|write| write.path).collect(),
            Err(_) => Vec::new(),
        }
    }
}
