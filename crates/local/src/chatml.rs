//! Renders a [`ModelRequest`] as the Qwen2.5 ChatML prompt, tools block included.
//!
//! This is what the Qwen2.5(-Coder) chat template (`tokenizer.chat_template` in the GGUF) renders
//! for `messages` + `tools` with `add_generation_prompt`; llama.cpp's `apply_chat_template` cannot
//! render tools, so Lathe renders it here, byte for byte:
//!
//! ```text
//! <|im_start|>system\n{system}\n\n# Tools\n\n…<tools>\n{tool json}\n…</tools>\n\n…</tool_call><|im_end|>\n
//! <|im_start|>user\n{text}<|im_end|>\n
//! <|im_start|>assistant\n{text}\n<tool_call>\n{"name": …, "arguments": …}\n</tool_call><|im_end|>\n
//! <|im_start|>user\n<tool_response>\n{result}\n</tool_response><|im_end|>\n
//! <|im_start|>assistant\n
//! ```
//!
//! Ledger mapping: user and injected messages are user turns; a compaction is a user turn
//! carrying its summary; consecutive tool results share one user turn; meta items and reasoning are
//! not sent; images become a `[image]` placeholder (the model reads no images). In
//! [`AnswerMode::FinalAnswerTool`] a synthetic `answer` tool is advertised and a text-only
//! assistant message is rendered as the `answer` call the model produced for it.

use lathe_protocol::{AssistantMessage, Content, LedgerItem, ModelRequest, ToolResult, ToolSpec};
use serde_json::{Value, json};

use crate::config::AnswerMode;
use crate::pyjson;

/// Name of the synthetic answer tool of [`AnswerMode::FinalAnswerTool`]. (Of the names tried —
/// `final_answer`, `answer`, `reply`, `respond_to_user` — the 0.5B model scores `answer` highest
/// after a tool result.)
pub const FINAL_ANSWER_TOOL: &str = "answer";

/// Qwen's default system prompt, used when the request has none.
pub const DEFAULT_SYSTEM: &str = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.";

/// Precedes the user's message restated after tool results ([`render_prompt_with`]).
pub const TASK_LABEL: &str = "The task: ";

/// Start of the generation: the prompt always ends with this.
pub const ASSISTANT_START: &str = "<|im_start|>assistant\n";

const TOOLS_INTRO: &str = "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n\
You are provided with function signatures within <tools></tools> XML tags:\n<tools>";
const TOOLS_OUTRO: &str = "\n</tools>\n\nFor each function call, return a json object with function name and \
arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": \
<args-json-object>}\n</tool_call>";

/// Appended to the tools block in [`AnswerMode::FinalAnswerTool`]: small models otherwise keep
/// calling tools after they have what the user asked for.
const FINAL_ANSWER_HINT: &str = "\n\nReply to the user only through the answer tool. If the user asked a \
question, call answer as soon as a tool result holds what was asked. If the user asked for a change, make it \
with edit_file or write_file first: reading a file changes nothing. Do not change files unless the user asks \
for it.";

/// What the `answer` tool's `thought` asks for. Written before the reply (the grammar keeps
/// schema order), it is the model's scratch work and is not shown: on the former twelve-task bench's
/// questions the 1.5B counted the rows of a CSV right in 3 of 4 runs with it, 0 of 4 without.
const THOUGHT: &str = "Before the reply: the lines of the tool results that hold the answer, each with its line \
number, and any counting or reasoning done step by step.";

/// A worked example of answering a question from a file, appended to the system prompt of a
/// request whose user message is a question ([`add_question_example`]); the answer's thought
/// is then also made to start by citing a line (`grammar::Shape::cite_line`). Measured together
/// on the former twelve-task bench's three questions over 9 workspace directories (with the example's
/// thought worded `Line 3 is: …`), the 1.5B answered 15 of 27 right, against 8 of 21 over 7
/// directories without them: the second line of a file 6 of 9 (0 of 7), a CSV's data rows 8 of 9
/// (2 of 7), but the file defining a function 1 of 9 (6 of 7; it names the file that imports it).
/// Worded as the grammar writes it (`Line 3: …`), 5 of 6 in the bench's two directories (the
/// defining file 2 of 2). Change tasks get neither, so their prompt is unchanged.
pub const QUESTION_EXAMPLE: &str = "\nExample. User: Which port does server.py listen on?\n<tool_call>\n\
{\"name\": \"read_file\", \"arguments\": {\"path\": \"server.py\"}}\n</tool_call>\n\
Result:      1\timport http.server\n     2\tHOST = \"0.0.0.0\"\n     3\tPORT = 8080\n<tool_call>\n\
{\"name\": \"answer\", \"arguments\": {\"thought\": \"Line 3: PORT = 8080\", \"answer\": \
\"server.py listens on port 8080 (PORT = 8080).\"}}\n</tool_call>\n";

