//! Edits sampled under the edit grammar always apply: every `edit_file` call the model makes after
//! reading a file names that file and an `old_string` the real `edit_file` tool finds exactly once,
//! so the tool applies it (an edit whose `new_string` equals its `old_string` changes nothing; the
//! tool refuses it with a hint, and the test only checks its `old_string`).

use lathe_local::{AnswerMode, LocalConfig, LocalProvider};
use lathe_protocol::{
    AssistantMessage, Content, LedgerItem, ModelRequest, SystemBlock, ToolCall, ToolResult, ToolStatus,
    UserMessage,
};
use lathe_tools::{ToolContext, ToolRegistry};
use serde_json::json;

const SAMPLES: usize = 12;

const SOURCE: &str = "import sys\n\n\ndef total(prices):\n    \"\"\"Sum of prices, in cents.\"\"\"\n    result = 0\n    for price in prices:\n        result += price\n    return result\n\n\ndef main():\n    prices = [int(arg) for arg in sys.argv[1:]]\n    print(total(prices))\n\n\nif __name__ == \"__main__\":\n    main()\n";

const TASKS: [&str; 4] = [
    "In shop.py, rename the variable result in total to cents.",
    "In shop.py, make main print the total followed by the word cents.",
    "In shop.py, change the docstring of total to say euros instead of cents.",
    "In shop.py, make total skip negative prices.",
];

fn request(task: &str, read: &ToolResult, temperature: f32) -> ModelRequest {
    let tools: Vec<_> = ToolRegistry::builtin()
        .specs()
        .into_iter()
        // Only edit_file: every sample is an edit (the 0.5B otherwise mostly reads the file again).
        .filter(|spec| spec.name == "edit_file")
        .collect();
    let call = ToolCall {
        id: "call_read".into(),
        name: "read_file".into(),
        arguments: json!({"path": "shop.py"}),
        incomplete: None,
    };
    ModelRequest {
        model: "local".into(),
        system: vec![SystemBlock {
            text: "You are a coding agent. Change files with edit_file.".into(),
            cache_breakpoint: true,
        }],
        messages: vec![
            LedgerItem::User(UserMessage::text(task)),
            LedgerItem::Assistant(AssistantMessage {
                content: vec![Content::ToolCall(call)],
                stop: lathe_protocol::StopReason::ToolUse,
                usage: lathe_protocol::Usage::default(),
                model: "local".into(),
            }),
            LedgerItem::ToolResult(read.clone()),
        ],
        tools,
        max_output_tokens: 160,
        temperature: Some(temperature),
        ..ModelRequest::default()
    }
}

#[tokio::test]
async fn sampled_edits_under_the_grammar_always_apply() {
    let _serial = super::serial().await;
    let workspace = tempfile::tempdir().unwrap();
    let file = workspace.path().join("shop.py");
    let tools = ToolRegistry::builtin();
    let provider = LocalProvider::new(LocalConfig {
        model_path: Some(super::model_path()),
        context_tokens: 2048,
        answer_mode: AnswerMode::ToolRequired,
        workspace: Some(workspace.path().to_path_buf()),
        prompt_cache: false,
        ..LocalConfig::default()
    })
    .unwrap();
    let mut failures = Vec::new();
    let mut edits = 0;
    let mut no_ops = 0;
    for sample in 0..SAMPLES {
        std::fs::write(&file, SOURCE).unwrap();
        // A real read, so the edit tool's read-before-edit check passes as in a session.
        let ctx = ToolContext::new(workspace.path().to_path_buf());
        let read_tool = tools.get("read_file").unwrap();
        let output = read_tool.call(json!({"path": "shop.py"}), &ctx).await.unwrap();
        let read = ToolResult {
            call_id: "call_read".into(),
            content: output.content,
            is_error: false,
            status: ToolStatus::Completed,
            receipt: None,
        };
        let temperature = if sample < TASKS.len() { 0.0 } else { 0.5 + 0.5 * ((sample % 3) as f32 / 2.0) };
        let request = request(TASKS[sample % TASKS.len()], &read, temperature);
        let (_, message) = super::run(&provider, &request).await;
        let calls: Vec<&ToolCall> = message.tool_calls().collect();
        if calls.len() != 1 || calls[0].incomplete.is_some() {
            failures.push(format!("sample {sample}: {} calls, stop {:?}", calls.len(), message.stop));
            continue;
        }
        let call = calls[0];
        assert_eq!(call.name, "edit_file", "sample {sample}");
        edits += 1;
        let old = call.arguments["old_string"].as_str().unwrap_or_default();
        if old == call.arguments["new_string"].as_str().unwrap_or_default() {
            // The grammar admits an edit that changes nothing (the tool refuses it and says
            // why); what it guarantees is that old_string is in the file exactly once.
            assert_eq!(SOURCE.matches(old).count(), 1, "sample {sample}: {}", call.arguments);
            no_ops += 1;
            continue;
        }
        let edit_tool = tools.get("edit_file").unwrap();
        match edit_tool.call(call.arguments.clone(), &ctx).await {
            Ok(output) if !output.is_error => {
                assert_ne!(
                    std::fs::read_to_string(&file).unwrap(),
                    SOURCE,
                    "sample {sample}: applied but unchanged"
                );
            }
            Ok(output) => {
                failures.push(format!("sample {sample}: {:?} → {:?}", call.arguments, output.content))
            }
            Err(error) => failures.push(format!("sample {sample}: {} → {error}", call.arguments)),
        }
    }
    assert!(failures.is_empty(), "{} of {SAMPLES} samples failed:\n{}", failures.len(), failures.join("\n"));
    assert_eq!(edits, SAMPLES);
    assert!(no_ops < SAMPLES, "every sample was an edit that changes nothing");
}
