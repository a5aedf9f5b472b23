//! The checks a replayed request must pass (FORMAT.md §2), and the providers' own pairing rules.
//!
//! [`pairing`] is what the real provider enforces on any request — every tool call answered, no result
//! without its call — and answers in that provider's words, so a client bug looks exactly like it would in
//! production. [`divergence`] is what the case demands of request *N*. [`expect_mismatches`] compares
//! Anthropic `is_error` flags with the case's `expect` (reported, never rejected).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use super::case::ReplayCase;
use super::turns::{Conversation, Side, TurnSpan, normalize_ws};
use crate::Protocol;
use crate::reply::ErrorReply;

/// A pairing violation, in the provider's words.
#[derive(Debug, Clone)]
pub(crate) struct PairingError {
    /// The provider's message.
    pub message: String,
    /// OpenAI `param` (e.g. `messages.[3].role`, `input`); unused for Anthropic.
    pub param: Option<String>,
}

impl PairingError {
    /// The HTTP 400 the provider would send.
    pub(crate) fn into_error_reply(self, protocol: Protocol) -> ErrorReply {
        let body = match protocol {
            Protocol::Anthropic => {
                json!({"type": "error", "error": {"type": "invalid_request_error", "message": self.message}})
            }
            Protocol::OpenaiChat | Protocol::OpenaiResponses => {
                json!({"error": {"message": self.message, "type": "invalid_request_error", "param": self.param, "code": null}})
            }
        };
        let mut reply = ErrorReply::bad_request("invalid_request_error", self.message);
        reply.body = Some(body);
        reply
    }
}

/// The first pairing violation of the conversation, if any.
pub(crate) fn pairing(protocol: Protocol, conv: &Conversation) -> Option<PairingError> {
    match protocol {
        Protocol::Anthropic => anthropic_pairing(conv),
        Protocol::OpenaiChat => chat_pairing(conv),
        Protocol::OpenaiResponses => responses_pairing(conv),
    }
}

/// Anthropic: the message right after an assistant turn holds a `tool_result` for each of its `tool_use`
/// ids, and every `tool_result` answers a `tool_use` of the message right before it.
fn anthropic_pairing(conv: &Conversation) -> Option<PairingError> {
    let msgs = &conv.messages;
    for (pos, m) in msgs.iter().enumerate() {
        if m.side == Side::User && !m.results.is_empty() {
            let previous: BTreeSet<&str> = match pos.checked_sub(1).map(|p| &msgs[p]) {
                Some(prev) if prev.side == Side::Assistant => {
                    prev.call_ids.iter().map(String::as_str).collect()
                }
                _ => BTreeSet::new(),
            };
            if let Some(r) = m.results.iter().find(|r| !previous.contains(r.call_id.as_str())) {
                return Some(PairingError {
                    message: format!(
                        "messages.{}.content.{}: unexpected `tool_use_id` found in `tool_result` blocks: {}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
                        m.index, r.position, r.call_id
                    ),
                    param: None,
                });
            }
        }
        if m.side == Side::Assistant && !m.call_ids.is_empty() {
            let answered: BTreeSet<&str> = msgs
                .get(pos + 1)
                .filter(|next| next.side == Side::User)
                .map(|next| next.results.iter().map(|r| r.call_id.as_str()).collect())
                .unwrap_or_default();
            let missing: Vec<&str> =
                m.call_ids.iter().map(String::as_str).filter(|id| !answered.contains(id)).collect();
            if !missing.is_empty() {
                return Some(PairingError {
                    message: format!(
                        "messages.{}: `tool_use` ids were found without `tool_result` blocks immediately after: {}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
                        m.index,
                        missing.join(", ")
                    ),
                    param: None,
                });
            }
        }
    }
    None
}

/// Chat: an assistant message with `tool_calls` is followed by `tool` messages answering every id, and
/// every `tool` message answers a call of the assistant message before its run of tool messages.
fn chat_pairing(conv: &Conversation) -> Option<PairingError> {
    let msgs = &conv.messages;
    let mut open: BTreeSet<&str> = BTreeSet::new();
    for m in msgs {
        let is_tool = !m.results.is_empty();
        if !is_tool && !open.is_empty() {
            return Some(chat_missing(&open, m.index));
        }
        if is_tool {
            for r in &m.results {
                if !open.remove(r.call_id.as_str()) {
                    return Some(PairingError {
                        message: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.".into(),
                        param: Some(format!("messages.[{}].role", m.index)),
                    });
                }
            }
            continue;
        }
        if m.side == Side::Assistant {
            open = m.call_ids.iter().map(String::as_str).collect();
        }
    }
    if !open.is_empty() {
        let after_last = msgs.last().map_or(0, |m| m.index + 1);
        return Some(chat_missing(&open, after_last));
    }
    None
}

fn chat_missing(open: &BTreeSet<&str>, index: usize) -> PairingError {
    PairingError {
        message: format!(
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {}",
            open.iter().copied().collect::<Vec<_>>().join(", ")
        ),
        param: Some(format!("messages.[{index}].role")),
    }
}

