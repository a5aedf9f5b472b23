//! Token accounting: the estimator, the window's thresholds, and the anchor that ties estimates to
//! what the provider reported.
//!
//! The estimator counts the bytes an item takes on the wire as JSON string content (characters
//! JSON escapes — newline, tab, quote, backslash — count twice) and divides by four, the usual
//! rule of thumb for English and code with BPE tokenizers. It is only ever used for what was added
//! since the last response: each response's reported input count (input + cache read + cache
//! write) is the anchor, and the estimate of the items added since is scaled by how far off the
//! estimator was for the anchored request ([`Anchor::ratio`]). A reported count below the
//! estimate is not trusted ([`Anchor::trusted`]): servers that under-report exist.

use lathe_protocol::{Content, LedgerItem, SystemBlock, ToolSpec, Usage};

/// Bytes per token of the estimator.
pub const BYTES_PER_TOKEN: u64 = 4;

/// Tokens counted for one image (Anthropic's formula gives about 1 600 for a 1 092×1 092 image).
pub const IMAGE_TOKENS: u64 = 1_600;

/// Tokens counted for the framing of one message or block (role, ids, type tags).
const ITEM_OVERHEAD_TOKENS: u64 = 8;

/// Estimated tokens of `text` sent as a JSON string.
pub fn text_tokens(text: &str) -> u64 {
    let escaped = text.bytes().filter(|byte| matches!(byte, b'\n' | b'\t' | b'"' | b'\\' | b'\r')).count();
    ((text.len() + escaped) as u64).div_ceil(BYTES_PER_TOKEN)
}

fn content_tokens(content: &Content) -> u64 {
    match content {
        Content::Text { text } => text_tokens(text),
        Content::Image { .. } => IMAGE_TOKENS,
        Content::Thinking(thinking) => {
            text_tokens(&thinking.text)
                + thinking.signature.as_deref().map_or(0, text_tokens)
                + thinking.redacted.as_deref().map_or(0, text_tokens)
        }
        Content::ToolCall(call) => {
            text_tokens(&call.id) + text_tokens(&call.name) + text_tokens(&call.arguments.to_string())
        }
    }
}

/// Estimated tokens of one ledger item as sent (meta items are never sent: 0).
pub fn item_tokens(item: &LedgerItem) -> u64 {
    let body: u64 = match item {
        LedgerItem::User(message) => message.content.iter().map(content_tokens).sum(),
        LedgerItem::Assistant(message) => message.content.iter().map(content_tokens).sum(),
        LedgerItem::ToolResult(result) => {
            text_tokens(&result.call_id) + result.content.iter().map(content_tokens).sum::<u64>()
        }
        LedgerItem::Compaction(compaction) => text_tokens(&compaction.summary),
        LedgerItem::Meta(_) => return 0,
    };
    body + ITEM_OVERHEAD_TOKENS
}

/// Estimated tokens of the system prompt.
pub fn system_tokens(system: &[SystemBlock]) -> u64 {
    system.iter().map(|block| text_tokens(&block.text) + ITEM_OVERHEAD_TOKENS).sum()
}

/// Estimated tokens of the tool schemas (their compact JSON).
pub fn tools_tokens(tools: &[ToolSpec]) -> u64 {
    tools
        .iter()
        .map(|tool| {
            text_tokens(&tool.name)
                + text_tokens(&tool.description)
                + (tool.input_schema.to_string().len() as u64).div_ceil(BYTES_PER_TOKEN)
                + ITEM_OVERHEAD_TOKENS
        })
        .sum()
}

/// The window and the thresholds derived from it, in tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// The model's context window (input + output).
    pub window: u64,
    /// Room kept for the response: the configured output limit, at most a quarter of the window.
    /// Also the `max_tokens` sent, so input + output never exceeds the window.
    pub output_reserve: u64,
    /// Safety margin for estimation error: 5 % of the window, at least 256.
    pub margin: u64,
    /// Compact before a request larger than this: window − output reserve − margin.
    pub compact_at: u64,
    /// Prune old tool outputs above this: 60 % of the window (below `compact_at`).
    pub prune_at: u64,
    /// The newest tokens of the conversation that pruning never touches: 40 000, scaled down to a
    /// fifth of small windows.
    pub protected: u64,
    /// Token budget of the verbatim tail kept after a compaction.
    pub tail: u64,
    /// Output limit of the summary request.
    pub summary_output: u64,
    /// Budget of the files and user messages re-attached after a compaction (each).
    pub reattach: u64,
}

