//! Reproduce first (with verify-before-claiming): when a change task's prompt names the command
//! that shows the problem (`Running \`python3 tool.py\` fails with a NameError`), Lathe runs it
//! once before the first request and adds its output to the prompt, so the model starts from the
//! error instead of guessing at the file. It runs only when the permission policy allows the
//! command without asking (a headless denial or an ask leaves the prompt as it is), in the
//! session's sandbox, within [`TIME_LIMIT_MS`], through the session's `shell` tool (the local
//! model's adds its hint for a `NameError` of an unimported standard-library module).
//! The output is an injected user message in the ledger: no call of the model's, so it counts as
//! no check of a change. A prompt that asks to add a function or class gets, the same way, where
//! and how to add it ([`super::stated::adding_hint`]).

use lathe_policy::Verdict;
use lathe_protocol::{LedgerItem, UserMessage};
use tokio_util::sync::CancellationToken;

use super::Agent;
use super::verify::{asks_for_a_change, named_command};

/// Time limit of the command, in ms.
const TIME_LIMIT_MS: u64 = 30_000;

/// Characters of its output given to the model (the tail).
const OUTPUT_CHARS: usize = 1500;

impl Agent {
    /// Runs the command the run's prompt names, if it asks for a change and the policy allows the
    /// command, and appends what it printed (see the module doc).
    pub(super) async fn reproduce_first(&mut self, cancel: &CancellationToken) {
        if !self.verify_changes {
            return;
        }
        let prompt = match self.transcript.items().last() {
            Some(LedgerItem::User(message)) => message.text_content(),
            _ => return,
        };
        if !asks_for_a_change(&prompt) {
            return;
        }
        // A function or class to add: where it goes, before the model guesses.
        if let Some(hint) = super::stated::adding_hint(&prompt, &self.ctx.workspace) {
            self.append(LedgerItem::User(UserMessage::injected(format!("[hint]{hint}"))));
        }
        let Some(command) = named_command(&prompt) else { return };
        let Some(shell) = self.tools.get("shell") else { return };
        let args = serde_json::json!({ "command": command, "timeout_ms": TIME_LIMIT_MS });
        let Ok(access) = shell.access(&args, &self.ctx) else { return };
        if self.policy().decide(shell.name(), &access).verdict != Verdict::Allow {
            return;
        }
        let mut ctx = self.ctx.clone();
        ctx.cancel = cancel.child_token();
        let Ok(output) = shell.call(args, &ctx).await else { return };
        let text = output.text_content();
        let skip = text.chars().count().saturating_sub(OUTPUT_CHARS);
        let shown: String = text.chars().skip(skip).collect();
        self.append(LedgerItem::User(UserMessage::injected(format!(
            "[check] Before your first step, Lathe ran `{command}`:\n{}",
            shown.trim_end()
        ))));
    }
}