/// Responses: every `function_call` has a `function_call_output` somewhere in `input`, and every output
/// has its call.
fn responses_pairing(conv: &Conversation) -> Option<PairingError> {
    let calls: BTreeSet<&str> =
        conv.messages.iter().flat_map(|m| m.call_ids.iter().map(String::as_str)).collect();
    let outputs: BTreeSet<&str> =
        conv.messages.iter().flat_map(|m| m.results.iter().map(|r| r.call_id.as_str())).collect();
    for m in &conv.messages {
        for r in &m.results {
            if !calls.contains(r.call_id.as_str()) {
                return Some(PairingError {
                    message: format!(
                        "No tool call found for function call output with call_id {}.",
                        r.call_id
                    ),
                    param: Some("input".into()),
                });
            }
        }
        for id in &m.call_ids {
            if !outputs.contains(id.as_str()) {
                return Some(PairingError {
                    message: format!("No tool output found for function call {id}."),
                    param: Some("input".into()),
                });
            }
        }
    }
    None
}

fn diag(turn: usize, kind: &str, expected: impl Into<Value>, got: impl Into<Value>) -> Value {
    json!({"turn": turn, "kind": kind, "expected": expected.into(), "got": got.into()})
}

/// Checks 1–4 of FORMAT.md §2 on request `n`; the error is the diagnostic `{turn, kind, expected, got}`.
pub(crate) fn divergence(
    case: &ReplayCase,
    n: usize,
    conv: &Conversation,
    spans: &[TurnSpan],
    tools: &[String],
) -> Result<(), Value> {
    let msgs_len = conv.messages.len();
    if n == 0 {
        let before_first = spans.first().map_or(msgs_len, |s| s.first);
        let user = normalize_ws(&conv.user_texts(0, before_first).join(" "));
        let prompt = normalize_ws(&case.prompt);
        if !user.contains(&prompt) {
            return Err(diag(n, "prompt_missing", prompt, user));
        }
    }
    // Position right after the last assistant turn (the whole conversation for n = 0).
    let after = spans.last().map_or(0, |s| s.last + 1);
    if n >= 1 {
        let previous = &case.turns[n - 1];
        let expected: BTreeSet<&str> = previous.calls.iter().map(|c| c.id.as_str()).collect();
        let last_ids = conv.call_ids(spans[n - 1]);
        let got: BTreeSet<&str> = last_ids.iter().map(String::as_str).collect();
        if got != expected || got.len() != last_ids.len() {
            return Err(diag(n, "call_ids", json!(expected), json!(last_ids)));
        }
        let results: Vec<&str> = conv.messages[after..]
            .iter()
            .flat_map(|m| m.results.iter().map(|r| r.call_id.as_str()))
            .collect();
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for id in &results {
            *counts.entry(id).or_default() += 1;
        }
        let exact =
            counts.len() == expected.len() && counts.iter().all(|(id, c)| *c == 1 && expected.contains(id));
        if !exact {
            return Err(diag(n, "tool_results", json!(expected), json!(results)));
        }
    }
    let turn = &case.turns[n];
    if let Some(injection) = &turn.user_injection {
        let user = normalize_ws(&conv.user_texts(after, msgs_len).join(" "));
        let wanted = normalize_ws(injection);
        if !user.contains(&wanted) {
            return Err(diag(n, "user_injection_missing", wanted, user));
        }
    }
    let missing: Vec<&str> =
        turn.calls.iter().map(|c| c.name.as_str()).filter(|name| !tools.iter().any(|t| t == name)).collect();
    if !missing.is_empty() {
        return Err(diag(n, "tool_not_advertised", json!(missing), json!(tools)));
    }
    Ok(())
}

/// Anthropic check 5: non-shell calls of turn `n`−1 whose `expect` is `ok`/`error` and whose result's
/// `is_error` (absent = false) says otherwise, as `{turn, call_id, name, expect, is_error}`.
pub(crate) fn expect_mismatches(
    case: &ReplayCase,
    n: usize,
    conv: &Conversation,
    last: TurnSpan,
) -> Vec<Value> {
    let results: BTreeMap<&str, bool> = conv.messages[last.last + 1..]
        .iter()
        .flat_map(|m| m.results.iter())
        .map(|r| (r.call_id.as_str(), r.is_error.unwrap_or(false)))
        .collect();
    case.turns[n - 1]
        .calls
        .iter()
        .filter(|c| c.name != "shell" && c.expect != "any")
        .filter_map(|c| {
            let is_error = *results.get(c.id.as_str())?;
            (is_error != (c.expect == "error")).then(|| {
                json!({"turn": n - 1, "call_id": c.id, "name": c.name, "expect": c.expect, "is_error": is_error})
            })
        })
        .collect()
}

#[cfg(test)]
#[path = "checks_tests.rs"]
mod tests;
