//! Where the agent loop meets hooks (see [`crate::hooks`]): the user's prompt (UserPromptSubmit,
//! plus context from SessionStart), the model ending its turn (Stop), and the session's start and
//! end. Tool-call hooks run in [`crate::exec`].

use lathe_protocol::{AgentEvent, CompactionTrigger, Content, LedgerItem, StopCause, UserMessage};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Agent;
use crate::hooks::{HookEvent, HookVerdict};

/// How hook context is put before the model: one block per hook output.
fn context_block(event: &str, text: &str) -> Content {
    Content::text(format!("<hook-context event=\"{event}\">\n{text}\n</hook-context>"))
}

fn warn(events: &mpsc::UnboundedSender<AgentEvent>, verdict: &HookVerdict) {
    for message in &verdict.messages {
        let _ = events.send(AgentEvent::Warning { message: message.clone() });
    }
}

/// What the stop of one user turn has already done: each check makes the model continue at most
/// once per user turn.
#[derive(Debug, Default)]
pub(super) struct StopChecks {
    /// A Stop hook blocked the stop once (reported to the next as `stop_hook_active`).
    hook_active: bool,
    /// The model was told about a rename its edits left unfinished.
    renames_checked: bool,
}

impl Agent {
    /// Runs SessionStart hooks (`source`: `startup` or `resume`); their context is added to the
    /// next user message. Returns the messages for the user.
    pub async fn session_start(&mut self, source: &str) -> Vec<String> {
        if self.hooks.is_empty(HookEvent::SessionStart) {
            return Vec::new();
        }
        let verdict = self.hooks.session_start(source).await;
        self.pending_context.extend(verdict.context.into_iter().map(|text| ("SessionStart", text)));
        verdict.messages
    }

    /// Runs SessionEnd hooks (`reason`: `prompt_input_exit`, `other`, …). Returns the messages for
    /// the user.
    pub async fn session_end(&self, reason: &str) -> Vec<String> {
        if self.hooks.is_empty(HookEvent::SessionEnd) {
            return Vec::new();
        }
        self.hooks.session_end(reason).await.messages
    }

    /// PreCompact hooks before a compaction (matcher `manual` for `/compact`, `auto` for automatic
    /// and overflow compactions; `custom_instructions` is the `/compact` focus). They cannot stop
    /// the compaction: their messages are shown to the user.
    pub(crate) async fn pre_compact(
        &self,
        trigger: CompactionTrigger,
        focus: Option<&str>,
        events: &mpsc::UnboundedSender<AgentEvent>,
    ) {
        if self.hooks.is_empty(HookEvent::PreCompact) {
            return;
        }
        let trigger = match trigger {
            CompactionTrigger::Manual => "manual",
            CompactionTrigger::Auto | CompactionTrigger::Overflow => "auto",
        };
        let verdict = self.hooks.pre_compact(trigger, focus.unwrap_or("")).await;
        warn(events, &verdict);
        if let Some(reason) = verdict.block.or(verdict.stop) {
            let _ = events.send(AgentEvent::Warning {
                message: format!("a PreCompact hook cannot stop a compaction; it goes on ({reason})"),
            });
        }
    }

    /// UserPromptSubmit, then appends the session context (before the session's first user
    /// message) and the user's message with any hook context. Returns the cause to end the run
    /// with when a hook refused the prompt (it is then not recorded).
    pub(super) async fn submit(
        &mut self,
        mut input: UserMessage,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> Option<StopCause> {
        if self.stop_event == HookEvent::Stop && !self.hooks.is_empty(HookEvent::UserPromptSubmit) {
            let prompt: Vec<&str> = input
                .content
                .iter()
                .filter_map(|content| match content {
                    Content::Text { text } => Some(text.as_str()),
                    Content::Image { .. } | Content::Thinking(_) | Content::ToolCall(_) => None,
                })
                .collect();
            let verdict = self.hooks.user_prompt_submit(&prompt.join("\n"), cancel).await;
            warn(events, &verdict);
            if let Some(reason) = verdict.block.or(verdict.stop) {
                return Some(StopCause::Hook {
                    reason: format!("a UserPromptSubmit hook refused the prompt: {reason}"),
                });
            }
            self.pending_context.extend(verdict.context.into_iter().map(|text| ("UserPromptSubmit", text)));
        }
        for (event, text) in std::mem::take(&mut self.pending_context) {
            input.content.push(context_block(event, &text));
        }
        let started_before = self.ledger.iter().any(|item| matches!(item, LedgerItem::User(_)));
        if let Some(context) = self.session_context.take().filter(|_| !started_before) {
            self.append(LedgerItem::User(UserMessage::injected(context)));
        }
        self.append(LedgerItem::User(input));
        None
    }

    /// Stop hooks as the model ends its turn. `None` means continue the loop: a hook blocked the
    /// stop (exit 2 or `decision: "block"`) and its reason was added for the model. A Stop hook can
    /// make the model continue once per user turn; the next stop reports `stop_hook_active` and a
    /// second block is shown to the user instead of looping.
    /// Runs a sub-agent under the session's hooks: its tool calls meet PreToolUse and PostToolUse
    /// like the parent's, and its stop fires SubagentStop (an exit 2 makes it continue once).
    pub fn with_subagent_hooks(mut self, hooks: crate::hooks::Hooks) -> Self {
        self.hooks = hooks;
        self.stop_event = HookEvent::SubagentStop;
        self
    }

    ///
    /// Before the hooks, Lathe's own check: an `edit_file` this turn took a name out of the lines
    /// it replaced while the file still used it elsewhere (a rename done in one place), and the file
    /// still uses it. The model is told where, once per user turn, and continues.
    pub(super) async fn stop_hooks(
        &mut self,
        checks: &mut StopChecks,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> Option<StopCause> {
        let files = self.ctx.files.clone();
        let unfinished = tokio::task::spawn_blocking(move || files.unfinished_renames()).await.ok().flatten();
        if let Some(lines) = unfinished.filter(|_| !checks.renames_checked) {
            checks.renames_checked = true;
            self.append(LedgerItem::User(UserMessage::injected(format!(
                "Before you finish: your edits replaced a name on some lines, but the file still uses it:\n\
                 {lines}\nChange those lines too if the task renames it; if they should stay as they are, \
                 say so in your answer."
            ))));
            return None;
        }
        let active = &mut checks.hook_active;
        if self.hooks.is_empty(self.stop_event) {
            return Some(StopCause::Completed);
        }
        let verdict = self.hooks.stop(self.stop_event, *active, cancel).await;
        warn(events, &verdict);
        if verdict.stop.is_some() || cancel.is_cancelled() {
            return Some(StopCause::Completed);
        }
        match verdict.block {
            Some(reason) if !*active => {
                *active = true;
                self.append(LedgerItem::User(UserMessage::injected(format!(
                    "A Stop hook asks you to continue before ending your turn:\n{reason}"
                ))));
                None
            }
            Some(reason) => {
                let _ = events.send(AgentEvent::Warning {
                    message: format!(
                        "a Stop hook blocked the stop again after the model already continued once this turn; \
                         stopping ({reason})"
                    ),
                });
                Some(StopCause::Completed)
            }
            None => Some(StopCause::Completed),
        }
    }
}
