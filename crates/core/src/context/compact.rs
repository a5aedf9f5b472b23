//! Compaction (FEATURES.md §E, third layer): the conversation so far is replaced by a structured
//! summary written by the same model, followed by a recent tail kept verbatim.
//!
//! Order of operations ([`plan`], then [`summary_request`], [`summarize`] and [`boundary`]):
//! 1. Split the sent items into segments that must stay together: a user message, a boundary, or
//!    an assistant message with the results of its calls. The tail is the newest segments that fit
//!    [`super::Budget::tail`]; a tail start that would fall between a call and its result moves
//!    back to the call.
//! 2. The summary request: the same system prompt and tools (so the provider's prompt cache still
//!    hits), the items before the tail, and a last user message asking for the summary in a fixed
//!    structure ([`SUMMARY_REQUEST`]). When that request would itself not fit the window, the
//!    oldest segments are left out first (and a note says so).
//! 3. The boundary text: the user's own messages verbatim, the summary, up to five recently read
//!    files read again from disk (size-capped) and the task list. It is appended as a
//!    [`Compaction`] item whose `kept_from` is the ledger index where the kept tail starts.

use std::collections::HashSet;

use lathe_protocol::{
    Compaction, LedgerItem, ModelRequest, ProviderError, SystemBlock, ThinkingFormat, ToolSpec, Usage,
    UserMessage, UserOrigin,
};
use lathe_provider::Provider;
use lathe_tools::builtin::todo::{TodoItem, render};
use lathe_tools::{ToolContext, ToolRegistry};
use tokio_util::sync::CancellationToken;

use super::budget::{Budget, item_tokens, text_tokens};
use crate::requester;

/// The first line of the summary request; scripted model servers recognise it.
pub const SUMMARY_REQUEST_MARKER: &str = "[context compaction] Summarize the conversation so far.";

/// The summary request's instructions (after [`SUMMARY_REQUEST_MARKER`]).
pub const SUMMARY_REQUEST: &str = "\
The conversation above will be replaced by your summary so that the work can continue within the \
model's context window; everything not in the summary is lost. Do not call tools. Reply with the \
summary only, using exactly these sections:

## User's task and constraints
The user's requests and every constraint they gave, quoted verbatim.
## Verified facts
What has been established so far (file contents, behaviour, test results), with file paths.
## Files changed
Each file created or edited, and why.
## Commands run
Commands and their results (pass or fail, the key lines of output).
## Open problems
Errors not yet solved, open questions, risks.
## Next step
The single next action to take.

Keep exact names, paths, numbers and error messages.";

/// Most files re-attached after a compaction.
pub const MAX_REATTACHED_FILES: usize = 5;

/// Where the tail starts and what the summary request leaves out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Position in the sent items where the kept tail starts (the items' length: nothing kept).
    pub tail_start: usize,
    /// Positions of the items summarized (before the tail), after leaving out the oldest.
    pub summarized: Vec<usize>,
    /// Segments left out of the summary request so that it fits.
    pub omitted_rounds: u32,
}

/// Segments of the sent items: start positions of runs that must stay together.
pub fn segment_starts(ledger: &[LedgerItem], view: &[usize]) -> Vec<usize> {
    view.iter()
        .enumerate()
        .filter(|(_, index)| !matches!(ledger[**index], LedgerItem::ToolResult(_)))
        .map(|(position, _)| position)
        .collect()
}

/// The earliest position at or before `start` such that no tool result from it on answers a call
/// made before it.
pub fn unsplit(ledger: &[LedgerItem], view: &[usize], mut start: usize) -> usize {
    loop {
        let calls_before: HashSet<&str> = view[..start]
            .iter()
            .filter_map(|&index| match &ledger[index] {
                LedgerItem::Assistant(message) => Some(message.tool_calls().map(|call| call.id.as_str())),
                LedgerItem::User(_)
                | LedgerItem::ToolResult(_)
                | LedgerItem::Compaction(_)
                | LedgerItem::Meta(_) => None,
            })
            .flatten()
            .collect();
        let split = view[start..].iter().any(|&index| match &ledger[index] {
            LedgerItem::ToolResult(result) => calls_before.contains(result.call_id.as_str()),
            LedgerItem::User(_)
            | LedgerItem::Assistant(_)
            | LedgerItem::Compaction(_)
            | LedgerItem::Meta(_) => false,
        });
        if !split || start == 0 {
            return start;
        }
        start -= 1;
        while start > 0 && matches!(ledger[view[start]], LedgerItem::ToolResult(_)) {
            start -= 1;
        }
    }
}

