//! Runs the two-turn "first line of notes.txt" probe with a chosen answer mode and model, printing
//! each turn's calls, text and figures. Used to compare prompting choices.
//!
//! `cargo run --release -p lathe-local --features llama --example probe -- [0.5b|1.5b|PATH] [text|final]`

use std::path::PathBuf;

use futures::StreamExt;
use lathe_local::{AnswerMode, LocalConfig, LocalProvider, ModelSize};
use lathe_protocol::{
    Accumulator, LedgerItem, ModelEvent, ModelRequest, SystemBlock, ThinkingFormat, ToolResult, ToolSpec,
    ToolStatus, UserMessage,
};
use lathe_provider::Provider;
use tokio_util::sync::CancellationToken;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut path = lathe_local::default_model_path(ModelSize::Q05B);
    let mut mode = AnswerMode::FinalAnswerTool;
    let mut question = "What is the first line of notes.txt?".to_string();
    let mut threads = None;
    let mut only: Option<Vec<String>> = None;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "t1" => threads = Some(1),
            other if other.starts_with("tools=") => {
                only = Some(other["tools=".len()..].split(',').map(String::from).collect())
            }
            "t2" => threads = Some(2),
            "text" => mode = AnswerMode::Text,
            "final" => mode = AnswerMode::FinalAnswerTool,
            "auto" => mode = AnswerMode::Auto,
            other if other.ends_with(".gguf") => path = PathBuf::from(other),
            other => match other.parse::<ModelSize>() {
                Ok(size) => path = lathe_local::default_model_path(size),
                Err(_) => question = other.to_string(),
            },
        }
    }
    let config = LocalConfig { model_path: Some(path), answer_mode: mode, threads, ..LocalConfig::default() };
    let provider = match LocalProvider::new(config) {
        Ok(provider) => provider,
        Err(err) => {
            eprintln!("error: {err}");
            return;
        }
    };
    let tools: Vec<ToolSpec> = lathe_tools::ToolRegistry::builtin().specs();
    let tools: Vec<ToolSpec> = match &only {
        Some(names) => tools.into_iter().filter(|t| names.contains(&t.name)).collect(),
        None => tools,
    };
    let mut request = ModelRequest {
        model: "local".into(),
        system: vec![SystemBlock {
            text: format!(
                "You are Lathe, a coding agent. You work in the directory {}. Use the tools to read, search, \
                     edit files and run commands there. Paths are relative to that directory.",
                std::env::var("PROBE_DIR").unwrap_or_else(|_| "/tmp/demo".into())
            ),
            cache_breakpoint: true,
        }],
        messages: vec![LedgerItem::User(UserMessage::text(question))],
        tools,
        max_output_tokens: 160,
        temperature: Some(0.0),
        ..ModelRequest::default()
    };
    for turn in 1..=3 {
        let events: Vec<ModelEvent> = provider.stream(&request, CancellationToken::new()).collect().await;
        let mut accumulator = Accumulator::new(ThinkingFormat::Local);
        for event in &events {
            accumulator.push(event);
        }
        let message = accumulator.finish("local");
        let stats = provider.stats();
        println!(
            "turn {turn}: stop {:?} text {:?} calls {:?} | prompt {} (eval {}) gen {} tok {:.1} tok/s ttft {:.0} ms sampling {:.0} ms fallbacks {}",
            message.stop,
            message.text(),
            message.tool_calls().map(|c| format!("{}({})", c.name, c.arguments)).collect::<Vec<_>>(),
            stats.prompt_tokens,
            stats.prompt_eval_tokens,
            stats.generated_tokens,
            stats.generation_tokens_per_second(),
            stats.first_token_ms,
            stats.sampling_ms,
            stats.grammar_fallbacks,
        );
        let calls: Vec<_> = message.tool_calls().cloned().collect();
        if calls.is_empty() {
            break;
        }
        request.messages.push(LedgerItem::Assistant(message));
        for call in calls {
            request.messages.push(LedgerItem::ToolResult(ToolResult::text(
                call.id,
                "     1\tBuy milk before Friday\n     2\tCall the plumber\n     3\tRenew the passport",
                false,
                ToolStatus::Completed,
            )));
        }
    }
}
