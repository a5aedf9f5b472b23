//! Path-scoped instruction rules meeting the loop (see [`crate::instructions::rules`]): a rule is
//! loaded, as an injected message, after the first call that reads a file it applies to.

use std::path::PathBuf;

use lathe_protocol::{LedgerItem, ToolCall, UserMessage};

use super::Agent;

impl Agent {
    /// After a response's calls ran: loads each rule matching a file that `calls` read (and that is
    /// not already in the conversation), as an injected message after the results. A compaction
    /// that summarized a rule away lets it load again on the next matching read.
    pub(super) fn load_rules_for(&mut self, calls: &[ToolCall]) {
        if self.rules.rules.is_empty() {
            return;
        }
        let read: Vec<PathBuf> = calls
            .iter()
            .filter(|call| call.name == "read_file")
            .filter_map(|call| call.arguments.get("path").and_then(|path| path.as_str()))
            .map(|path| self.ctx.resolve(path))
            .collect();
        let due: Vec<String> =
            self.rules.due(&read).filter(|message| !self.transcript.sends_injected(message)).collect();
        for message in due {
            self.append(LedgerItem::User(UserMessage::injected(message)));
        }
    }
}