/// Chooses the tail and the summary input. `tokens` holds each ledger item's estimate (as sent),
/// `fixed` the system prompt and tools, `input_cap` an upper bound on the summary request's input
/// (lowered after a summary request the provider found too long).
pub fn plan(
    ledger: &[LedgerItem],
    view: &[usize],
    tokens: &[u64],
    fixed: u64,
    budget: &Budget,
    input_cap: u64,
) -> Plan {
    let starts = segment_starts(ledger, view);
    // A previous boundary is older than everything else sent, whatever its ledger index.
    let earliest =
        usize::from(matches!(view.first().map(|&index| &ledger[index]), Some(LedgerItem::Compaction(_))));
    let mut tail_start = view.len();
    let mut kept = 0u64;
    for &start in starts.iter().rev() {
        if start < earliest {
            break;
        }
        let size: u64 = view[start..tail_start].iter().map(|&index| tokens[index]).sum();
        if kept + size > budget.tail {
            break;
        }
        kept += size;
        tail_start = start;
    }
    let mut tail_start = unsplit(ledger, view, tail_start);
    // Keeping the previous boundary, or keeping everything, would leave nothing to summarize.
    if tail_start <= earliest {
        tail_start = view.len();
    }

    let prompt = text_tokens(SUMMARY_REQUEST) + text_tokens(SUMMARY_REQUEST_MARKER) + 64;
    let room =
        budget.window.saturating_sub(budget.summary_output + budget.margin + fixed + prompt).min(input_cap);
    let mut summarized: Vec<usize> = (0..tail_start).collect();
    let mut omitted_rounds = 0;
    let size = |positions: &[usize]| positions.iter().map(|&position| tokens[view[position]]).sum::<u64>();
    while !summarized.is_empty() && size(&summarized) > room {
        let next =
            summarized.iter().skip(1).position(|&position| starts.contains(&position)).map(|at| at + 1);
        match next {
            Some(at) => {
                summarized.drain(..at);
            }
            None => summarized.clear(),
        }
        omitted_rounds += 1;
    }
    Plan { tail_start, summarized, omitted_rounds }
}

/// The summary request for `plan`: system and tools as in every request, the summarized items
/// (as sent, stubs included), and the request for the summary. When the oldest rounds are left
/// out, a first message says so and repeats the user's messages (`user_messages`) verbatim.
#[allow(clippy::too_many_arguments)]
pub fn summary_request(
    model: &str,
    system: &[SystemBlock],
    tools: Vec<ToolSpec>,
    sent: &[LedgerItem],
    plan: &Plan,
    user_messages: &[String],
    focus: Option<&str>,
    budget: &Budget,
    prompt_caching: bool,
) -> ModelRequest {
    let mut messages = Vec::with_capacity(plan.summarized.len() + 2);
    if plan.omitted_rounds > 0 {
        let mut note = format!(
            "[The oldest {} rounds of this conversation are left out here because they do not fit in one request.]",
            plan.omitted_rounds
        );
        if !user_messages.is_empty() {
            note.push_str("\nThe user's messages, verbatim:\n");
            note.push_str(&user_messages.join("\n\n"));
        }
        messages.push(LedgerItem::User(UserMessage::injected(note)));
    }
    messages.extend(plan.summarized.iter().map(|&position| sent[position].clone()));
    let mut ask = format!(
        "{SUMMARY_REQUEST_MARKER}\n{SUMMARY_REQUEST}\nUse at most about {} words.",
        budget.summary_output / 2
    );
    if let Some(focus) = focus.map(str::trim).filter(|focus| !focus.is_empty()) {
        ask.push_str(&format!("\nThe user asks the summary to focus on: {focus}"));
    }
    messages.push(LedgerItem::User(UserMessage::injected(ask)));
    ModelRequest {
        model: model.to_string(),
        system: system.to_vec(),
        messages: lathe_protocol::pairing::paired(messages),
        tools,
        max_output_tokens: budget.summary_output as u32,
        temperature: None,
        top_p: None,
        thinking: None,
        prompt_caching,
        response_format: None,
    }
}

