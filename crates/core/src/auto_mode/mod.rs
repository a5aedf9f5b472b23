//! Auto mode's reviewer: a separate model request with no tools that approves or blocks a call the
//! policy would otherwise ask about ([`lathe_policy::Decision::review`]).
//!
//! Two stages: stage 1 asks for one word; anything but a clean `allow` goes to stage 2, a short
//! reasoned JSON answer. An unreadable answer, a cut response or an error blocks. The reviewer sees
//! the user's own messages and the pending call, never assistant text or tool results
//! ([`prompt`]). After [`MAX_CONSECUTIVE_BLOCKS`] blocks in a row or [`MAX_TOTAL_BLOCKS`] in the
//! session, auto mode falls back to asking a person (headless: the run stops,
//! `error_auto_blocked`). The design follows Claude Code's auto mode
//! (<https://docs.anthropic.com/en/docs/claude-code/iam#permission-modes>).

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use lathe_protocol::{
    Content, LedgerItem, ModelRequest, StopReason, SystemBlock, ThinkingFormat, ToolCall, Usage, UserMessage,
    UserOrigin,
};
use lathe_provider::Provider;
use tokio_util::sync::CancellationToken;

pub mod eval;
pub mod prompt;
pub mod rules;

use prompt::{PendingCall, Stage};

/// The openings of the blocks Lathe appends to a user's message, which are not the user's words.
const APPENDED: [&str; 2] = [crate::memory::session::RECALL_PREFIX, "<hook-context "];

/// Blocks in a row after which auto mode falls back to asking.
pub const MAX_CONSECUTIVE_BLOCKS: u32 = 3;
/// Blocks in a session after which auto mode falls back to asking.
pub const MAX_TOTAL_BLOCKS: u32 = 20;
/// Output limit of stage 1 (one word), tokens.
const QUICK_MAX_TOKENS: u32 = 16;
/// Output limit of stage 2 (a short JSON object), tokens.
const REASONED_MAX_TOKENS: u32 = 400;

/// The embedded model's size a `reviewer_model` names: `local` (the default size, 1.5b) or
/// `local:0.5b` / `local:1.5b`; `None` for a model at the session's provider.
pub fn local_size(reviewer_model: &str) -> Option<&str> {
    match reviewer_model {
        "local" => Some("1.5b"),
        other => other.strip_prefix("local:"),
    }
}

/// One review's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Review {
    /// Whether the call may run.
    pub allow: bool,
    /// The stage that decided (1 or 2).
    pub stage: u8,
    /// Why, in the reviewer's words (or why its answer could not be used).
    pub reason: String,
    /// Wall time of the review's requests, µs.
    pub latency_us: u64,
}

impl Review {
    /// The receipt's line: `auto mode reviewer: allow at stage 1 (120 ms)`.
    pub fn by(&self) -> String {
        let verdict = if self.allow { "allow" } else { "block" };
        format!("auto mode reviewer: {verdict} at stage {} ({} ms)", self.stage, self.latency_us / 1_000)
    }
}

#[derive(Debug, Default)]
struct State {
    consecutive: u32,
    total: u32,
    /// Set once the breaker tripped: why.
    fallen_back: Option<String>,
    /// The user's messages of the session, oldest first.
    user_messages: Vec<String>,
    /// Usage of review requests not yet added to the session's totals.
    usage: Vec<Usage>,
}

/// The reviewer of one session (shared with its sub-agents: their calls are reviewed against the
/// session user's messages, and their blocks count toward the same breaker).
pub struct Reviewer {
    provider: Arc<dyn Provider>,
    model: String,
    thinking: ThinkingFormat,
    rules: String,
    state: Mutex<State>,
}

impl Reviewer {
    /// A reviewer asking `model` at `provider`, with `rules` ([`rules::load`]).
    pub fn new(
        provider: Arc<dyn Provider>,
        model: String,
        thinking: ThinkingFormat,
        rules: String,
    ) -> Reviewer {
        Reviewer { provider, model, thinking, rules, state: Mutex::new(State::default()) }
    }

    /// The model reviews go to.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Records the user's messages of the session (before each response's calls run).
    pub fn set_user_messages(&self, messages: Vec<String>) {
        if let Ok(mut state) = self.state.lock() {
            state.user_messages = messages;
        }
    }

    /// The user's messages of `ledger`: only what the user typed, never injected or model text,
    /// nor the blocks Lathe appends to a user's message (recalled memories, a UserPromptSubmit
    /// hook's context), which a repository or an earlier session may have written.
    pub fn user_messages_of(ledger: &[LedgerItem]) -> Vec<String> {
        let typed = |message: &UserMessage| -> String {
            let parts: Vec<&str> = message
                .content
                .iter()
                .filter_map(|part| match part {
                    Content::Text { text } if !APPENDED.iter().any(|tag| text.starts_with(tag)) => {
                        Some(text.as_str())
                    }
                    _ => None,
                })
                .collect();
            parts.join("\n")
        };
        ledger
            .iter()
            .filter_map(|item| match item {
                LedgerItem::User(message) if message.origin == UserOrigin::User => Some(typed(message)),
                _ => None,
            })
            .filter(|text| !text.trim().is_empty())
            .collect()
    }

    /// Why auto mode fell back to asking, once the breaker tripped.
    pub fn fallen_back(&self) -> Option<String> {
        self.state.lock().ok().and_then(|state| state.fallen_back.clone())
    }

