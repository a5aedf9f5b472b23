//! Deferred tools and `tool_search` (FEATURES.md §C, §H): when a session's MCP tools are many,
//! they are registered deferred ([`crate::mcp::register`]); the model sees each as one line of a
//! block at the end of the system prompt and loads the schemas it needs with
//! `tool_search {query}`.
//!
//! - [`install`] (every agent, at construction): when the registry holds deferred tools, adds the
//!   listing block after the other system blocks and the `tool_search` tool after the other
//!   tools; with nothing deferred it does nothing, and `tool_search` does not exist.
//! - a search matches the query's words against the deferred tools' names and descriptions
//!   (names weigh more), or selects exact names (`select:name1,name2`); its result names the
//!   tools loaded and records them in the ledger ([`Meta::ToolsLoaded`]), which makes the agent
//!   offer their full schemas from the next request on, appended at the end of the tool list in
//!   the order first loaded (the earlier tools and the system prompt stay byte-identical, so the
//!   provider's prompt cache still holds their prefix). A resumed session rebuilds the loaded
//!   tools from those ledger items.
//! - a call of a deferred tool that was not loaded is not run: its result says to load it with
//!   `tool_search` first ([`not_loaded`]).

use std::sync::Arc;

use lathe_protocol::{Meta, SystemBlock, ToolSpec};
use lathe_tools::{Access, Effect, Tool, ToolContext, ToolError, ToolOutput, ToolRegistry};
use schemars::JsonSchema;
use serde::Deserialize;

/// The tool's model-facing name.
pub const TOOL_SEARCH: &str = "tool_search";
/// Tools a search loads when `max_results` is not given.
const DEFAULT_RESULTS: usize = 5;
/// The most tools one search loads.
const MAX_RESULTS: usize = 20;
/// Characters of a deferred tool's description in its line of the listing.
const LINE_CHARS: usize = 100;

const DESCRIPTION: &str = "Loads the schemas of deferred tools (the \"Deferred tools\" list) so you can call \
them: words matched against their names and descriptions, or select:name1,name2. Loaded tools stay for the \
session.";

/// Arguments of `tool_search`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ToolSearchArgs {
    /// Words to match, or `select:name1,name2`.
    pub query: String,
    /// Most to load (default 5).
    pub max_results: Option<u32>,
}

/// One deferred tool as a search sees it.
#[derive(Debug, Clone)]
struct Entry {
    name: String,
    description: String,
}

/// `tool_search` over the deferred tools of one agent's registry.
#[derive(Debug, Clone)]
pub struct ToolSearch {
    entries: Vec<Entry>,
}

impl ToolSearch {
    /// A search over `deferred` (the registry's deferred specs, in order).
    fn new(deferred: &[ToolSpec]) -> ToolSearch {
        let entries = deferred
            .iter()
            .map(|spec| Entry { name: spec.name.clone(), description: spec.description.clone() })
            .collect();
        ToolSearch { entries }
    }

    /// The names `query` picks, best first, at most `limit`; and the `select:` names that are
    /// not deferred tools.
    fn search(&self, query: &str, limit: usize) -> (Vec<&Entry>, Vec<String>) {
        if let Some(names) = query.trim().strip_prefix("select:") {
            let mut found = Vec::new();
            let mut unknown = Vec::new();
            for name in names.split(',').map(str::trim).filter(|name| !name.is_empty()) {
                match self.entries.iter().find(|entry| entry.name == name) {
                    Some(entry) if !found.iter().any(|seen: &&Entry| seen.name == name) => found.push(entry),
                    Some(_) => {}
                    None => unknown.push(name.to_string()),
                }
            }
            return (found, unknown);
        }
        let words: Vec<String> = query
            .split(|c: char| c.is_whitespace() || c == ',')
            .map(|word| word.trim_matches(|c: char| !c.is_alphanumeric() && c != '_').to_lowercase())
            .filter(|word| !word.is_empty())
            .collect();
        let mut scored: Vec<(usize, &Entry)> = self
            .entries
            .iter()
            .map(|entry| {
                let (name, description) = (entry.name.to_lowercase(), entry.description.to_lowercase());
                let score: usize = words
                    .iter()
                    .map(|word| {
                        if name == *word {
                            10
                        } else {
                            2 * usize::from(name.contains(word.as_str()))
                                + usize::from(description.contains(word.as_str()))
                        }
                    })
                    .sum();
                (score, entry)
            })
            .filter(|(score, _)| *score > 0)
            .collect();
        // Stable: equal scores keep the listing's order.
        scored.sort_by_key(|(score, _)| std::cmp::Reverse(*score));
        (scored.into_iter().take(limit).map(|(_, entry)| entry).collect(), Vec::new())
    }
}