/// Sends the summary request and returns the summary text and the responses' usage. An answer
/// without text is an error (nothing to compact to); an answer that is only tool calls (a model
/// that keeps working instead of summarizing: small local models whose grammar forces a call
/// whenever tools are offered) is asked once more without tools, and the usage of both counts.
pub async fn summarize(
    provider: &dyn Provider,
    request: &ModelRequest,
    format: ThinkingFormat,
    cancel: &CancellationToken,
) -> (Result<String, ProviderError>, Usage) {
    let (result, usage, called_tools) = summarize_once(provider, request, format, cancel).await;
    if !called_tools || request.tools.is_empty() || result.is_ok() {
        return (result, usage);
    }
    let without_tools = ModelRequest { tools: Vec::new(), ..request.clone() };
    let (result, again, _) = summarize_once(provider, &without_tools, format, cancel).await;
    (result, add_usage(usage, again))
}

/// One summary attempt: the text or an error, the usage, and whether the answer called tools.
async fn summarize_once(
    provider: &dyn Provider,
    request: &ModelRequest,
    format: ThinkingFormat,
    cancel: &CancellationToken,
) -> (Result<String, ProviderError>, Usage, bool) {
    // A stream that ends without a stop still counts: what arrived is the summary.
    let acc = requester::stream(provider, format, request, None, cancel).await.acc;
    let error = acc.error().cloned();
    let message = acc.finish(&request.model);
    let usage = message.usage;
    if let Some(error) = error {
        return (Err(error), usage, false);
    }
    let text = message.text();
    if text.trim().is_empty() {
        let called_tools = message.tool_calls().next().is_some();
        let detail = if called_tools {
            "the summary response called tools instead of answering with text"
        } else {
            "the summary response had no text"
        };
        return (Err(ProviderError::IncompleteStream { detail: detail.into() }), usage, called_tools);
    }
    (Ok(text.trim().to_string()), usage, false)
}

/// The sum of two responses' usage (a count missing from both stays `None`).
fn add_usage(a: Usage, b: Usage) -> Usage {
    let sum = |x: Option<u64>, y: Option<u64>| match (x, y) {
        (None, None) => None,
        (x, y) => Some(x.unwrap_or(0) + y.unwrap_or(0)),
    };
    Usage {
        input_tokens: sum(a.input_tokens, b.input_tokens),
        output_tokens: sum(a.output_tokens, b.output_tokens),
        cache_read_input_tokens: sum(a.cache_read_input_tokens, b.cache_read_input_tokens),
        cache_creation_input_tokens: sum(a.cache_creation_input_tokens, b.cache_creation_input_tokens),
    }
}

/// What the boundary re-attaches besides the summary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reattached {
    /// The user's own messages before the tail, verbatim (capped: see [`user_messages`]).
    pub user_messages: Vec<String>,
    /// Files read before the tail, as read again now: (path as the model wrote it, read output).
    pub files: Vec<(String, String)>,
    /// The task list, rendered.
    pub todos: Option<String>,
}

/// The user's own messages in `ledger[..before]`, verbatim: the first always (cut if it alone
/// exceeds `budget` tokens), then the most recent ones that fit.
pub fn user_messages(ledger: &[LedgerItem], before: usize, budget: u64) -> Vec<String> {
    let texts: Vec<String> = ledger[..before.min(ledger.len())]
        .iter()
        .filter_map(|item| match item {
            LedgerItem::User(message) if message.origin == UserOrigin::User => Some(message.text_content()),
            LedgerItem::User(_)
            | LedgerItem::Assistant(_)
            | LedgerItem::ToolResult(_)
            | LedgerItem::Compaction(_)
            | LedgerItem::Meta(_) => None,
        })
        .collect();
    let Some((first, rest)) = texts.split_first() else { return Vec::new() };
    let mut kept = vec![cut_to(first, budget)];
    let mut used = text_tokens(&kept[0]);
    let mut recent = Vec::new();
    for text in rest.iter().rev() {
        let size = text_tokens(text);
        if used + size > budget {
            break;
        }
        used += size;
        recent.push(text.clone());
    }
    let omitted = rest.len() - recent.len();
    if omitted > 0 {
        kept.push(format!("[{omitted} more of the user's messages are left out here]"));
    }
    kept.extend(recent.into_iter().rev());
    kept
}

fn cut_to(text: &str, budget: u64) -> String {
    let max_bytes = (budget * super::budget::BYTES_PER_TOKEN) as usize;
    if text_tokens(text) <= budget {
        return text.to_string();
    }
    let mut cut = max_bytes.min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}\n[… cut here: {} more bytes]", &text[..cut], text.len() - cut)
}