impl Budget {
    /// The budget for a `window`-token model answering with at most `max_output_tokens`.
    pub fn new(window: u32, max_output_tokens: u32) -> Budget {
        let window = u64::from(window.max(1_024));
        let output_reserve = u64::from(max_output_tokens.max(1)).min(window / 4);
        let margin = (window / 20).max(256);
        let compact_at = window.saturating_sub(output_reserve + margin);
        let prune_at = (window * 6 / 10).min(compact_at * 85 / 100);
        Budget {
            window,
            output_reserve,
            margin,
            compact_at,
            prune_at,
            protected: (window / 5).min(40_000),
            tail: (compact_at / 4).min(20_000),
            summary_output: output_reserve.min((window / 8).max(512)).min(8_192),
            reattach: (window / 10).min(20_000),
        }
    }
}

/// The last request whose size the provider reported.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Anchor {
    /// Input tokens reported for it (input + cache read + cache write).
    pub reported: u64,
    /// What the estimator said for the same request.
    pub estimated: u64,
    /// The view generation it was sent in (pruning and compaction start a new one).
    pub generation: u64,
}

impl Anchor {
    /// How far off the estimator was: trusted / estimated, so within 1–4.
    pub fn ratio(&self) -> f64 {
        if self.estimated == 0 {
            return 1.0;
        }
        self.trusted() as f64 / self.estimated as f64
    }

    /// The reported count as trusted: never below Lathe's own estimate of the same request nor
    /// above four times it. A server that under-reports (an OpenAI-compatible server answering
    /// `prompt_tokens: 10` for every request) then never makes a full window look empty, and one
    /// that over-reports never makes an empty one look full; erring high only prunes or compacts
    /// a little early.
    pub fn trusted(&self) -> u64 {
        let estimated = self.estimated as f64;
        (self.reported as f64).clamp(estimated, estimated * 4.0).ceil() as u64
    }

    /// The anchored size of a request the estimator puts at `estimated` in view `generation`:
    /// the trusted reported count plus the scaled estimate of what was added since; after pruning
    /// or compaction changed the view, the whole estimate scaled.
    pub fn tokens(&self, estimated: u64, generation: u64) -> u64 {
        if generation == self.generation && estimated >= self.estimated {
            self.trusted() + ((estimated - self.estimated) as f64 * self.ratio()).ceil() as u64
        } else {
            (estimated as f64 * self.ratio()).ceil() as u64
        }
    }
}

/// The whole input count of a response's usage: for providers whose input count excludes cache
/// reads (Anthropic), input + cache read + cache write; otherwise input (which includes them).
/// `None` when the provider reported no input count.
pub fn reported_input(usage: &Usage, input_includes_cache_reads: bool) -> Option<u64> {
    let input = usage.input_tokens?;
    if input_includes_cache_reads {
        return Some(input);
    }
    Some(input + usage.cache_read_input_tokens.unwrap_or(0) + usage.cache_creation_input_tokens.unwrap_or(0))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn escaped_characters_count_twice() {
        assert_eq!(text_tokens("abcd"), 1);
        assert_eq!(text_tokens("abcde"), 2);
        assert_eq!(text_tokens("a\nb\n"), 2);
        assert_eq!(text_tokens(""), 0);
    }

    #[test]
    fn thresholds_for_a_32k_window() {
        let budget = Budget::new(32_000, 8_192);
        assert_eq!(budget.output_reserve, 8_000);
        assert_eq!(budget.margin, 1_600);
        assert_eq!(budget.compact_at, 22_400);
        assert!(budget.prune_at < budget.compact_at);
        assert_eq!(budget.protected, 6_400);
        let large = Budget::new(200_000, 8_192);
        assert_eq!(large.output_reserve, 8_192);
        assert_eq!(large.protected, 40_000);
        assert_eq!(large.prune_at, 120_000);
        let local = Budget::new(8_192, 8_192);
        assert_eq!(local.output_reserve, 2_048);
        assert!(local.compact_at > 5_000, "{local:?}");
    }

    #[test]
    fn the_anchor_scales_what_was_added_since() {
        let low = Anchor { reported: 10, estimated: 20_000, generation: 1 };
        assert_eq!(low.trusted(), 20_000, "a count below the estimate is not trusted");
        assert_eq!(low.tokens(24_000, 1), 24_000);
        let anchor = Anchor { reported: 2_000, estimated: 1_000, generation: 3 };
        assert_eq!(anchor.tokens(1_500, 3), 3_000);
        assert_eq!(anchor.tokens(800, 4), 1_600);
        let usage = Usage {
            input_tokens: Some(10),
            output_tokens: Some(5),
            cache_read_input_tokens: Some(100),
            cache_creation_input_tokens: Some(20),
        };
        assert_eq!(reported_input(&usage, false), Some(130));
        assert_eq!(reported_input(&usage, true), Some(10));
        assert_eq!(reported_input(&Usage::default(), true), None);
    }
}