impl Tool for ToolSearch {
    type Args = ToolSearchArgs;

    fn name(&self) -> &'static str {
        TOOL_SEARCH
    }

    fn description(&self) -> &'static str {
        DESCRIPTION
    }

    fn effect(&self) -> Effect {
        Effect::ReadOnly
    }

    /// Loading schemas changes only what this session offers.
    fn access(&self, _args: &ToolSearchArgs, _ctx: &ToolContext) -> Access {
        Access::Session
    }

    async fn run(&self, args: ToolSearchArgs, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let limit = args.max_results.map_or(DEFAULT_RESULTS, |n| (n as usize).clamp(1, MAX_RESULTS));
        let (found, unknown) = self.search(&args.query, limit);
        let mut text = if found.is_empty() {
            format!(
                "No deferred tool matches `{}`. Try other words, or select:<name> with a name from the \
                 \"Deferred tools\" list.",
                args.query.trim()
            )
        } else {
            let mut text = format!(
                "Loaded {} tool{}; {} in your tool list from now on, call {} directly:",
                found.len(),
                if found.len() == 1 { "" } else { "s" },
                if found.len() == 1 { "its schema is" } else { "their schemas are" },
                if found.len() == 1 { "it" } else { "them" },
            );
            for entry in &found {
                text.push_str(&format!("\n{}", line(&entry.name, &entry.description)));
            }
            text
        };
        if !unknown.is_empty() {
            text.push_str(&format!("\nNot deferred tools: {}.", unknown.join(", ")));
        }
        let mut output = ToolOutput::text(text);
        if !found.is_empty() {
            let names = found.iter().map(|entry| entry.name.clone()).collect();
            output.ledger.push(Meta::ToolsLoaded { names });
        }
        Ok(output)
    }
}

/// `name — the first line of its description`, cut to [`LINE_CHARS`].
fn line(name: &str, description: &str) -> String {
    let first = description.lines().map(str::trim).find(|line| !line.is_empty()).unwrap_or("");
    let mut short: String = first.chars().take(LINE_CHARS).collect();
    if first.chars().count() > LINE_CHARS {
        short.push('…');
    }
    if short.is_empty() { name.to_string() } else { format!("{name} — {short}") }
}

/// The system block that lists `deferred`, one tool a line.
fn listing(deferred: &[ToolSpec]) -> String {
    let mut text = String::from(
        "# Deferred tools\nThese tools can be called once their schemas are loaded: call tool_search with \
         words to match or select:name1,name2 first.\n",
    );
    for spec in deferred {
        text.push_str(&line(&spec.name, &spec.description));
        text.push('\n');
    }
    text
}

/// Adds the listing block to `system` and `tool_search` to `tools` when `tools` holds deferred
/// tools; otherwise changes nothing.
pub(crate) fn install(tools: &mut ToolRegistry, system: &mut Vec<SystemBlock>) {
    let deferred = tools.deferred_specs();
    if deferred.is_empty() {
        return;
    }
    system.push(SystemBlock { text: listing(&deferred), cache_breakpoint: false });
    tools.register(Arc::new(ToolSearch::new(&deferred)));
}

/// The result text for a call of `name`, a deferred tool whose schema is not loaded.
pub(crate) fn not_loaded(name: &str) -> String {
    format!(
        "error: `{name}` is a deferred tool whose schema is not loaded, so it was not run. Call \
         tool_search with query \"select:{name}\" first, then call it with arguments that follow its schema."
    )
}

#[cfg(test)]
#[path = "tool_search_tests.rs"]
mod tests;
