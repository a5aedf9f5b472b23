//! A question the model puts to the user with `ask_user {question, options?}`: the loop tells the
//! front end with [`AgentEvent::Question`](crate::AgentEvent::Question) and waits for
//! [`AgentOp::QuestionAnswer`](crate::AgentOp::QuestionAnswer). Any front end can answer it: the
//! terminal UI with a card (choose an option or type an answer), a protocol front end with a
//! permission-style request whose choices are the options. A session with nobody to ask
//! (headless, a sub-agent) never emits it: the call's result says no user is present.

use serde::{Deserialize, Serialize};

/// A question waiting for the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Question {
    /// The `ask_user` call that asked it (the answer names it).
    pub call_id: String,
    /// The question, as the model wrote it.
    pub question: String,
    /// Short answers to choose from, in the model's order (at most six; may be empty). The user
    /// may always answer in their own words instead.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
}

/// The user's answer to a [`Question`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum QuestionAnswer {
    /// The chosen option's text, or what the user typed.
    Answered {
        /// The answer.
        text: String,
    },
    /// The user dismissed the question without answering; the model decides itself.
    Declined,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AgentEvent, AgentOp};
    use pretty_assertions::assert_eq;

    #[test]
    fn a_question_and_its_answer_read_like_the_plan_flow() {
        let event = AgentEvent::Question(Question {
            call_id: "call_ask".into(),
            question: "Which database?".into(),
            options: vec!["PostgreSQL".into(), "SQLite".into()],
        });
        let json = serde_json::to_value(&event).unwrap_or_default();
        assert_eq!(
            json,
            serde_json::json!({"type": "question", "call_id": "call_ask", "question": "Which database?",
                               "options": ["PostgreSQL", "SQLite"]})
        );
        assert!(event.needs_answer());
        let back: Result<AgentEvent, _> = serde_json::from_value(json);
        assert_eq!(back.ok(), Some(event));

        let op = AgentOp::QuestionAnswer {
            call_id: "call_ask".into(),
            answer: QuestionAnswer::Answered { text: "SQLite".into() },
        };
        let json = serde_json::to_value(&op).unwrap_or_default();
        assert_eq!(
            json,
            serde_json::json!({"op": "question_answer", "call_id": "call_ask",
                               "answer": {"answer": "answered", "text": "SQLite"}})
        );
        let declined =
            serde_json::json!({"op": "question_answer", "call_id": "c", "answer": {"answer": "declined"}});
        let read: Result<AgentOp, _> = serde_json::from_value(declined);
        assert_eq!(
            read.ok(),
            Some(AgentOp::QuestionAnswer { call_id: "c".into(), answer: QuestionAnswer::Declined })
        );
    }
}
