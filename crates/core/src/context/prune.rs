//! Pruning (FEATURES.md §E, second layer): old outputs of tools whose output can be fetched again
//! (`read_file`, `grep`, `glob`, `list_dir`, `shell`) are sent as a one-line stub naming what was
//! elided and how to get it back. The newest [`super::Budget::protected`] tokens and the current
//! round (the last assistant message and its results) are never touched, and neither are small
//! outputs (a stub would save nothing).
//!
//! The ledger keeps every result unchanged; a `context_pruned` meta item lists the stubbed call
//! ids, and every request built afterwards sends the stub. The stub text depends only on the call
//! and its result, so requests stay byte-identical from one turn to the next (the provider's prompt
//! cache keeps hitting after the one request where the stubs first appear).

use std::collections::{HashMap, HashSet};

use lathe_protocol::{Content, LedgerItem, Meta, ToolCall, ToolResult};

/// Tools whose output the model can get back by calling them again.
pub const REREADABLE_TOOLS: [&str; 5] = ["read_file", "grep", "glob", "list_dir", "shell"];

/// Results smaller than this (estimated tokens) are never stubbed.
pub const MIN_PRUNED_TOKENS: u64 = 100;

/// Longest argument excerpt quoted in a stub, in characters.
const ARGUMENT_EXCERPT_CHARS: usize = 160;

/// Every tool call of the ledger by id.
pub fn calls_by_id(ledger: &[LedgerItem]) -> HashMap<&str, &ToolCall> {
    ledger
        .iter()
        .filter_map(|item| match item {
            LedgerItem::Assistant(message) => Some(message.tool_calls()),
            LedgerItem::User(_)
            | LedgerItem::ToolResult(_)
            | LedgerItem::Compaction(_)
            | LedgerItem::Meta(_) => None,
        })
        .flatten()
        .map(|call| (call.id.as_str(), call))
        .collect()
}

/// The call ids stubbed by every `context_pruned` meta item of the ledger.
pub fn pruned_ids(ledger: &[LedgerItem]) -> HashSet<String> {
    ledger
        .iter()
        .filter_map(|item| match item {
            LedgerItem::Meta(Meta::ContextPruned { call_ids, .. }) => Some(call_ids.iter().cloned()),
            LedgerItem::Meta(_)
            | LedgerItem::User(_)
            | LedgerItem::Assistant(_)
            | LedgerItem::ToolResult(_)
            | LedgerItem::Compaction(_) => None,
        })
        .flatten()
        .collect()
}

/// The result as sent once pruned: the same call id, error flag and status, with the stub as its
/// only content.
pub fn stubbed(call: Option<&ToolCall>, result: &ToolResult) -> ToolResult {
    ToolResult {
        call_id: result.call_id.clone(),
        content: vec![Content::text(stub_text(call, result))],
        is_error: result.is_error,
        status: result.status,
        receipt: None,
    }
}

/// The one-line stub: which call's output was elided, how big it was, and how to get it back.
pub fn stub_text(call: Option<&ToolCall>, result: &ToolResult) -> String {
    let bytes = result.text_content().len();
    let name = call.map_or("tool", |call| call.name.as_str());
    let arguments = call.map(|call| excerpt(&call.arguments.to_string())).unwrap_or_default();
    let receipt = result.receipt.as_ref();
    match name {
        "shell" => {
            let exit = receipt
                .and_then(|receipt| receipt.exit_code)
                .map(|code| format!(", exit code {code}"))
                .unwrap_or_default();
            let spill = receipt
                .and_then(|receipt| receipt.spill_path.as_deref())
                .map(|path| format!(" or read_file {path}"))
                .unwrap_or_default();
            format!(
                "[output elided to save context: shell {arguments} printed {bytes} bytes{exit}; run the command \
                 again{spill} if you need the output]"
            )
        }
        _ => format!(
            "[output elided to save context: {name} {arguments} returned {bytes} bytes; call {name} again with \
             the same arguments to see it]"
        ),
    }
}

fn excerpt(text: &str) -> String {
    if text.chars().count() <= ARGUMENT_EXCERPT_CHARS {
        return text.to_string();
    }
    let cut: String = text.chars().take(ARGUMENT_EXCERPT_CHARS).collect();
    format!("{cut}…")
}

/// The call ids to stub now: results of re-readable tools in the sent items `view` (ledger
/// indices, in sending order) that are older than the newest `protected` tokens and the current
/// round, not yet stubbed, and at least [`MIN_PRUNED_TOKENS`] big. `tokens` holds each ledger
/// item's estimate.
pub fn candidates(
    ledger: &[LedgerItem],
    view: &[usize],
    tokens: &[u64],
    pruned: &HashSet<String>,
    protected: u64,
) -> Vec<String> {
    let calls = calls_by_id(ledger);
    let current_round = view.iter().rposition(|&index| matches!(ledger[index], LedgerItem::Assistant(_)));
    let mut newest = 0u64;
    let mut protected_from = view.len();
    for (position, &index) in view.iter().enumerate().rev() {
        if newest >= protected {
            break;
        }
        newest += tokens[index];
        protected_from = position;
    }
    let end = protected_from.min(current_round.unwrap_or(view.len()));
    view[..end]
        .iter()
        .filter_map(|&index| match &ledger[index] {
            LedgerItem::ToolResult(result) => Some((index, result)),
            LedgerItem::User(_)
            | LedgerItem::Assistant(_)
            | LedgerItem::Compaction(_)
            | LedgerItem::Meta(_) => None,
        })
        .filter(|(index, result)| {
            tokens[*index] >= MIN_PRUNED_TOKENS
                && !pruned.contains(&result.call_id)
                && calls
                    .get(result.call_id.as_str())
                    .is_some_and(|call| REREADABLE_TOOLS.contains(&call.name.as_str()))
        })
        .map(|(_, result)| result.call_id.clone())
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "prune_tests.rs"]
mod tests;
