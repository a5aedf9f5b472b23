#![allow(clippy::unwrap_used, clippy::expect_used)]

use lathe_protocol::{
    AssistantMessage, Compaction, Content, LedgerItem, Meta, ModelRequest, StopReason, SystemBlock, ToolCall,
    ToolResult, ToolSpec, ToolStatus, Usage, UserMessage,
};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

fn read_file_tool() -> ToolSpec {
    ToolSpec {
        name: "read_file".into(),
        description: "Read a file.".into(),
        input_schema: json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Args",
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"]
        }),
    }
}

fn assistant(content: Vec<Content>) -> LedgerItem {
    LedgerItem::Assistant(AssistantMessage {
        content,
        stop: StopReason::ToolUse,
        usage: Usage::default(),
        model: "m".into(),
    })
}

fn call(id: &str, path: &str) -> Content {
    Content::ToolCall(ToolCall {
        id: id.into(),
        name: "read_file".into(),
        arguments: json!({"path": path}),
        incomplete: None,
    })
}

fn request(messages: Vec<LedgerItem>) -> ModelRequest {
    ModelRequest {
        system: vec![SystemBlock { text: "You are Lathe.".into(), cache_breakpoint: true }],
        messages,
        tools: vec![read_file_tool()],
        ..ModelRequest::default()
    }
}

const TOOLS_BLOCK: &str = "<|im_start|>system\nYou are Lathe.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"read_file\", \"description\": \"Read a file.\", \"parameters\": {\"type\": \"object\", \"properties\": {\"path\": {\"type\": \"string\"}}, \"required\": [\"path\"]}}}\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n";

#[test]
fn renders_the_qwen_template_with_tools_calls_and_grouped_results() {
    let messages = vec![
        LedgerItem::Meta(Meta::Note { text: "never sent".into() }),
        LedgerItem::User(UserMessage::text("Read a and b.")),
        assistant(vec![Content::text("Reading."), call("c1", "a"), call("c2", "b")]),
        LedgerItem::ToolResult(ToolResult::text("c1", "1\tA", false, ToolStatus::Completed)),
        LedgerItem::ToolResult(ToolResult::text("c2", "no such file", true, ToolStatus::Failed)),
        LedgerItem::User(UserMessage::injected("Reminder.")),
    ];
    let prompt = render_prompt(&request(messages), AnswerMode::Text);
    let expected = format!(
        "{TOOLS_BLOCK}<|im_start|>user\nRead a and b.<|im_end|>\n\
         <|im_start|>assistant\nReading.\n<tool_call>\n{{\"name\": \"read_file\", \"arguments\": {{\"path\": \"a\"}}}}\n</tool_call>\n<tool_call>\n{{\"name\": \"read_file\", \"arguments\": {{\"path\": \"b\"}}}}\n</tool_call><|im_end|>\n\
         <|im_start|>user\n<tool_response>\n1\tA\n</tool_response>\n<tool_response>\nError: no such file\n</tool_response><|im_end|>\n\
         <|im_start|>user\nReminder.<|im_end|>\n\
         <|im_start|>assistant\n"
    );
    assert_eq!(prompt, expected);
}

#[test]
fn final_answer_mode_advertises_the_answer_tool_and_renders_text_answers_as_its_calls() {
    let messages = vec![
        LedgerItem::Compaction(Compaction { summary: "Earlier: read a.".into(), kept_from: 0 }),
        LedgerItem::User(UserMessage::text("hi")),
        LedgerItem::Assistant(AssistantMessage {
            content: vec![Content::text("Hello \"you\"")],
            stop: StopReason::EndTurn,
            usage: Usage::default(),
            model: "m".into(),
        }),
        LedgerItem::User(UserMessage::text("bye")),
    ];
    let prompt = render_prompt(&request(messages), AnswerMode::FinalAnswerTool);
    assert!(prompt.contains("{\"type\": \"function\", \"function\": {\"name\": \"answer\""), "{prompt}");
    assert!(prompt.contains(
        "<|im_start|>user\nEarlier: read a.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<tool_call>\n{\"name\": \"answer\", \"arguments\": {\"answer\": \"Hello \\\"you\\\"\"}}\n</tool_call><|im_end|>\n<|im_start|>user\nbye<|im_end|>\n<|im_start|>assistant\n"
    ), "{prompt}");
}

#[test]
fn without_tools_or_system_the_default_system_prompt_is_used() {
    let request =
        ModelRequest { messages: vec![LedgerItem::User(UserMessage::text("hi"))], ..ModelRequest::default() };
    assert_eq!(
        render_prompt(&request, AnswerMode::FinalAnswerTool),
        format!(
            "<|im_start|>system\n{DEFAULT_SYSTEM}<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
        )
    );
}

