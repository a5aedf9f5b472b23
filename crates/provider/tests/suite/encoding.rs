//! Request encoding: snapshots of each protocol's body for one representative ledger (text, an
//! image, a thinking block, two parallel tool calls with results — one an error, one with an
//! image), plus the rules around it: cache breakpoints, echoed reasoning, switching protocol.

use lathe_protocol::{
    AssistantMessage, Compaction, Content, LedgerItem, Meta, ModelRequest, StopReason, SystemBlock, Thinking,
    ThinkingConfig, ThinkingFormat, ToolCall, ToolResult, ToolSpec, ToolStatus, Usage, UserMessage,
    UserOrigin,
};
use lathe_provider::anthropic::cache::{MAX_BREAKPOINTS, count_breakpoints};
use lathe_provider::{Protocol, encode_request};
use serde_json::{Value, json};

const PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

fn thinking(format: ThinkingFormat) -> Content {
    let signature = match format {
        ThinkingFormat::OpenAiChat | ThinkingFormat::Local => None,
        ThinkingFormat::Anthropic => Some("EqQBCkYIBxgCKkB-signature".to_string()),
        ThinkingFormat::OpenAiResponses => Some("gAAAAABencrypted".to_string()),
    };
    Content::Thinking(Thinking {
        text: "The user wants the file and the listing; read both in parallel.".into(),
        signature,
        redacted: None,
        format,
    })
}

/// The representative ledger, with reasoning in `format`.
fn ledger(format: ThinkingFormat) -> Vec<LedgerItem> {
    vec![
        LedgerItem::Compaction(Compaction {
            summary: "Summary: the user is fixing a CLI in src/.".into(),
            kept_from: 0,
        }),
        LedgerItem::Meta(Meta::Note { text: "resumed".into() }),
        LedgerItem::User(UserMessage {
            content: vec![
                Content::text("What does main.rs do, and what is in docs/? Here is the error:"),
                Content::Image { media_type: "image/png".into(), data: PNG.into() },
            ],
            origin: UserOrigin::User,
        }),
        LedgerItem::Assistant(AssistantMessage {
            content: vec![
                thinking(format),
                Content::text("I'll read both."),
                Content::ToolCall(ToolCall {
                    id: "call_read".into(),
                    name: "read_file".into(),
                    arguments: json!({"path": "src/main.rs"}),
                    incomplete: None,
                }),
                Content::ToolCall(ToolCall {
                    id: "call_list".into(),
                    name: "list_dir".into(),
                    arguments: json!({"path": "docs"}),
                    incomplete: None,
                }),
            ],
            stop: StopReason::ToolUse,
            usage: Usage::default(),
            model: "model".into(),
        }),
        LedgerItem::ToolResult(ToolResult {
            call_id: "call_read".into(),
            content: vec![
                Content::text("fn main() { println!(\"hi\"); }"),
                Content::Image { media_type: "image/png".into(), data: PNG.into() },
            ],
            is_error: false,
            status: ToolStatus::Completed,
            receipt: None,
        }),
        LedgerItem::ToolResult(ToolResult::text(
            "call_list",
            "list_dir: docs: no such directory",
            true,
            ToolStatus::Failed,
        )),
        LedgerItem::User(UserMessage::injected("Reminder: answer briefly.")),
    ]
}

fn request(model: &str, format: ThinkingFormat) -> ModelRequest {
    ModelRequest {
        model: model.into(),
        system: vec![
            SystemBlock { text: "You are Lathe, a coding agent.".into(), cache_breakpoint: true },
            SystemBlock { text: "cwd: /work/demo".into(), cache_breakpoint: false },
        ],
        messages: ledger(format),
        tools: vec![
            ToolSpec {
                name: "read_file".into(),
                description: "Read a file.".into(),
                input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
            },
            ToolSpec {
                name: "list_dir".into(),
                description: "List a directory.".into(),
                input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
            },
        ],
        max_output_tokens: 8_192,
        temperature: None,
        top_p: None,
        thinking: Some(ThinkingConfig { budget_tokens: 4_096 }),
        prompt_caching: true,
        response_format: None,
    }
}

#[test]
fn anthropic_request_snapshot() {
    let body =
        encode_request(Protocol::Anthropic, &request("claude-sonnet-4-5", ThinkingFormat::Anthropic), "");
    insta::assert_json_snapshot!("anthropic_request", body);
}

#[test]
fn openai_chat_request_snapshot() {
    let body =
        encode_request(Protocol::OpenAiChat, &request("deepseek-reasoner", ThinkingFormat::OpenAiChat), "");
    insta::assert_json_snapshot!("openai_chat_request", body);
}