/// Appends [`QUESTION_EXAMPLE`] to the first system block of `request` (the static core); a
/// request without system blocks is left as is (Qwen's default prompt has no examples).
pub fn add_question_example(request: &mut ModelRequest) {
    if let Some(core) = request.system.first_mut() {
        core.text.push_str(QUESTION_EXAMPLE);
    }
}

/// The tool the model can call to answer: `{"thought": string, "answer": string}`; only
/// `answer` reaches the user.
pub fn final_answer_spec() -> ToolSpec {
    ToolSpec {
        name: FINAL_ANSWER_TOOL.to_string(),
        description:
            "Reply to the user and end your turn. Call this when the task is done, when you can answer \
                      without another tool, or when you need to ask the user something."
                .to_string(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "thought": {"type": "string", "description": THOUGHT},
                "answer": {"type": "string", "description": "The complete reply shown to the user, in words (quote text from files without their line numbers)."}
            },
            "required": ["thought", "answer"]
        }),
    }
}

/// The tools the model is offered for `request` in `mode`: the request's tools, plus
/// `answer` in [`AnswerMode::FinalAnswerTool`] when there is at least one tool.
pub fn offered_tools(request: &ModelRequest, mode: AnswerMode) -> Vec<ToolSpec> {
    let mut tools = request.tools.clone();
    if matches!(mode, AnswerMode::FinalAnswerTool | AnswerMode::Auto)
        && !tools.is_empty()
        && !tools.iter().any(|t| t.name == FINAL_ANSWER_TOOL)
    {
        tools.insert(0, final_answer_spec());
    }
    tools
}

/// `tools` with only their required parameters (a schema without `required`, or not an object
/// schema, is kept whole). A small model fills optional parameters with plausible-looking wrong
/// values: `"glob": "*.rs"` in a Python project, a grep `path` naming the wrong file.
pub fn lean_tools(tools: &[ToolSpec]) -> Vec<ToolSpec> {
    tools
        .iter()
        .map(|tool| {
            let mut tool = tool.clone();
            let required: Vec<String> = match tool.input_schema.get("required") {
                Some(Value::Array(names)) => {
                    names.iter().filter_map(Value::as_str).map(str::to_string).collect()
                }
                _ => return tool,
            };
            if let Some(Value::Object(properties)) = tool.input_schema.get_mut("properties") {
                properties.retain(|name, _| required.contains(name));
            }
            tool
        })
        .collect()
}

/// The system turn (tools block included). It depends only on the system blocks and the tools, so
/// it is byte-stable across the requests of a session.
pub fn render_system(request: &ModelRequest, mode: AnswerMode) -> String {
    let system: Vec<&str> = request.system.iter().map(|block| block.text.as_str()).collect();
    let system = if system.is_empty() { DEFAULT_SYSTEM.to_string() } else { system.join("\n\n") };
    let tools = offered_tools(request, mode);
    let mut out = format!("<|im_start|>system\n{system}");
    if !tools.is_empty() {
        out.push_str(TOOLS_INTRO);
        for tool in &tools {
            out.push('\n');
            out.push_str(&pyjson::to_string(&tool_json(tool)));
        }
        out.push_str(TOOLS_OUTRO);
        if tools.iter().any(|tool| tool.name == FINAL_ANSWER_TOOL)
            && matches!(mode, AnswerMode::FinalAnswerTool | AnswerMode::Auto)
        {
            out.push_str(FINAL_ANSWER_HINT);
        }
    }
    out.push_str("<|im_end|>\n");
    out
}

/// The whole prompt: system turn, conversation, and the open assistant turn.
pub fn render_prompt(request: &ModelRequest, mode: AnswerMode) -> String {
    render_prompt_with(request, mode, false)
}

