//! Scripted mode's provider-side checks: the context window, tool-call pairing, and side replies.
//!
//! A request is counted as `ceil(len(compact JSON of the request body) / 4)` input tokens — the
//! documented estimator of this server (real tokenizers give about 3–4 bytes per token for English
//! and code). With a `context_window` set, a request whose input tokens plus its requested output
//! (`max_tokens`, `max_completion_tokens` or `max_output_tokens`) exceed the window is rejected with
//! HTTP 400 in the provider's own words, and every answer reports the counted input tokens as its
//! usage. A rejected request, a pairing error and a side reply do not consume a scripted turn.

use serde_json::{Value, json};

use crate::Protocol;
use crate::replay::{Conversation, Side};
use crate::reply::ErrorReply;
use crate::script::SideReply;
use crate::wire;

/// Bytes per token of the mock's estimator.
pub const BYTES_PER_TOKEN: u64 = 4;

/// Input tokens of a request body: its compact JSON length / 4, rounded up.
pub fn input_tokens(body: &Value) -> u64 {
    (body.to_string().len() as u64).div_ceil(BYTES_PER_TOKEN)
}

/// The output tokens a request asks room for (0 when it names no limit).
pub fn requested_output(body: &Value) -> u64 {
    ["max_tokens", "max_completion_tokens", "max_output_tokens"]
        .iter()
        .find_map(|key| body.get(*key).and_then(Value::as_u64))
        .unwrap_or(0)
}

/// The provider's context-length error when `body` does not fit `window` tokens.
pub fn overflow(protocol: Protocol, body: &Value, window: u64) -> Option<ErrorReply> {
    let input = input_tokens(body);
    let output = requested_output(body);
    if input + output <= window {
        return None;
    }
    // Wording and shapes of the providers' documented errors (Anthropic "Errors", OpenAI
    // "Error codes": `context_length_exceeded`).
    let body = match protocol {
        Protocol::Anthropic => {
            let message = if input > window {
                format!("prompt is too long: {input} tokens > {window} maximum")
            } else {
                format!(
                    "input length and `max_tokens` exceed context limit: {input} + {output} > {window}, decrease \
                     input length or `max_tokens` and try again"
                )
            };
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}})
        }
        Protocol::OpenaiChat => json!({"error": {
            "message": format!(
                "This model's maximum context length is {window} tokens. However, you requested {} tokens ({input} in \
                 the messages, {output} in the completion). Please reduce the length of the messages or completion.",
                input + output
            ),
            "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}),
        Protocol::OpenaiResponses => json!({"error": {
            "message": "Your input exceeds the context window of this model. Please adjust your input and try again.",
            "type": "invalid_request_error", "param": "input", "code": "context_length_exceeded"}}),
    };
    let message = body.pointer("/error/message").and_then(Value::as_str).unwrap_or_default().to_string();
    let mut reply = ErrorReply::bad_request("invalid_request_error", message);
    reply.body = Some(body);
    Some(reply)
}

/// The provider's pairing error for `body`, if its tool calls and results do not pair.
pub fn pairing_error(protocol: Protocol, body: &Value) -> Option<ErrorReply> {
    let conversation = wire::conversation(protocol, body).ok()?;
    crate::replay::pairing(protocol, &conversation).map(|error| error.into_error_reply(protocol))
}

/// The provider's words for the first pairing violation of `body` (a request for `protocol`), if
/// any: what [`pairing_error`] answers, for tests that check a request without serving it.
pub fn pairing_violation(protocol: Protocol, body: &Value) -> Option<String> {
    pairing_error(protocol, body).map(|reply| reply.message)
}

/// The side reply whose trigger occurs in the last user-side message of `body`, if any.
pub fn side_reply<'a>(protocol: Protocol, body: &Value, replies: &'a [SideReply]) -> Option<&'a SideReply> {
    if replies.is_empty() {
        return None;
    }
    let conversation: Conversation = wire::conversation(protocol, body).ok()?;
    let last = conversation.messages.iter().rev().find(|message| message.side != Side::Other)?;
    if last.side != Side::User {
        return None;
    }
    let text = last.texts.join("\n");
    replies.iter().find(|reply| {
        text.contains(&reply.when_last_user_contains)
            && reply.and_contains.iter().all(|part| text.contains(part))
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn counts_the_body_and_the_requested_output() {
        let body = json!({"max_tokens": 10, "messages": [{"role": "user", "content": "x".repeat(400)}]});
        let tokens = input_tokens(&body);
        assert_eq!(tokens, (body.to_string().len() as u64).div_ceil(4));
        assert!(overflow(Protocol::Anthropic, &body, tokens + 10).is_none());
        let error = overflow(Protocol::Anthropic, &body, tokens + 9).unwrap();
        assert_eq!(error.status, 400);
        assert!(error.message.contains("exceed context limit"), "{}", error.message);
        let error = overflow(Protocol::Anthropic, &body, tokens - 1).unwrap();
        assert!(error.message.starts_with("prompt is too long"), "{}", error.message);
        let error = overflow(Protocol::OpenaiChat, &body, 50).unwrap();
        assert_eq!(error.body.unwrap()["error"]["code"], "context_length_exceeded");
    }
}