#[test]
fn openai_responses_request_snapshot() {
    let body =
        encode_request(Protocol::OpenAiResponses, &request("gpt-5", ThinkingFormat::OpenAiResponses), "");
    insta::assert_json_snapshot!("openai_responses_request", body);
}

#[test]
fn cache_breakpoints_never_exceed_four_and_never_reach_the_ledger() {
    for turns in 0..12 {
        let mut req = request("claude-sonnet-4-5", ThinkingFormat::Anthropic);
        for turn in 0..turns {
            req.messages.push(LedgerItem::Assistant(AssistantMessage {
                content: vec![Content::text(format!("answer {turn}"))],
                stop: StopReason::EndTurn,
                usage: Usage::default(),
                model: "m".into(),
            }));
            req.messages.push(LedgerItem::User(UserMessage::text(format!("question {turn}"))));
        }
        let before = req.clone();
        let body = encode_request(Protocol::Anthropic, &req, "");
        let count = count_breakpoints(&body);
        assert!(count <= MAX_BREAKPOINTS, "{turns} extra turns: {count} breakpoints");
        assert_eq!(count, 4, "system, last tool and the rolling tail (two messages)");
        assert_eq!(req, before, "encoding must not change the request");
        let stored = serde_json::to_string(&req.messages).unwrap();
        assert!(!stored.contains("cache_control"), "breakpoints leaked into the ledger");
        let last = body["messages"].as_array().unwrap().last().unwrap();
        assert_eq!(
            last["content"].as_array().unwrap().last().unwrap()["cache_control"],
            json!({"type": "ephemeral"})
        );
    }
    let mut uncached = request("claude-sonnet-4-5", ThinkingFormat::Anthropic);
    uncached.prompt_caching = false;
    assert_eq!(count_breakpoints(&encode_request(Protocol::Anthropic, &uncached, "")), 0);
}

fn assistant_messages(body: &Value) -> Vec<&Value> {
    body["messages"].as_array().unwrap().iter().filter(|message| message["role"] == "assistant").collect()
}

#[test]
fn deepseek_reasoning_content_is_echoed_on_the_tool_call_turn_only() {
    let mut req = request("deepseek-reasoner", ThinkingFormat::OpenAiChat);
    req.messages.push(LedgerItem::Assistant(AssistantMessage {
        content: vec![
            thinking(ThinkingFormat::OpenAiChat),
            Content::text("main.rs prints hi; docs/ is missing."),
        ],
        stop: StopReason::EndTurn,
        usage: Usage::default(),
        model: "deepseek-reasoner".into(),
    }));
    req.messages.push(LedgerItem::User(UserMessage::text("thanks")));
    let body = encode_request(Protocol::OpenAiChat, &req, "");
    let assistants = assistant_messages(&body);
    assert_eq!(
        assistants[0]["reasoning_content"],
        json!("The user wants the file and the listing; read both in parallel.")
    );
    assert_eq!(assistants[0]["tool_calls"].as_array().unwrap().len(), 2);
    assert!(assistants[1].get("reasoning_content").is_none(), "not on a turn without tool calls");
}

#[test]
fn chat_sends_one_tool_message_per_result_then_the_images() {
    let body = encode_request(Protocol::OpenAiChat, &request("gpt-4o", ThinkingFormat::OpenAiChat), "");
    let roles: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| message["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, vec!["system", "user", "user", "assistant", "tool", "tool", "user", "user"]);
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages[5]["content"], json!("list_dir: docs: no such directory"));
    assert_eq!(messages[6]["content"][0]["text"], json!("Image returned by tool call call_read:"));
    assert_eq!(messages[6]["content"][1]["type"], json!("image_url"));
    assert_eq!(body["max_tokens"], json!(8_192));
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
}