#[test]
fn the_system_turn_is_a_stable_prefix_of_every_prompt() {
    let first = request(vec![LedgerItem::User(UserMessage::text("one"))]);
    let mut second = first.clone();
    second.messages.push(assistant(vec![call("c", "x")]));
    second.messages.push(LedgerItem::ToolResult(ToolResult::text("c", "ok", false, ToolStatus::Completed)));
    let system = render_system(&first, AnswerMode::FinalAnswerTool);
    let one = render_prompt(&first, AnswerMode::FinalAnswerTool);
    let two = render_prompt(&second, AnswerMode::FinalAnswerTool);
    assert!(one.starts_with(&system) && two.starts_with(&system));
    // The second prompt extends the first (minus its open assistant turn) with the call as generated.
    let history = one.strip_suffix(ASSISTANT_START).unwrap();
    let generated = render_call("read_file", &json!({"path": "x"}));
    assert!(two.starts_with(&format!("{history}{ASSISTANT_START}{generated}<|im_end|>\n")), "{two}");
}

#[test]
fn lean_tools_keep_only_required_parameters() {
    let tools = vec![ToolSpec {
        name: "grep".into(),
        description: String::new(),
        input_schema: json!({"type": "object", "required": ["pattern"],
            "properties": {"pattern": {"type": "string"}, "path": {"type": "string"}, "glob": {"type": "string"}}}),
    }];
    let lean = lean_tools(&tools);
    assert_eq!(lean[0].input_schema["properties"], json!({"pattern": {"type": "string"}}));
    assert_eq!(lean[0].input_schema["required"], json!(["pattern"]));
}

#[test]
fn restating_the_task_ends_every_turn_of_results_with_the_users_latest_message() {
    let messages = vec![
        LedgerItem::User(UserMessage::injected("Files: a")),
        LedgerItem::User(UserMessage::text("Read a.")),
        assistant(vec![call("c1", "a")]),
        LedgerItem::ToolResult(ToolResult::text("c1", "1\tA", false, ToolStatus::Completed)),
        assistant(vec![call("c2", "a")]),
        LedgerItem::ToolResult(ToolResult::text("c2", "1\tA", false, ToolStatus::Completed)),
    ];
    let plain = render_prompt(&request(messages.clone()), AnswerMode::Text);
    let restated = render_prompt_with(&request(messages.clone()), AnswerMode::Text, true);
    assert_eq!(plain.matches("The task:").count(), 0);
    assert_eq!(
        restated.matches("\n</tool_response>\nThe task: Read a.<|im_end|>\n").count(),
        2,
        "{restated}"
    );
    // Injected messages are not the task, and the rendering of earlier turns never changes.
    assert!(!restated.contains("The task: Files: a"));
    let shorter = render_prompt_with(&request(messages[..4].to_vec()), AnswerMode::Text, true);
    let shorter = shorter.strip_suffix(ASSISTANT_START).unwrap();
    assert!(restated.starts_with(shorter));
}

#[test]
fn the_question_example_shows_calls_as_the_model_writes_them_after_the_core() {
    let read = render_call("read_file", &json!({"path": "server.py"}));
    let answer = render_call(
        FINAL_ANSWER_TOOL,
        &json!({"thought": "Line 3: PORT = 8080", "answer": "server.py listens on port 8080 (PORT = 8080)."}),
    );
    assert!(QUESTION_EXAMPLE.contains(&format!("\n{read}\nResult:")), "{QUESTION_EXAMPLE}");
    assert!(QUESTION_EXAMPLE.ends_with(&format!("\n{answer}\n")), "{QUESTION_EXAMPLE}");
    // The thought names the line of the result that holds the answer, by its number.
    assert!(QUESTION_EXAMPLE.contains("     3\tPORT = 8080\n"));

    let mut base = request(vec![]);
    base.system.push(SystemBlock { text: "# Environment".into(), cache_breakpoint: false });
    let mut asked = base.clone();
    add_question_example(&mut asked);
    assert_eq!(asked.system[0].text, format!("You are Lathe.{QUESTION_EXAMPLE}"));
    assert_eq!(asked.system[1].text, "# Environment");
    assert_eq!(asked.messages, base.messages);
    // Without a system prompt (Qwen's default) nothing is added.
    let mut bare = ModelRequest { system: vec![], ..request(vec![]) };
    add_question_example(&mut bare);
    assert!(bare.system.is_empty());
}
