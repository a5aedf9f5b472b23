//! Replay mode: serve a recorded agent run (`shared/replay/R<n>.json`, FORMAT.md §2) turn by turn, over
//! whichever protocol the client speaks.
//!
//! Order of operations for one request:
//! 1. parse the conversation (`wire::*::conversation`); a body without one is a provider-style 400;
//! 2. no advertised tools → a side request (title, summary): canned text, not a turn;
//! 3. tool calls and results must pair as the real provider requires, else the provider's real 400 text
//!    (counted in `pairing_errors`);
//! 4. the turn index *N* is the number of assistant turns in the conversation (stateless, retry-safe);
//!    past the final turn → 400 `replay_exhausted`;
//! 5. the FORMAT.md checks on request *N* → 400 `replay_divergence` with `{turn, kind, expected, got}`;
//! 6. Anthropic `is_error` vs `expect` mismatches are recorded in the stats;
//! 7. turn *N* is encoded in the request's protocol and stream mode.

mod case;
mod checks;
mod turns;

use std::collections::BTreeSet;
use std::sync::Mutex;

use serde_json::{Value, json};

pub use case::{ReplayCall, ReplayCase, ReplayTurn};
pub(crate) use checks::pairing;
pub(crate) use turns::{Conversation, Message, Side, ToolResult};

use crate::log::{Stats, lock};
use crate::reply::{
    Answer, Delivery, ErrorReply, Reply, ReplyCall, ReplyThinking, Stop, Usage, split_varied,
};
use crate::{Protocol, wire};

/// The text a side request (a request advertising no tools) gets.
pub(crate) const SIDE_REQUEST_TEXT: &str = "Replayed session";

/// Serves a [`ReplayCase`].
pub(crate) struct ReplayEngine {
    case: ReplayCase,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Turn indices served at least once.
    served: BTreeSet<usize>,
    /// Number of messages in the conversation that first got the final turn.
    final_conversation_len: Option<usize>,
    /// Call ids whose `expect` mismatch is already recorded.
    mismatches_seen: BTreeSet<String>,
}

impl ReplayEngine {
    pub(crate) fn new(case: ReplayCase) -> ReplayEngine {
        ReplayEngine { case, state: Mutex::new(State::default()) }
    }

    /// Decides the answer to one model request and updates `stats` (whose `requests` the caller counts).
    pub(crate) fn answer(&self, protocol: Protocol, body: &Value, stats: &mut Stats) -> Answer {
        let model = body
            .get("model")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| self.case.recorded_model.clone())
            .unwrap_or_else(|| "mock-model".to_string());
        let conversation = match wire::conversation(protocol, body) {
            Ok(c) => c,
            Err(message) => return Answer::Error(ErrorReply::bad_request("invalid_request_error", message)),
        };
        let tools = wire::tool_names(protocol, body);
        if tools.is_empty() {
            return Answer::Reply(side_reply(model), Delivery::default());
        }
        let spans = conversation.assistant_turns();
        let n = spans.len();
        if let Some(err) = checks::pairing(protocol, &conversation) {
            stats.pairing_errors += 1;
            stats.errors.push(json!({"turn": n, "kind": "pairing", "expected": "every tool call answered by exactly its tool result", "got": err.message}));
            return Answer::Error(err.into_error_reply(protocol));
        }
        let turns = &self.case.turns;
        let mut state = lock(&self.state);
        let after_empty_final = n + 1 == turns.len()
            && state.final_conversation_len.is_some_and(|len| conversation.messages.len() > len);
        if n >= turns.len() || after_empty_final {
            stats.extra_requests += 1;
            let diag = json!({"turn": n, "kind": "exhausted",
                "expected": format!("no request after the final turn ({} turns)", turns.len()),
                "got": format!("a request whose conversation holds {n} assistant turns and {} messages",
                               conversation.messages.len())});
            stats.errors.push(diag.clone());
            return Answer::Error(ErrorReply::bad_request("replay_exhausted", diag.to_string()));
        }
        if let Err(diag) = checks::divergence(&self.case, n, &conversation, &spans, &tools) {
            stats.errors.push(diag.clone());
            return Answer::Error(ErrorReply::bad_request("replay_divergence", diag.to_string()));
        }
        if protocol == Protocol::Anthropic && n > 0 {
            for mismatch in checks::expect_mismatches(&self.case, n, &conversation, spans[n - 1]) {
                let id = mismatch["call_id"].as_str().unwrap_or_default().to_string();
                if state.mismatches_seen.insert(id) {
                    stats.expect_mismatches.push(mismatch);
                }
            }
        }
        let turn = &turns[n];
        state.served.insert(n);
        stats.turns_served = state.served.len();
        if turn.r#final {
            stats.done = true;
            state.final_conversation_len.get_or_insert(conversation.messages.len());
        }
        let input_tokens = (body.to_string().len() / 4) as u64;
        Answer::Reply(turn_reply(&self.case.id, n, turn, model, input_tokens), Delivery::default())
    }
}

/// Turn `n` as a [`Reply`]: text and argument JSON in deterministic pieces of 2–40 characters, calls in
/// one assistant message, `tool_use` when there are calls, else `end_turn`.
fn turn_reply(case_id: &str, n: usize, turn: &ReplayTurn, model: String, input_tokens: u64) -> Reply {
    let seed = format!("{case_id}/{n}");
    let calls: Vec<ReplyCall> = turn
        .calls
        .iter()
        .map(|c| ReplyCall {
            id: c.id.clone(),
            name: c.name.clone(),
            pieces: split_varied(&c.args.to_string(), 2, 40, &c.id),
            complete: true,
        })
        .collect();
    let output_chars = turn.text.len() + calls.iter().map(|c| c.arguments().len()).sum::<usize>();
    Reply {
        thinking: turn.thinking.as_ref().map(|t| ReplyThinking {
            text: split_varied(t, 2, 40, &format!("{seed}/thinking")),
            signature: format!("replay-signature-{case_id}-{n}"),
        }),
        text: split_varied(&turn.text, 2, 40, &seed),
        stop: if calls.is_empty() { Stop::EndTurn } else { Stop::ToolUse },
        calls,
        usage: Usage {
            input_tokens,
            output_tokens: (output_chars / 4 + 1) as u64,
            cache_read_input_tokens: 0,
            cache_creation_input_tokens: 0,
        },
        model,
        ..Reply::default()
    }
}

fn side_reply(model: String) -> Reply {
    Reply {
        text: vec![SIDE_REQUEST_TEXT.to_string()],
        usage: Usage { input_tokens: 10, output_tokens: 3, ..Usage::default() },
        model,
        ..Reply::default()
    }
}
