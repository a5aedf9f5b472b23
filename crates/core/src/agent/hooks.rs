//! Where the agent loop meets hooks: the hook part ([`super::turn_hooks`]) decides, this file
//! records what it decided in the ledger.

use lathe_protocol::{AgentEvent, CompactionTrigger, LedgerItem, Meta, StopCause, UserMessage};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Agent;
use super::turn_hooks::StopChecks;

impl Agent {
    /// Runs SessionStart hooks (`source`: `startup` or `resume`); their context is added to the
    /// next user message. Returns the messages for the user.
    pub async fn session_start(&mut self, source: &str) -> Vec<String> {
        self.hooks.session_start(source).await
    }

    /// Runs SessionEnd hooks (`reason`: `prompt_input_exit`, `other`, …). Returns the messages for
    /// the user.
    pub async fn session_end(&self, reason: &str) -> Vec<String> {
        self.hooks.session_end(reason).await
    }

    /// Runs a sub-agent under the session's hooks: its tool calls meet PreToolUse and PostToolUse
    /// like the parent's, and its stop fires SubagentStop (an exit 2 makes it continue once).
    pub fn with_subagent_hooks(mut self, hooks: crate::hooks::Hooks) -> Self {
        self.hooks.set_for_subagent(hooks);
        self
    }

    /// PreCompact hooks before a compaction (see [`super::turn_hooks::TurnHooks::pre_compact`]).
    pub(super) async fn pre_compact(
        &self,
        trigger: CompactionTrigger,
        focus: Option<&str>,
        events: &mpsc::UnboundedSender<AgentEvent>,
    ) {
        self.hooks.pre_compact(trigger, focus, events).await;
    }

    /// UserPromptSubmit, then appends the session context (before the session's first user
    /// message) and the user's message with any hook context. Returns the cause to end the run
    /// with when a hook refused the prompt (it is then not recorded).
    pub(super) async fn submit(
        &mut self,
        input: UserMessage,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> Option<StopCause> {
        let mut input = match self.hooks.prompt(input, events, cancel).await {
            Ok(input) => input,
            Err(refusal) => return Some(refusal),
        };
        let new_session = !self.transcript.has_user_message();
        if let Some(context) = self.hooks.take_session_context(new_session).await {
            self.append(LedgerItem::User(UserMessage::injected(context)));
        }
        let recalled = self.recall(&mut input);
        self.append(LedgerItem::User(input));
        if let Some(record) = recalled {
            self.append(LedgerItem::Meta(Meta::MemoryRecall(record)));
        }
        None
    }

    /// The stop checks as the model ends its turn. `None` means continue the loop.
    ///
    /// First Lathe's own check: an `edit_file` this turn took a name out of the lines it replaced
    /// while the file still used it elsewhere (a rename done in one place), and the file still uses
    /// it. The model is told where, once per user turn, and continues. Then the Stop hooks (see
    /// [`super::turn_hooks::TurnHooks::stop`]); a block is added for the model.
    pub(super) async fn stop_hooks(
        &mut self,
        checks: &mut StopChecks,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> Option<StopCause> {
        let files = self.ctx.files.clone();
        let unfinished = tokio::task::spawn_blocking(move || files.unfinished_renames()).await.ok().flatten();
        if let Some(lines) = unfinished.filter(|_| checks.check_renames()) {
            self.append(LedgerItem::User(UserMessage::injected(format!(
                "Before you finish: your edits replaced a name on some lines, but the file still uses it:\n\
                 {lines}\nChange those lines too if the task renames it; if they should stay as they are, \
                 say so in your answer."
            ))));
            return None;
        }
        match self.hooks.stop(checks, events, cancel).await {
            Ok(()) => Some(StopCause::Completed),
            Err(reason) => {
                self.append(LedgerItem::User(UserMessage::injected(format!(
                    "A Stop hook asks you to continue before ending your turn:\n{reason}"
                ))));
                None
            }
        }
    }
}
