//! A small task end to end, KV-cache reuse across turns, overflow and cancel.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use futures::StreamExt;
use lathe_local::{AnswerMode, LocalProvider};
use lathe_protocol::{
    LedgerItem, ModelEvent, ModelRequest, ProviderError, StopReason, SystemBlock, ToolResult, ToolStatus,
    UserMessage,
};
use lathe_provider::Provider;
use tokio_util::sync::CancellationToken;

use super::{builtin_tools, run};

/// The system prompt names the workspace as `.` (tool paths resolve against it), so the prompt —
/// and greedy output — does not depend on the random temp dir name.
fn system(_workspace: &std::path::Path) -> Vec<SystemBlock> {
    vec![SystemBlock {
        text:
            "You are Lathe, a coding agent. You work in the directory .. Use the tools to read, search, edit \
               files and run commands there. Paths are relative to that directory."
                .to_string(),
        cache_breakpoint: true,
    }]
}

fn request(workspace: &std::path::Path, messages: Vec<LedgerItem>) -> ModelRequest {
    ModelRequest {
        model: "local".into(),
        system: system(workspace),
        messages,
        tools: builtin_tools(),
        max_output_tokens: 128,
        temperature: Some(0.0),
        ..ModelRequest::default()
    }
}

/// What `read_file` returns for `text` (line-numbered).
fn read_file_output(text: &str) -> String {
    text.lines().enumerate().map(|(i, line)| format!("{:>6}\t{line}", i + 1)).collect::<Vec<_>>().join("\n")
}

fn provider() -> Arc<LocalProvider> {
    static CELL: OnceLock<Arc<LocalProvider>> = OnceLock::new();
    super::shared(&CELL, AnswerMode::default())
}

#[tokio::test]
async fn greedy_first_line_task_reads_notes_and_answers_with_the_line() {
    let _serial = super::serial().await;
    let workspace = tempfile::tempdir().unwrap();
    let notes = "Buy milk before Friday\nCall the plumber\nRenew the passport\n";
    std::fs::write(workspace.path().join("notes.txt"), notes).unwrap();
    let provider = provider();

    let mut messages = vec![LedgerItem::User(UserMessage::text("What is the first line of notes.txt?"))];
    let (_, first) = run(provider.as_ref(), &request(workspace.path(), messages.clone())).await;
    eprintln!("turn 1: {:?}", provider.stats());
    assert_eq!(first.stop, StopReason::ToolUse, "{first:?}");
    let calls: Vec<_> = first.tool_calls().cloned().collect();
    assert_eq!(calls.len(), 1, "{first:?}");
    assert_eq!(calls[0].name, "read_file", "{first:?}");
    let path = calls[0].arguments["path"].as_str().unwrap_or_default().to_string();
    let resolved = workspace.path().join(&path);
    assert_eq!(
        std::fs::canonicalize(&resolved).ok(),
        std::fs::canonicalize(workspace.path().join("notes.txt")).ok(),
        "path {path:?}"
    );

    // Feed back what read_file really returns for that file.
    let content = std::fs::read_to_string(&resolved).unwrap();
    messages.push(LedgerItem::Assistant(first.clone()));
    messages.push(LedgerItem::ToolResult(ToolResult::text(
        calls[0].id.clone(),
        read_file_output(&content),
        false,
        ToolStatus::Completed,
    )));
    let (_, second) = run(provider.as_ref(), &request(workspace.path(), messages)).await;
    eprintln!("turn 2: {:?}", provider.stats());
    assert_eq!(second.stop, StopReason::EndTurn, "{second:?}");
    assert_eq!(second.tool_calls().count(), 0, "{second:?}");
    assert!(second.text().contains("Buy milk before Friday"), "answer: {:?}", second.text());
}