    /// Starts counting blocks again (the user chose auto mode again).
    pub fn reset(&self) {
        if let Ok(mut state) = self.state.lock() {
            state.consecutive = 0;
            state.total = 0;
            state.fallen_back = None;
        }
    }

    /// The usage of the reviews since the last call, for the session's totals.
    pub fn take_usage(&self) -> Vec<Usage> {
        self.state.lock().map(|mut state| std::mem::take(&mut state.usage)).unwrap_or_default()
    }

    /// Reviews `call` (to run in `cwd`): stage 1, then stage 2 unless stage 1 allowed it. Counts
    /// a block toward the breaker.
    pub async fn review(&self, call: &ToolCall, cwd: &Path, cancel: &CancellationToken) -> Review {
        let started = Instant::now();
        let messages = self.state.lock().map(|state| state.user_messages.clone()).unwrap_or_default();
        let cwd = cwd.display().to_string();
        let pending = PendingCall { tool: &call.name, arguments: &call.arguments, cwd: &cwd };
        if let Some(length) = prompt::too_long(&call.arguments) {
            // What the reviewer cannot see it cannot judge: a command could hide its tail past the cut.
            let reason = format!(
                "the call's arguments are {length} characters (after folding runs of blanks), more than the \
                 {} the reviewer reads; split it into smaller steps",
                prompt::MAX_ARGUMENT_CHARS
            );
            let review =
                Review { allow: false, stage: 1, reason, latency_us: started.elapsed().as_micros() as u64 };
            self.count(&review);
            return review;
        }
        let quick = self.ask(Stage::Quick, &messages, pending, cancel).await;
        let (allow, stage, reason) = match quick.as_deref().map(prompt::quick_answer) {
            Ok(Some(true)) => (true, 1, "stage 1 allowed it".to_string()),
            _ => match self.ask(Stage::Reasoned, &messages, pending, cancel).await {
                Ok(text) => match prompt::reasoned_answer(&text) {
                    Some((allow, reason)) => (allow, 2, reason),
                    None => {
                        (false, 2, "the reviewer's answer could not be read, so the call is blocked".into())
                    }
                },
                Err(why) => (false, 2, why),
            },
        };
        let review = Review { allow, stage, reason, latency_us: started.elapsed().as_micros() as u64 };
        self.count(&review);
        review
    }

    fn count(&self, review: &Review) {
        let Ok(mut state) = self.state.lock() else { return };
        if review.allow {
            state.consecutive = 0;
            return;
        }
        state.consecutive += 1;
        state.total += 1;
        if state.fallen_back.is_none()
            && (state.consecutive >= MAX_CONSECUTIVE_BLOCKS || state.total >= MAX_TOTAL_BLOCKS)
        {
            state.fallen_back = Some(format!(
                "auto mode fell back to asking after {} blocks ({} in a row); the last: {}",
                state.total, state.consecutive, review.reason
            ));
        }
    }

    /// One review request's answer text; `Err` says why there is none to use (an error, a cut
    /// response, a refusal).
    async fn ask(
        &self,
        stage: Stage,
        messages: &[String],
        call: PendingCall<'_>,
        cancel: &CancellationToken,
    ) -> Result<String, String> {
        let text = prompt::request_text(stage, messages, call, &self.rules);
        let request = ModelRequest {
            model: self.model.clone(),
            system: vec![SystemBlock { text: prompt::SYSTEM.to_string(), cache_breakpoint: false }],
            messages: vec![LedgerItem::User(UserMessage {
                content: vec![Content::text(text)],
                origin: UserOrigin::Injected,
            })],
            tools: Vec::new(),
            max_output_tokens: match stage {
                Stage::Quick => QUICK_MAX_TOKENS,
                Stage::Reasoned => REASONED_MAX_TOKENS,
            },
            temperature: Some(0.0),
            top_p: None,
            thinking: None,
            prompt_caching: false,
            response_format: (stage == Stage::Reasoned).then(prompt::schema),
        };
        let mut streamed =
            crate::requester::stream(self.provider.as_ref(), self.thinking, &request, None, cancel).await;
        if request.response_format.is_some()
            && matches!(streamed.acc.error(), Some(lathe_protocol::ProviderError::BadRequest { .. }))
        {
            // An OpenAI-compatible server that takes no JSON schema: the prompt asks for the shape.
            if let Ok(mut state) = self.state.lock() {
                state.usage.push(streamed.acc.usage());
            }
            let plain = ModelRequest { response_format: None, ..request };
            streamed =
                crate::requester::stream(self.provider.as_ref(), self.thinking, &plain, None, cancel).await;
        }
        if let Ok(mut state) = self.state.lock() {
            state.usage.push(streamed.acc.usage());
        }
        if let Some(error) = streamed.acc.error() {
            return Err(format!("the review request failed ({error}), so the call is blocked"));
        }
        let message = streamed.acc.finish(&self.model);
        match message.stop {
            StopReason::EndTurn | StopReason::StopSequence if streamed.terminal => Ok(message.text()),
            StopReason::MaxTokens => Err("the reviewer's answer was cut off, so the call is blocked".into()),
            other => {
                Err(format!("the reviewer's answer ended with {}, so the call is blocked", other.as_str()))
            }
        }
    }
}

#[cfg(test)]
#[path = "mod_tests.rs"]
mod tests;
