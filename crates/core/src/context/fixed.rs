//! The fixed part of every request — the system prompt, the project instructions in it, the tool
//! schemas — measured once per session. When it alone is over the compaction threshold, no
//! compaction can make room (it summarizes the conversation, never the fixed part), so Lathe does
//! not try: the request is sent while it fits the window, and otherwise the run stops with the
//! measured sizes, the largest part and the setting that caps it.

use lathe_protocol::{SystemBlock, ToolSpec};

use super::budget::{self, Budget};

/// Where the project instructions start in the system prompt (as the prompt writes them).
pub const INSTRUCTIONS_HEADING: &str = "\n# Project instructions\n";

/// The fixed part's sizes, in estimated tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FixedParts {
    /// The system prompt without the project instructions.
    pub prompt: u64,
    /// The project instructions (AGENTS.md, CLAUDE.md and their imports).
    pub instructions: u64,
    /// The tool schemas.
    pub tools: u64,
    /// How many tools are offered.
    pub tool_count: usize,
}

impl FixedParts {
    /// Measures `system` and `tools`.
    pub fn of(system: &[SystemBlock], tools: &[ToolSpec]) -> FixedParts {
        let all = budget::system_tokens(system);
        let instructions: u64 = system
            .iter()
            .filter_map(|block| block.text.find(INSTRUCTIONS_HEADING).map(|at| &block.text[at..]))
            .map(budget::text_tokens)
            .sum();
        FixedParts {
            prompt: all.saturating_sub(instructions),
            instructions,
            tools: budget::tools_tokens(tools),
            tool_count: tools.len(),
        }
    }

    /// The whole fixed part.
    pub fn total(&self) -> u64 {
        self.prompt + self.instructions + self.tools
    }

    /// Whether compaction cannot bring a request under `budget`'s threshold.
    pub fn over_threshold(&self, budget: &Budget) -> bool {
        self.total() > budget.compact_at
    }

    /// Why a request cannot be sent: the sizes, the largest part and what caps it.
    pub fn too_large(&self, budget: &Budget, request: u64) -> String {
        let tools = if self.tool_count == 1 { "tool" } else { "tools" };
        let parts = [
            (
                self.instructions,
                "the project instructions (AGENTS.md, CLAUDE.md and their imports)",
                "shorten them, or lower instructions_max_bytes (40 KiB by default), which caps what is read",
            ),
            (
                self.tools,
                "the tool schemas",
                "offer fewer tools (fewer MCP servers, or a skill's allowed-tools)",
            ),
            (self.prompt, "the system prompt", "use a model with a larger context_window"),
        ];
        let (_, largest, fix) =
            parts.iter().max_by_key(|(tokens, _, _)| *tokens).copied().unwrap_or(parts[2]);
        format!(
            "the request does not fit the model's context window of {window} tokens ({request} tokens \
             with {reserve} kept for the answer), and compaction cannot help: the part sent with every \
             request is {total} tokens on its own — system prompt {prompt}, project instructions \
             {instructions}, tool schemas {tool_tokens} ({count} {tools}) — over the compaction \
             threshold of {threshold} tokens. The largest part is {largest}: {fix}; or set \
             context_window if the model accepts more",
            window = budget.window,
            reserve = budget.output_reserve,
            total = self.total(),
            prompt = self.prompt,
            instructions = self.instructions,
            tool_tokens = self.tools,
            count = self.tool_count,
            threshold = budget.compact_at,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_instructions_are_measured_apart_and_named_when_largest() {
        let instructions = "x".repeat(40_000);
        let system = vec![
            SystemBlock { text: "core prompt".into(), cache_breakpoint: true },
            SystemBlock {
                text: format!("# Environment\ncwd{INSTRUCTIONS_HEADING}{instructions}"),
                cache_breakpoint: false,
            },
        ];
        let parts = FixedParts::of(&system, &[]);
        assert!(parts.instructions >= 10_000 && parts.prompt < 100, "{parts:?}");
        let budget = Budget::new(8_192, 8_192);
        assert!(parts.over_threshold(&budget));
        let message = parts.too_large(&budget, parts.total());
        assert!(message.contains("The largest part is the project instructions"), "{message}");
        assert!(message.contains("instructions_max_bytes") && message.contains("8192 tokens"), "{message}");
    }
}