/// Files read by `read_file` in `ledger[..before]` (without an error), newest first, read again
/// from disk; at most [`MAX_REATTACHED_FILES`], each cut to half of `budget` tokens, all within
/// `budget`. A file that can no longer be read is skipped.
pub async fn recent_files(
    ledger: &[LedgerItem],
    before: usize,
    tools: &ToolRegistry,
    ctx: &ToolContext,
    budget: u64,
) -> Vec<(String, String)> {
    let Some(read) = tools.get("read_file") else { return Vec::new() };
    let failed: HashSet<&str> = ledger
        .iter()
        .filter_map(|item| match item {
            LedgerItem::ToolResult(result) if result.is_error => Some(result.call_id.as_str()),
            _ => None,
        })
        .collect();
    let mut seen = HashSet::new();
    let mut files = Vec::new();
    let mut used = 0u64;
    // Collected first: an iterator with closures must not be held across the awaits below (the
    // future would stop being `Send`).
    let calls: Vec<&lathe_protocol::ToolCall> = ledger[..before.min(ledger.len())]
        .iter()
        .rev()
        .filter_map(|item| match item {
            LedgerItem::Assistant(message) => {
                Some(message.tool_calls().collect::<Vec<_>>().into_iter().rev())
            }
            _ => None,
        })
        .flatten()
        .collect();
    for call in calls {
        if files.len() >= MAX_REATTACHED_FILES || used >= budget {
            break;
        }
        let Some(path) = call.arguments.get("path").and_then(|path| path.as_str()) else { continue };
        if call.name != "read_file" || failed.contains(call.id.as_str()) || !seen.insert(ctx.resolve(path)) {
            continue;
        }
        let Ok(output) = read.call(serde_json::json!({ "path": path }), ctx).await else { continue };
        if output.is_error {
            continue;
        }
        let text = cut_to(&output.text_content(), (budget / 2).min(budget - used));
        used += text_tokens(&text);
        files.push((path.to_string(), text));
    }
    files
}

/// The task list of the last `todo_write` call, rendered; `None` when there is none or it is empty.
pub fn todos(ledger: &[LedgerItem]) -> Option<String> {
    let call = ledger.iter().rev().find_map(|item| match item {
        LedgerItem::Assistant(message) => {
            message.tool_calls().filter(|call| call.name == "todo_write").last()
        }
        _ => None,
    })?;
    let items: Vec<TodoItem> = serde_json::from_value(call.arguments.get("items")?.clone()).ok()?;
    (!items.is_empty()).then(|| render(&items))
}

/// The boundary's text: what happened, the user's messages verbatim, the summary, the files and
/// the task list.
pub fn boundary(
    summary: &str,
    summarized_items: usize,
    omitted_rounds: u32,
    reattached: &Reattached,
) -> String {
    let mut text = format!(
        "This session continues an earlier conversation that was compacted to fit the model's context window \
         ({summarized_items} earlier items are summarized below"
    );
    if omitted_rounds > 0 {
        text.push_str(&format!("; the oldest {omitted_rounds} rounds could not be included in the summary"));
    }
    text.push_str(").\n");
    if !reattached.user_messages.is_empty() {
        text.push_str("\n## The user's messages, verbatim\n");
        for message in &reattached.user_messages {
            text.push_str(message.trim_end());
            text.push_str("\n\n");
        }
    }
    text.push_str("\n## Summary of the earlier conversation\n");
    text.push_str(summary.trim());
    text.push('\n');
    if !reattached.files.is_empty() {
        text.push_str("\n## Files read earlier, read again after the compaction (current content)\n");
        for (path, content) in &reattached.files {
            text.push_str(&format!("\n### {path}\n{}\n", content.trim_end()));
        }
    }
    if let Some(todos) = &reattached.todos {
        text.push_str("\n## Task list\n");
        text.push_str(todos.trim_end());
        text.push('\n');
    }
    text.push_str(
        "\nContinue the task from where it stopped. The messages after this one are the most recent part of the \
         conversation, kept verbatim.",
    );
    text
}

/// The boundary item for `plan` over the sent items `view` of `ledger`.
pub fn compaction_item(ledger: &[LedgerItem], view: &[usize], plan: &Plan, text: String) -> Compaction {
    Compaction { summary: text, kept_from: view.get(plan.tail_start).copied().unwrap_or(ledger.len()) }
}

/// Estimated tokens of the summarized items (for the event).
pub fn summarized_tokens(view: &[usize], plan: &Plan, ledger: &[LedgerItem]) -> u64 {
    plan.summarized.iter().map(|&position| item_tokens(&ledger[view[position]])).sum()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "compact_tests.rs"]
mod tests;
