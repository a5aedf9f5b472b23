//! The agent's hook part (see [`crate::hooks`]): the session's hooks as the loop meets them — the
//! user's prompt (UserPromptSubmit, plus context from SessionStart), the model ending its turn
//! (Stop, or SubagentStop for a sub-agent), compaction (PreCompact) and the session's start and
//! end — and the context hooks and the host left for the next user message. Tool-call hooks run in
//! [`crate::exec`].

use lathe_protocol::{AgentEvent, CompactionTrigger, Content, StopCause, UserMessage};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::hooks::{HookEvent, HookVerdict, Hooks};
use crate::prompt::RepositoryState;

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

impl StopChecks {
    /// Whether the unfinished-rename check is still due this turn; it is then marked done.
    pub(super) fn check_renames(&mut self) -> bool {
        !std::mem::replace(&mut self.renames_checked, true)
    }
}

/// The session's hooks and what they (and the host) left for the next user message.
pub(super) struct TurnHooks {
    hooks: Hooks,
    /// The hook event of this agent's stop: `Stop`, or `SubagentStop` for a sub-agent (whose
    /// prompt also skips UserPromptSubmit: it comes from the parent model, not the user).
    stop_event: HookEvent,
    /// Hook context (event name, text) waiting to be added to the next user message.
    pending_context: Vec<(&'static str, String)>,
    /// What a new session's first user message is preceded by (memory index, local environment).
    session_context: Option<String>,
    /// The repository's state, being gathered: at the front of the session context, or (`true`)
    /// deferred to the request after the first response.
    repository: Option<(RepositoryState, bool)>,
    /// The repository's state deferred by the first user message, for the request after a response.
    deferred_repository: Option<RepositoryState>,
}

impl Default for TurnHooks {
    fn default() -> TurnHooks {
        TurnHooks {
            hooks: Hooks::default(),
            stop_event: HookEvent::Stop,
            pending_context: Vec::new(),
            session_context: None,
            repository: None,
            deferred_repository: None,
        }
    }
}

impl TurnHooks {
    pub(super) fn set(&mut self, hooks: Hooks) {
        self.hooks = hooks;
    }

    /// A sub-agent's hooks: its stop fires SubagentStop, and its prompt skips UserPromptSubmit.
    pub(super) fn set_for_subagent(&mut self, hooks: Hooks) {
        self.hooks = hooks;
        self.stop_event = HookEvent::SubagentStop;
    }

    /// The hooks tool calls meet (PreToolUse, PostToolUse, Notification).
    pub(super) fn hooks(&self) -> &Hooks {
        &self.hooks
    }

    /// Keeps `context` for the session's first user message; nothing when it is blank.
    pub(super) fn set_session_context(&mut self, context: String) {
        self.session_context = Some(context).filter(|context| !context.trim().is_empty());
    }

    /// Keeps the repository's `state` for the session's first user message, or with
    /// `after_first_response` for the request after the first response.
    pub(super) fn set_repository_state(
        &mut self,
        state: Option<RepositoryState>,
        after_first_response: bool,
    ) {
        self.repository = state.map(|state| (state, after_first_response));
    }

    /// The session context, once, for a new session's first user message (`new_session`): the
    /// repository's state unless it is deferred (it then waits in
    /// [`TurnHooks::take_deferred_repository`]), then the rest. A resumed session drops both.
    pub(super) async fn take_session_context(&mut self, new_session: bool) -> Option<String> {
        let rest = self.session_context.take();
        let repository = self.repository.take();
        if !new_session {
            return None;
        }
        let mut context = match repository {
            Some((state, true)) => {
                self.deferred_repository = Some(state);
                String::new()
            }
            Some((state, false)) => state.text().await,
            None => String::new(),
        };
        context.push_str(&rest.unwrap_or_default());
        Some(context).filter(|context| !context.trim().is_empty())
    }

    /// Whether the repository's state waits for the request after a response.
    pub(super) fn defers_repository(&self) -> bool {
        self.deferred_repository.is_some()
    }

    /// The deferred repository state's text (waiting for git if it is still running), once.
    pub(super) async fn take_deferred_repository(&mut self) -> Option<String> {
        let state = self.deferred_repository.take()?;
        Some(state.text().await).filter(|text| !text.trim().is_empty())
    }

    /// SessionStart hooks (`source`: `startup` or `resume`); their context waits for the next user
    /// message. Returns the messages for the user.
    pub(super) async fn session_start(&mut self, source: &str) -> Vec<String> {
        if self.hooks.is_empty(HookEvent::SessionStart) {
            return Vec::new();
        }
        let verdict = self.hooks.session_start(source).await;
        self.pending_context.extend(verdict.context.into_iter().map(|text| ("SessionStart", text)));
        verdict.messages
    }

    /// SessionEnd hooks (`reason`: `prompt_input_exit`, `other`, …). Returns the messages for the
    /// user.
    pub(super) async fn session_end(&self, reason: &str) -> Vec<String> {
        if self.hooks.is_empty(HookEvent::SessionEnd) {
            return Vec::new();
        }
        self.hooks.session_end(reason).await.messages
    }

    /// PreCompact hooks (matcher `manual` for `/compact`, `auto` for automatic and overflow
    /// compactions; `custom_instructions` is the `/compact` focus). They cannot stop the
    /// compaction: their messages are shown to the user.
    pub(super) async fn pre_compact(
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

    /// UserPromptSubmit (a user's prompt only), then the waiting hook context added to `input`.
    /// Returns the cause to end the run with when a hook refused the prompt.
    pub(super) async fn prompt(
        &mut self,
        mut input: UserMessage,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> Result<UserMessage, StopCause> {
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
                return Err(StopCause::Hook {
                    reason: format!("a UserPromptSubmit hook refused the prompt: {reason}"),
                });
            }
            self.pending_context.extend(verdict.context.into_iter().map(|text| ("UserPromptSubmit", text)));
        }
        for (event, text) in std::mem::take(&mut self.pending_context) {
            input.content.push(context_block(event, &text));
        }
        Ok(input)
    }

    /// Stop (or SubagentStop) hooks as the model ends its turn. `Ok(())`: the run completes;
    /// `Err(reason)`: a hook blocked the stop (exit 2 or `decision: "block"`) and the model
    /// continues with `reason`. A hook can make the model continue once per user turn; the next
    /// stop reports `stop_hook_active` and a second block is shown to the user instead of looping.
    pub(super) async fn stop(
        &self,
        checks: &mut StopChecks,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> Result<(), String> {
        if self.hooks.is_empty(self.stop_event) {
            return Ok(());
        }
        let verdict = self.hooks.stop(self.stop_event, checks.hook_active, cancel).await;
        warn(events, &verdict);
        if verdict.stop.is_some() || cancel.is_cancelled() {
            return Ok(());
        }
        match verdict.block {
            Some(reason) if !checks.hook_active => {
                checks.hook_active = true;
                Err(reason)
            }
            Some(reason) => {
                let _ = events.send(AgentEvent::Warning {
                    message: format!(
                        "a Stop hook blocked the stop again after the model already continued once this turn; \
                         stopping ({reason})"
                    ),
                });
                Ok(())
            }
            None => Ok(()),
        }
    }
}