/// [`render_prompt`], and with `restate_task` every turn of tool results ends with the user's
/// latest message again (`\nThe task: {text}`), so a small model reads what was asked right before
/// it decides (deterministic per ledger, so the KV cache still reuses every earlier turn).
pub fn render_prompt_with(request: &ModelRequest, mode: AnswerMode, restate_task: bool) -> String {
    let answer_tool = mode == AnswerMode::FinalAnswerTool && !request.tools.is_empty();
    let mut out = render_system(request, mode);
    let mut in_tool_turn = false;
    let mut task: Option<String> = None;
    let close_tool_turn = |out: &mut String, task: &Option<String>| {
        if let Some(task) = task.as_ref().filter(|_| restate_task) {
            out.push_str(&format!("\n{TASK_LABEL}{task}"));
        }
        out.push_str("<|im_end|>\n");
    };
    for item in &request.messages {
        let is_result = matches!(item, LedgerItem::ToolResult(_));
        if in_tool_turn && !is_result {
            close_tool_turn(&mut out, &task);
            in_tool_turn = false;
        }
        match item {
            LedgerItem::User(message) => {
                let text = content_text(&message.content);
                if message.origin == lathe_protocol::UserOrigin::User {
                    task = Some(text.trim().to_string()).filter(|text| !text.is_empty());
                }
                push_turn(&mut out, "user", &text);
            }
            LedgerItem::Compaction(compaction) => push_turn(&mut out, "user", &compaction.summary),
            LedgerItem::Assistant(message) => push_assistant(&mut out, message, answer_tool),
            LedgerItem::ToolResult(result) => {
                if !in_tool_turn {
                    out.push_str("<|im_start|>user");
                    in_tool_turn = true;
                }
                out.push_str("\n<tool_response>\n");
                out.push_str(&result_text(result));
                out.push_str("\n</tool_response>");
            }
            LedgerItem::Meta(_) => {}
        }
    }
    if in_tool_turn {
        close_tool_turn(&mut out, &task);
    }
    out.push_str(ASSISTANT_START);
    out
}

/// The text of one tool call as the template renders it (and as the grammar makes the model write
/// it): `<tool_call>\n{"name": "…", "arguments": {…}}\n</tool_call>`.
pub fn render_call(name: &str, arguments: &Value) -> String {
    format!(
        "<tool_call>\n{{\"name\": {}, \"arguments\": {}}}\n</tool_call>",
        pyjson::to_string(name),
        pyjson::to_string(arguments)
    )
}

fn tool_json(tool: &ToolSpec) -> Value {
    let mut parameters = tool.input_schema.clone();
    if let Some(object) = parameters.as_object_mut() {
        // schemars adds these; they cost prompt tokens and tell the model nothing.
        object.shift_remove("$schema");
        object.shift_remove("title");
    }
    json!({
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": parameters}
    })
}

fn push_turn(out: &mut String, role: &str, text: &str) {
    out.push_str("<|im_start|>");
    out.push_str(role);
    out.push('\n');
    out.push_str(text);
    out.push_str("<|im_end|>\n");
}

fn push_assistant(out: &mut String, message: &AssistantMessage, answer_tool: bool) {
    let text = message.text();
    let calls: Vec<String> =
        message.tool_calls().map(|call| render_call(&call.name, &call.arguments)).collect();
    if calls.is_empty() {
        if answer_tool {
            let call = render_call(FINAL_ANSWER_TOOL, &json!({"answer": text}));
            push_turn(out, "assistant", &call);
        } else {
            push_turn(out, "assistant", &text);
        }
        return;
    }
    out.push_str("<|im_start|>assistant");
    if !text.is_empty() {
        out.push('\n');
        out.push_str(&text);
    }
    for call in calls {
        out.push('\n');
        out.push_str(&call);
    }
    out.push_str("<|im_end|>\n");
}

fn content_text(content: &[Content]) -> String {
    let parts: Vec<&str> = content
        .iter()
        .filter_map(|part| match part {
            Content::Text { text } => Some(text.as_str()),
            Content::Image { .. } => Some("[image]"),
            Content::Thinking(_) | Content::ToolCall(_) => None,
        })
        .collect();
    parts.join("\n")
}

fn result_text(result: &ToolResult) -> String {
    let text = content_text(&result.content);
    if result.is_error && !text.to_ascii_lowercase().starts_with("error") {
        format!("Error: {text}")
    } else {
        text
    }
}

#[cfg(test)]
#[path = "chatml_tests.rs"]
mod tests;
