//! Benchmark of the local provider: prompt processing and generation speed, time to first token
//! on turn 1 and turn 2 of a session (KV reuse), for one model file. Prints one JSON object.
//!
//! `cargo run --release -p lathe-local --features llama --example bench -- [0.5b|1.5b|PATH.gguf] [--threads N]`
//! (`bench/local/run.sh` runs it for both models under `/usr/bin/time -v` for the peak RSS.)

use std::path::PathBuf;
use std::process::ExitCode;

use futures::StreamExt;
use lathe_local::{AnswerMode, LocalConfig, LocalProvider, LocalStats, ModelSize};
use lathe_protocol::{
    Accumulator, AssistantMessage, LedgerItem, ModelEvent, ModelRequest, SystemBlock, ThinkingFormat,
    ToolResult, ToolSpec, ToolStatus, UserMessage,
};
use lathe_provider::Provider;
use serde_json::json;
use tokio_util::sync::CancellationToken;

async fn run(provider: &LocalProvider, request: &ModelRequest) -> (AssistantMessage, LocalStats) {
    let events: Vec<ModelEvent> = provider.stream(request, CancellationToken::new()).collect().await;
    let mut accumulator = Accumulator::new(ThinkingFormat::Local);
    for event in &events {
        accumulator.push(event);
    }
    (accumulator.finish("local"), provider.stats())
}

fn figures(stats: &LocalStats) -> serde_json::Value {
    json!({
        "prompt_tokens": stats.prompt_tokens,
        "reused_tokens": stats.reused_tokens,
        "prompt_eval_tokens": stats.prompt_eval_tokens,
        "prompt_tok_per_s": (stats.prompt_tokens_per_second() * 10.0).round() / 10.0,
        "generated_tokens": stats.generated_tokens,
        "generation_tok_per_s": (stats.generation_tokens_per_second() * 10.0).round() / 10.0,
        "first_token_ms": stats.first_token_ms.round(),
    })
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut path = lathe_local::default_model_path(ModelSize::Q05B);
    let mut threads = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--threads" => threads = args.next().and_then(|n| n.parse().ok()),
            other => match other.parse::<ModelSize>() {
                Ok(size) => path = lathe_local::default_model_path(size),
                Err(_) => path = PathBuf::from(other),
            },
        }
    }
    let config = LocalConfig {
        model_path: Some(path.clone()),
        threads,
        context_tokens: 8192,
        answer_mode: AnswerMode::FinalAnswerTool,
        // Measures prompt evaluation: the system turn is not loaded from disk.
        prompt_cache: false,
        ..LocalConfig::default()
    };
    let load = std::time::Instant::now();
    let provider = match LocalProvider::new(config) {
        Ok(provider) => provider,
        Err(err) => {
            eprintln!("error: {err}");
            return ExitCode::FAILURE;
        }
    };
    let load_ms = load.elapsed().as_millis();
    let tools: Vec<ToolSpec> = lathe_tools::ToolRegistry::builtin().specs();
    let system = vec![SystemBlock {
        text: "You are Lathe, a coding agent. You work in the directory /tmp/demo. Use the tools to read, search, \
               edit files and run commands there. Paths are relative to that directory."
            .into(),
        cache_breakpoint: true,
    }];
    let mut request = ModelRequest {
        model: "local".into(),
        system,
        messages: vec![LedgerItem::User(UserMessage::text("What is the first line of notes.txt?"))],
        tools,
        max_output_tokens: 128,
        temperature: Some(0.0),
        ..ModelRequest::default()
    };
    let (first, turn1) = run(&provider, &request).await;
    request.messages.push(LedgerItem::Assistant(first.clone()));
    for call in first.tool_calls() {
        request.messages.push(LedgerItem::ToolResult(ToolResult::text(
            call.id.clone(),
            "     1\tBuy milk before Friday\n     2\tCall the plumber",
            false,
            ToolStatus::Completed,
        )));
    }
    if first.tool_calls().count() == 0 {
        request.messages.push(LedgerItem::User(UserMessage::text("Now read notes.txt.")));
    }
    let (second, turn2) = run(&provider, &request).await;

    // Free generation without a grammar: up to 128 tokens of prose.
    let prose = ModelRequest {
        model: "local".into(),
        messages: vec![LedgerItem::User(UserMessage::text(
            "Write a long, detailed essay (at least 300 words) on how hash maps work in Rust.",
        ))],
        max_output_tokens: 128,
        temperature: Some(0.0),
        ..ModelRequest::default()
    };
    let (_, free) = run(&provider, &prose).await;

    let report = json!({
        "model": path.file_name().map(|n| n.to_string_lossy().into_owned()),
        "load_ms": load_ms,
        "turn1": figures(&turn1),
        "turn1_calls": first.tool_calls().map(|c| json!({"name": c.name, "arguments": c.arguments})).collect::<Vec<_>>(),
        "turn2": figures(&turn2),
        "turn2_text": second.text(),
        "free_generation": figures(&free),
    });
    println!("{}", serde_json::to_string_pretty(&report).unwrap_or_default());
    ExitCode::SUCCESS
}
