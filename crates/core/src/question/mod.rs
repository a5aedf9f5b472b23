//! Questions to the user (see [`lathe_protocol::question`]): the model asks with [`AskUser`]
//! (`ask_user {question, options?}`), a tool of the main agent only (sub-agents never get it, so
//! they never wait for a person).
//!
//! Flow of one call: the arguments are checked before anyone is asked (a question, at most
//! [`MAX_OPTIONS`] options of one short line each) → the [`QuestionDesk`] asks: headless, nobody
//! can answer and the call fails at once, telling the model to decide itself and state its
//! assumption; interactive, it announces the question ([`AgentEvent::Question`]) and waits for the
//! front end's [`lathe_protocol::AgentOp::QuestionAnswer`], delivered by the session task → the
//! result tells the model the answer, or that the user declined to answer. A cancelled turn (or a
//! front end that went away) ends the wait: the call is interrupted, like any call of that turn.
//!
//! The call declares only session state ([`lathe_tools::Access::Session`]), so no permission mode
//! or rule asks about it (a deny rule still binds); it keeps the default mutating effect so that
//! it runs in a batch of its own, never beside another call that could open a permission dialog.

mod tool;

use lathe_protocol::AgentEvent;
use lathe_protocol::question::{Question, QuestionAnswer};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub use self::tool::AskUser;

/// The model-facing name of the tool that asks the user.
pub const ASK_USER: &str = "ask_user";

/// Options one question offers at most.
pub const MAX_OPTIONS: usize = 6;

/// Characters of one option at most.
pub const MAX_OPTION_CHARS: usize = 80;

/// Characters of a question at most.
pub const MAX_QUESTION_CHARS: usize = 1000;

/// What became of a question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Asked {
    /// Nobody can answer (a headless session).
    Nobody,
    /// The user answered (or declined to).
    Answered(QuestionAnswer),
    /// The turn was cancelled (or the front end went away) before an answer.
    Cancelled,
}

/// Puts questions to the front end and matches its answers to the waiting calls by call id (as
/// the approver does with permission prompts). `events` is `None` in a headless session.
pub struct QuestionDesk {
    events: Option<mpsc::UnboundedSender<AgentEvent>>,
    waiting: crate::awaited::Awaited<QuestionAnswer>,
}

impl QuestionDesk {
    /// A desk for a session nobody answers: every question fails at once.
    pub(crate) fn headless() -> QuestionDesk {
        QuestionDesk { events: None, waiting: Default::default() }
    }

    /// A desk for an interactive session whose front end reads `events`.
    pub(crate) fn interactive(events: mpsc::UnboundedSender<AgentEvent>) -> QuestionDesk {
        QuestionDesk { events: Some(events), waiting: Default::default() }
    }

    /// Delivers the user's answer for `call_id`; `false` when no question of that call is waiting.
    pub(crate) fn answer(&self, call_id: &str, answer: QuestionAnswer) -> bool {
        self.waiting.answer(call_id, answer)
    }

    /// Asks `question` and, in an interactive session, waits for the answer or `cancel`.
    pub(crate) async fn ask(&self, question: Question, cancel: &CancellationToken) -> Asked {
        let Some(events) = &self.events else { return Asked::Nobody };
        let call_id = question.call_id.clone();
        let announce = || events.send(AgentEvent::Question(question)).is_ok();
        let answer = self.waiting.wait(&call_id, announce, cancel).await;
        match answer {
            Some(answer) => Asked::Answered(answer),
            None => Asked::Cancelled,
        }
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
