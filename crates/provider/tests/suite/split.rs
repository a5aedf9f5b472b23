//! A stream split anywhere — at every byte boundary into two chunks, and at random points into
//! many — decodes exactly like the unsplit stream, including inside multi-byte UTF-8 characters
//! and CRLF pairs.

use lathe_provider::{Protocol, decode_bytes, decode_chunks};
use proptest::prelude::*;

use super::support::manifest;

/// Small synthetic streams with multi-byte characters (é, 中文, emoji), one per protocol.
fn unicode_streams() -> Vec<(Protocol, String)> {
    let text = "Héllo, 世界! 🦀🚀 naïve — ok";
    vec![
        (
            Protocol::Anthropic,
            format!(
                "event: message_start\r\ndata: {{\"type\":\"message_start\",\"message\":{{\"model\":\"c\",\"usage\":{{\"input_tokens\":3}}}}}}\r\n\r\n\
                 event: content_block_start\r\ndata: {{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{{\"type\":\"text\",\"text\":\"\"}}}}\r\n\r\n\
                 event: content_block_delta\r\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\"{text}\"}}}}\r\n\r\n\
                 event: content_block_stop\r\ndata: {{\"type\":\"content_block_stop\",\"index\":0}}\r\n\r\n\
                 event: message_delta\r\ndata: {{\"type\":\"message_delta\",\"delta\":{{\"stop_reason\":\"end_turn\"}},\"usage\":{{\"output_tokens\":9}}}}\r\n\r\n\
                 event: message_stop\r\ndata: {{\"type\":\"message_stop\"}}"
            ),
        ),
        (
            Protocol::OpenAiChat,
            format!(
                "data: {{\"model\":\"m\",\"choices\":[{{\"index\":0,\"delta\":{{\"reasoning_content\":\"思考 🤔\"}}}}]}}\n\n\
                 data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{text}\"}}}}]}}\n\n\
                 data: {{\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"stop\"}}]}}\n\n\
                 data: [DONE]\n\n"
            ),
        ),
        (
            Protocol::OpenAiResponses,
            format!(
                "event: response.output_text.delta\ndata: {{\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"{text}\"}}\n\n\
                 event: response.completed\ndata: {{\"type\":\"response.completed\",\"response\":{{\"output\":[]}}}}\n"
            ),
        ),
    ]
}

fn corpus() -> Vec<(String, Protocol, u16, Vec<u8>)> {
    let mut all: Vec<_> = manifest()
        .into_iter()
        .map(|entry| (entry.file.clone(), entry.protocol(), entry.status, entry.body()))
        .collect();
    for (number, (protocol, body)) in unicode_streams().into_iter().enumerate() {
        all.push((format!("synthetic-unicode-{number}"), protocol, 200, body.into_bytes()));
    }
    all
}

fn check_two_chunk_splits() {
    let mut failures = Vec::new();
    for (name, protocol, status, body) in corpus() {
        let whole = decode_bytes(protocol, status, &body);
        for cut in 0..=body.len() {
            let split = decode_chunks(protocol, status, &[&body[..cut], &body[cut..]]);
            if split != whole {
                failures.push(format!("{name}: split at byte {cut} of {}", body.len()));
                break;
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every cassette and synthetic stream split in two at every byte boundary: inside multi-byte
/// UTF-8 characters, between CR and LF, before and after every line ending. The corpus holds ~150 KB,
/// so this decodes ~1.5 GB of SSE; the decoder is built optimised even in test builds (the root
/// Cargo.toml's dev profile) so that it takes seconds, not minutes.
#[test]
fn every_two_chunk_split_decodes_like_the_whole() {
    check_two_chunk_splits();
}

#[test]
fn unicode_text_survives_every_split() {
    for (protocol, body) in unicode_streams() {
        let events = decode_bytes(protocol, 200, body.as_bytes());
        let text: String = events
            .iter()
            .filter_map(|event| match event {
                lathe_protocol::ModelEvent::TextDelta { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(text, "Héllo, 世界! 🦀🚀 naïve — ok", "{protocol:?}");
        assert!(
            matches!(events.last(), Some(lathe_protocol::ModelEvent::Stop { .. })),
            "{protocol:?}: {events:?}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_multi_chunk_splits_decode_like_the_whole(
        which in 0usize..1_000,
        cuts in proptest::collection::vec(0usize..=100_000, 1..12),
    ) {
        let corpus = corpus();
        let (name, protocol, status, body) = &corpus[which % corpus.len()];
        let mut points: Vec<usize> = cuts.iter().map(|cut| cut % (body.len() + 1)).collect();
        points.sort_unstable();
        let mut chunks: Vec<&[u8]> = Vec::new();
        let mut start = 0;
        for point in points {
            chunks.push(&body[start..point]);
            start = point;
        }
        chunks.push(&body[start..]);
        prop_assert_eq!(decode_chunks(*protocol, *status, &chunks), decode_bytes(*protocol, *status, body), "{}", name);
    }
}