#[test]
fn anthropic_puts_parallel_results_in_one_user_message_with_is_error() {
    let body =
        encode_request(Protocol::Anthropic, &request("claude-sonnet-4-5", ThinkingFormat::Anthropic), "");
    let messages = body["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages.iter().map(|message| message["role"].as_str().unwrap()).collect();
    assert_eq!(roles, vec!["user", "assistant", "user"], "alternating roles after merging");
    let results = messages[2]["content"].as_array().unwrap();
    assert_eq!(results[0]["type"], "tool_result");
    assert_eq!(results[0]["content"][1]["type"], "image", "images stay inside the tool result");
    assert!(results[0].get("is_error").is_none());
    assert_eq!(results[1]["is_error"], json!(true));
    assert_eq!(results[2]["type"], "text");
    assert_eq!(messages[1]["content"][0]["signature"], json!("EqQBCkYIBxgCKkB-signature"));
}

#[test]
fn a_ledger_started_on_one_protocol_continues_on_another() {
    let from_anthropic = request("gpt-5", ThinkingFormat::Anthropic);
    let chat = encode_request(Protocol::OpenAiChat, &from_anthropic, "");
    assert!(assistant_messages(&chat)[0].get("reasoning_content").is_none(), "foreign reasoning is dropped");
    assert_eq!(assistant_messages(&chat)[0]["tool_calls"][1]["id"], json!("call_list"));
    let responses = encode_request(Protocol::OpenAiResponses, &from_anthropic, "");
    let input = responses["input"].as_array().unwrap();
    assert!(input.iter().all(|item| item["type"] != "reasoning"), "foreign reasoning is dropped");
    let outputs: Vec<&Value> = input.iter().filter(|item| item["type"] == "function_call_output").collect();
    assert_eq!(outputs.len(), 2);
    let from_responses = request("claude-sonnet-4-5", ThinkingFormat::OpenAiResponses);
    let anthropic = encode_request(Protocol::Anthropic, &from_responses, "");
    let blocks = anthropic["messages"][1]["content"].as_array().unwrap();
    assert!(blocks.iter().all(|block| block["type"] != "thinking"));
    assert_eq!(blocks[0]["type"], "text");
    assert!(
        anthropic.get("thinking").is_none(),
        "a tool turn without an Anthropic thinking block cannot be continued with thinking on"
    );
    let native =
        encode_request(Protocol::Anthropic, &request("claude-sonnet-4-5", ThinkingFormat::Anthropic), "");
    assert_eq!(native["thinking"], json!({"type": "enabled", "budget_tokens": 4_096}));
}

#[test]
fn responses_always_sends_the_full_input_unstored() {
    let body =
        encode_request(Protocol::OpenAiResponses, &request("gpt-5", ThinkingFormat::OpenAiResponses), "");
    assert_eq!(body["store"], json!(false));
    assert!(body.get("previous_response_id").is_none());
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    let reasoning =
        body["input"].as_array().unwrap().iter().find(|item| item["type"] == "reasoning").unwrap();
    assert_eq!(reasoning["encrypted_content"], json!("gAAAAABencrypted"));
}

#[test]
fn the_configured_model_fills_an_empty_request_model() {
    let mut req = request("", ThinkingFormat::Anthropic);
    req.thinking = None;
    for protocol in [Protocol::Anthropic, Protocol::OpenAiChat, Protocol::OpenAiResponses] {
        assert_eq!(encode_request(protocol, &req, "configured")["model"], json!("configured"));
    }
}

#[test]
fn sampling_parameters_are_left_out_for_openai_reasoning_models() {
    let mut req = request("gpt-4o", ThinkingFormat::OpenAiChat);
    req.thinking = None;
    req.temperature = Some(0.2);
    req.top_p = Some(0.9);
    for protocol in [Protocol::OpenAiChat, Protocol::OpenAiResponses] {
        let plain = encode_request(protocol, &req, "");
        assert_eq!(plain["temperature"], json!(0.2f32), "{protocol:?}");
        let mut reasoning = req.clone();
        reasoning.model = "o4-mini".into();
        let body = encode_request(protocol, &reasoning, "");
        assert!(body.get("temperature").is_none() && body.get("top_p").is_none(), "{protocol:?}: {body}");
    }
    let mut o3 = req.clone();
    o3.model = "openai/o3".into();
    assert_eq!(encode_request(Protocol::OpenAiChat, &o3, "")["max_completion_tokens"], json!(8_192));
}

#[test]
fn a_response_format_is_a_strict_json_schema_on_openai_and_left_to_the_prompt_on_anthropic() {
    let mut req = request("gpt-4o", ThinkingFormat::OpenAiChat);
    req.thinking = None;
    for protocol in [Protocol::Anthropic, Protocol::OpenAiChat, Protocol::OpenAiResponses] {
        let body = encode_request(protocol, &req, "");
        assert!(body.get("response_format").is_none() && body.get("text").is_none(), "{protocol:?}: {body}");
    }
    let schema = json!({"type": "object", "properties": {"met": {"type": "boolean"}}, "required": ["met"],
        "additionalProperties": false});
    req.response_format =
        Some(lathe_protocol::ResponseFormat { name: "goal_verdict".into(), schema: schema.clone() });
    let chat = encode_request(Protocol::OpenAiChat, &req, "");
    assert_eq!(
        chat["response_format"],
        json!({"type": "json_schema", "json_schema": {"name": "goal_verdict", "schema": schema, "strict": true}})
    );
    let responses = encode_request(Protocol::OpenAiResponses, &req, "");
    assert_eq!(
        responses["text"],
        json!({"format": {"type": "json_schema", "name": "goal_verdict", "schema": schema, "strict": true}})
    );
    let anthropic = encode_request(Protocol::Anthropic, &req, "");
    assert!(!anthropic.to_string().contains("goal_verdict"), "{anthropic}");
}
