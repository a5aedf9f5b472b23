//! Property: any conversation Lathe could have written, with any one item lost or corrupted (a
//! session line skipped on load), encodes — after `conversation::request_messages` and
//! `pairing::paired`, as every request is built — to a request that passes each provider's own
//! pairing rules (as `lathe-mock` enforces them in the providers' words).

use lathe_mock::pairing_violation;
use lathe_protocol::{
    AssistantMessage, Content, LedgerItem, Meta, ModelRequest, StopReason, ToolCall, ToolResult, ToolStatus,
    Usage, UserMessage, conversation, pairing,
};
use lathe_provider::{Protocol, encode_request};
use proptest::prelude::*;
use serde_json::json;

/// One round of a conversation, as the loop writes it.
#[derive(Debug, Clone)]
enum Round {
    /// A prompt, then an answer that calls `calls` tools (their results follow, in `order`), then
    /// a final text answer.
    Work { calls: usize, reversed: bool },
    /// A prompt whose request failed for good.
    Failed,
    /// A prompt answered with text only.
    Chat,
}

fn round() -> impl Strategy<Value = Round> {
    prop_oneof![
        4 => (1usize..4, any::<bool>()).prop_map(|(calls, reversed)| Round::Work { calls, reversed }),
        1 => Just(Round::Failed),
        2 => Just(Round::Chat),
    ]
}

fn assistant(text: &str, calls: Vec<ToolCall>) -> LedgerItem {
    let stop = if calls.is_empty() { StopReason::EndTurn } else { StopReason::ToolUse };
    let mut content = vec![Content::text(text)];
    content.extend(calls.into_iter().map(Content::ToolCall));
    LedgerItem::Assistant(AssistantMessage { content, stop, usage: Usage::default(), model: "m".into() })
}

fn ledger(rounds: &[Round]) -> Vec<LedgerItem> {
    let mut items = Vec::new();
    for (n, round) in rounds.iter().enumerate() {
        items.push(LedgerItem::User(UserMessage::text(format!("prompt {n}"))));
        match round {
            Round::Work { calls, reversed } => {
                let calls: Vec<ToolCall> = (0..*calls)
                    .map(|k| ToolCall {
                        id: format!("call_{n}_{k}"),
                        name: "read_file".into(),
                        arguments: json!({"path": format!("f{k}.txt")}),
                        incomplete: None,
                    })
                    .collect();
                let mut results: Vec<LedgerItem> = calls
                    .iter()
                    .map(|call| {
                        LedgerItem::ToolResult(ToolResult::text(
                            &call.id,
                            "text",
                            false,
                            ToolStatus::Completed,
                        ))
                    })
                    .collect();
                if *reversed {
                    results.reverse();
                }
                items.push(assistant("looking", calls));
                items.extend(results);
                items.push(assistant(&format!("answer {n}"), Vec::new()));
            }
            Round::Failed => items.push(LedgerItem::Meta(Meta::RequestFailed {
                kind: "bad_request".into(),
                message: "refused".into(),
            })),
            Round::Chat => items.push(assistant(&format!("answer {n}"), Vec::new())),
        }
    }
    items.push(LedgerItem::User(UserMessage::text("the next prompt")));
    items
}

fn request(messages: Vec<LedgerItem>) -> ModelRequest {
    ModelRequest {
        model: "m".into(),
        system: Vec::new(),
        messages,
        tools: Vec::new(),
        max_output_tokens: 1024,
        temperature: None,
        top_p: None,
        thinking: None,
        prompt_caching: false,
        response_format: None,
    }
}

fn mock_protocol(protocol: Protocol) -> lathe_mock::Protocol {
    match protocol {
        Protocol::Anthropic => lathe_mock::Protocol::Anthropic,
        Protocol::OpenAiChat => lathe_mock::Protocol::OpenaiChat,
        Protocol::OpenAiResponses => lathe_mock::Protocol::OpenaiResponses,
    }
}

fn check(items: &[LedgerItem]) -> Result<(), TestCaseError> {
    let messages = pairing::paired(conversation::request_messages(items));
    for protocol in [Protocol::Anthropic, Protocol::OpenAiChat, Protocol::OpenAiResponses] {
        let body = encode_request(protocol, &request(messages.clone()), "m");
        let violation = pairing_violation(mock_protocol(protocol), &body);
        prop_assert!(violation.is_none(), "{protocol:?}: {violation:?}\n{body}");
        if protocol == Protocol::Anthropic {
            // Never two assistant turns merged into one, never a first message from the model.
            let roles: Vec<&str> = body["messages"]
                .as_array()
                .map(|messages| messages.iter().filter_map(|m| m["role"].as_str()).collect())
                .unwrap_or_default();
            prop_assert_eq!(roles.first().copied(), Some("user"));
            prop_assert!(roles.windows(2).all(|pair| pair[0] != pair[1]), "{roles:?}");
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn a_conversation_with_one_item_lost_still_pairs_for_every_provider(
        rounds in prop::collection::vec(round(), 1..6),
        lost in any::<prop::sample::Index>(),
    ) {
        let mut items = ledger(&rounds);
        check(&items)?;
        // The prompt the request is for is never lost: it was just appended.
        let at = lost.index(items.len() - 1);
        items.remove(at);
        check(&items)?;
    }

    #[test]
    fn a_conversation_with_one_item_corrupted_into_another_kind_still_pairs(
        rounds in prop::collection::vec(round(), 1..6),
        hit in any::<prop::sample::Index>(),
        into_user in any::<bool>(),
    ) {
        let mut items = ledger(&rounds);
        let at = hit.index(items.len() - 1);
        // What a salvaged line may turn into: a stray user message or a duplicated answer.
        items[at] = if into_user {
            LedgerItem::User(UserMessage::text("stray"))
        } else {
            assistant("duplicated", Vec::new())
        };
        check(&items)?;
    }
}
