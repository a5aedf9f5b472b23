//! What the loop does when a model request fails for good (the provider's own retries spent), so
//! that one bad item never poisons a session.
//!
//! Order, for a failure that is not a cancel:
//! 1. the provider could not process an image ([`rejects_images`]) and the request carried one:
//!    a [`Meta::ImagesReplaced`] mark turns every image so far into a text note, and the request
//!    is sent once more (once per run);
//! 2. otherwise a [`Meta::RequestFailed`] mark leaves the prompt that failed out of later requests
//!    (see [`lathe_protocol::conversation`]), and the run ends with a message that says what
//!    happened and what to do ([`failure_message`]).
//!
//! The partial response of a failed request is never stored: only a user's cancel keeps one.

use lathe_protocol::{LedgerItem, Meta, ProviderError};

/// Whether `error` says the provider could not process an image (Anthropic "Could not process
/// image", OpenAI "Invalid image" / `invalid_image`, size and format complaints).
pub fn rejects_images(error: &ProviderError) -> bool {
    let Some(api) = error.api() else { return false };
    let mentions_image = |text: &str| text.to_ascii_lowercase().contains("image");
    matches!(error, ProviderError::BadRequest { .. } | ProviderError::Stream { .. })
        && (mentions_image(&api.message) || api.error_type.as_deref().is_some_and(mentions_image))
}

/// The mark that replaces the images sent so far.
pub fn images_replaced(error: &ProviderError) -> LedgerItem {
    let reason = error.api().map_or_else(|| error.to_string(), |api| api.message.clone());
    LedgerItem::Meta(Meta::ImagesReplaced { reason })
}

/// The mark of a failed request.
pub fn request_failed(error: &ProviderError) -> LedgerItem {
    LedgerItem::Meta(Meta::RequestFailed { kind: error.kind().to_string(), message: error.to_string() })
}

/// Whether the run's prompt is still unanswered (no assistant message since the last user
/// message): a failure now leaves it out of the session.
pub fn prompt_unanswered(ledger: &[LedgerItem]) -> bool {
    for item in ledger.iter().rev() {
        match item {
            LedgerItem::User(_) => return true,
            LedgerItem::Assistant(_) => return false,
            LedgerItem::ToolResult(_) | LedgerItem::Compaction(_) | LedgerItem::Meta(_) => {}
        }
    }
    false
}

/// What a run's message adds when the prompt it failed on is left out of the session.
pub const PROMPT_LEFT_OUT: &str = ". The prompt was not kept in the session; send it again";

/// The run's error message: the provider's error, then what to do about it.
pub fn failure_message(error: &ProviderError, prompt_left_out: bool) -> String {
    let mut message = error.to_string();
    if matches!(error, ProviderError::ContextWindowExceeded { .. }) {
        message.push_str(
            ". The conversation no longer fits the model's context window: start a new session \
             (without --continue or --resume), or compact this one",
        );
    }
    if prompt_left_out {
        message.push_str(PROMPT_LEFT_OUT);
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;
    use lathe_protocol::{ApiError, AssistantMessage, StopReason, Usage, UserMessage};

    fn bad_request(message: &str) -> ProviderError {
        ProviderError::BadRequest {
            api: ApiError {
                status: Some(400),
                error_type: Some("invalid_request_error".into()),
                message: message.into(),
            },
        }
    }

    #[test]
    fn image_rejections_are_recognised() {
        assert!(rejects_images(&bad_request("Could not process image")));
        assert!(rejects_images(&bad_request(
            "messages.2.content.0.image.source.base64: invalid base64 data"
        )));
        assert!(!rejects_images(&bad_request("max_tokens: too large")));
        assert!(!rejects_images(&ProviderError::Network { message: "image server down".into() }));
    }

    #[test]
    fn a_context_overflow_says_what_to_do() {
        let overflow = ProviderError::ContextWindowExceeded {
            api: ApiError { status: Some(400), error_type: None, message: "prompt is too long".into() },
        };
        let message = failure_message(&overflow, true);
        assert!(message.contains("start a new session"), "{message}");
        assert!(message.contains("not kept in the session"), "{message}");
        assert!(!failure_message(&bad_request("x"), false).contains("session"));
    }

    #[test]
    fn the_prompt_is_unanswered_until_an_assistant_message_follows() {
        let user = LedgerItem::User(UserMessage::text("hi"));
        let assistant = LedgerItem::Assistant(AssistantMessage {
            content: Vec::new(),
            stop: StopReason::EndTurn,
            usage: Usage::default(),
            model: "m".into(),
        });
        assert!(prompt_unanswered(&[assistant.clone(), user.clone()]));
        assert!(!prompt_unanswered(&[user, assistant]));
    }
}
