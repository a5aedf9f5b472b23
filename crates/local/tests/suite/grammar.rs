//! Every sampled call of every built-in tool parses and validates against the tool's schema.

use futures::StreamExt;
use lathe_local::{AnswerMode, LocalConfig, LocalProvider, chatml, grammar};
use lathe_protocol::{LedgerItem, ModelRequest, StopReason, SystemBlock, ToolSpec, UserMessage};
use tokio_util::sync::CancellationToken;

const SAMPLES_PER_TOOL: usize = 20;

fn request_for(tool: &ToolSpec, temperature: f32) -> ModelRequest {
    ModelRequest {
        model: "local".into(),
        system: vec![SystemBlock {
            text: "You are a coding agent in a small Rust project.".into(),
            cache_breakpoint: true,
        }],
        messages: vec![LedgerItem::User(UserMessage::text(format!(
            "Call the {} tool once with short, realistic arguments.",
            tool.name
        )))],
        tools: vec![tool.clone()],
        max_output_tokens: 96,
        temperature: Some(temperature),
        ..ModelRequest::default()
    }
}

#[tokio::test]
async fn sampled_calls_of_every_builtin_tool_parse_and_validate() {
    let _serial = super::serial().await;
    let config = LocalConfig {
        model_path: Some(super::model_path()),
        context_tokens: 1024,
        answer_mode: AnswerMode::ToolRequired,
        // Every parameter of every schema, several calls per response (the schema grammar itself;
        // the edit grammar has its own test in `edits.rs`).
        edit_grammar: false,
        lean_schemas: false,
        max_calls_per_response: 0,
        prompt_cache: false,
        ..LocalConfig::default()
    };
    let provider = LocalProvider::new(config).unwrap();
    let mut failures = Vec::new();
    let mut total = 0;
    for tool in super::builtin_tools() {
        let validator = jsonschema::validator_for(&tool.input_schema).unwrap();
        assert!(
            grammar::build_grammar(
                &chatml::offered_tools(&request_for(&tool, 0.0), AnswerMode::ToolRequired),
                AnswerMode::ToolRequired
            )
            .is_some()
        );
        for sample in 0..SAMPLES_PER_TOOL {
            // Sample 0 is greedy; the others sample at temperatures from 0.4 to 1.0 with fresh seeds.
            let temperature = if sample == 0 { 0.0 } else { 0.4 + 0.6 * ((sample % 4) as f32 / 3.0) };
            let request = request_for(&tool, temperature);
            let events: Vec<_> =
                lathe_provider::Provider::stream(&provider, &request, CancellationToken::new())
                    .collect()
                    .await;
            let message = super::fold(&events);
            total += 1;
            let mut calls: Vec<_> = message.tool_calls().collect();
            // At high temperature the model sometimes adds more calls after the first; the test's
            // short token budget may cut the last one off. Every complete call must still be valid.
            if message.stop == StopReason::MaxTokens
                && calls.len() > 1
                && calls.last().is_some_and(|c| c.incomplete.is_some())
            {
                calls.pop();
            }
            let complete_stop = matches!(message.stop, StopReason::ToolUse | StopReason::MaxTokens);
            let problem = if !complete_stop || calls.is_empty() {
                Some(format!("stop {:?}, {} calls", message.stop, calls.len()))
            } else {
                calls.iter().find_map(|call| {
                    if call.incomplete.is_some() {
                        Some(format!("incomplete: {:?}", call.incomplete))
                    } else if call.name != tool.name {
                        Some(format!("called {}", call.name))
                    } else {
                        validator
                            .validate(&call.arguments)
                            .err()
                            .map(|err| format!("{err}: {}", call.arguments))
                    }
                })
            };
            if let Some(problem) = problem {
                failures.push(format!("{} sample {sample} (t={temperature:.2}): {problem}", tool.name));
            }
        }
    }
    assert!(failures.is_empty(), "{} of {total} samples invalid:\n{}", failures.len(), failures.join("\n"));
}