#[tokio::test]
async fn the_second_request_evaluates_only_the_tokens_added_since_the_first() {
    let _serial = super::serial().await;
    let workspace = tempfile::tempdir().unwrap();
    // A fresh provider: an empty KV cache.
    let provider = super::provider(AnswerMode::default(), 4096);
    let mut messages = vec![LedgerItem::User(UserMessage::text("List the files here."))];
    let (first_events, first) = run(&provider, &request(workspace.path(), messages.clone())).await;
    let one = provider.stats();
    assert_eq!(one.reused_tokens, 0);
    assert_eq!(one.prompt_eval_tokens, one.prompt_tokens);
    let usage = first_events.iter().find_map(|e| match e {
        ModelEvent::Usage(usage) => Some(*usage),
        _ => None,
    });
    assert_eq!(usage.and_then(|u| u.input_tokens), Some(one.prompt_tokens));
    assert_eq!(usage.and_then(|u| u.cache_read_input_tokens), Some(0));

    messages.push(LedgerItem::Assistant(first.clone()));
    for call in first.tool_calls() {
        messages.push(LedgerItem::ToolResult(ToolResult::text(
            call.id.clone(),
            "notes.txt\nsrc/",
            false,
            ToolStatus::Completed,
        )));
    }
    if first.tool_calls().count() == 0 {
        messages.push(LedgerItem::User(UserMessage::text("Thanks. Now read notes.txt.")));
    }
    let _ = run(&provider, &request(workspace.path(), messages)).await;
    let two = provider.stats();
    let added = two.prompt_tokens - one.prompt_tokens;
    assert!(
        two.reused_tokens >= one.prompt_tokens,
        "reused {} of a first prompt of {}",
        two.reused_tokens,
        one.prompt_tokens
    );
    assert_eq!(two.prompt_eval_tokens, two.prompt_tokens - two.reused_tokens);
    assert!(
        two.prompt_eval_tokens <= added,
        "evaluated {} tokens, {} were added",
        two.prompt_eval_tokens,
        added
    );
    assert_eq!(provider.last_prompt_eval_tokens(), two.prompt_eval_tokens);

    // A new conversation in the same session reuses the static system turn.
    // (Not a question: a question's system turn ends with a worked example.)
    let fresh = vec![LedgerItem::User(UserMessage::text("List what src/ contains."))];
    let _ = run(&provider, &request(workspace.path(), fresh)).await;
    let three = provider.stats();
    let system_tokens = one.prompt_tokens - 12; // the first prompt minus its short user turn
    assert!(
        three.reused_tokens >= system_tokens,
        "reused {} (system turn ≈ {system_tokens})",
        three.reused_tokens
    );
    assert!(three.prompt_eval_tokens < 40, "evaluated {}", three.prompt_eval_tokens);
}

#[tokio::test]
async fn a_prompt_longer_than_the_context_is_context_window_exceeded() {
    let _serial = super::serial().await;
    let provider = super::provider(AnswerMode::default(), 512);
    let long = "word ".repeat(2000);
    let workspace = tempfile::tempdir().unwrap();
    let (events, _) =
        run(&provider, &request(workspace.path(), vec![LedgerItem::User(UserMessage::text(long))])).await;
    let Some(ModelEvent::Error { error }) = events.last() else { panic!("{events:?}") };
    assert!(matches!(error, ProviderError::ContextWindowExceeded { .. }), "{error}");
    assert!(error.to_string().contains("context window is 512 tokens"), "{error}");
}

#[tokio::test]
async fn cancel_stops_generation_promptly() {
    let _serial = super::serial().await;
    let provider = provider();
    let workspace = tempfile::tempdir().unwrap();
    let mut request = request(
        workspace.path(),
        vec![LedgerItem::User(UserMessage::text("Write a long essay about the history of compilers."))],
    );
    request.tools.clear();
    request.max_output_tokens = 2000;
    let cancel = CancellationToken::new();
    let mut stream = provider.stream(&request, cancel.clone());
    let mut events = Vec::new();
    while let Some(event) = stream.next().await {
        let first_text = matches!(event, ModelEvent::TextDelta { .. });
        events.push(event);
        if first_text {
            break;
        }
    }
    let cancelled_at = Instant::now();
    cancel.cancel();
    let rest: Vec<ModelEvent> =
        tokio::time::timeout(Duration::from_secs(10), stream.collect()).await.unwrap();
    assert!(cancelled_at.elapsed() < Duration::from_secs(5));
    assert!(matches!(rest.last(), Some(ModelEvent::Error { error: ProviderError::Cancelled })), "{rest:?}");
    // The session is still usable.
    request.max_output_tokens = 4;
    let (events, message) = run(provider.as_ref(), &request).await;
    assert!(matches!(events.last(), Some(ModelEvent::Stop { .. })), "{events:?}");
    assert_eq!(message.stop, StopReason::MaxTokens);
}
