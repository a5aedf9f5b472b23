//! Claude-Code-compatible hooks through `lathe -p` against `lathe-mock`, configured in the project's
//! `.claude/settings.json` as users already have them.

use serde_json::{Value, json};

use super::support::*;

/// Writes `hooks` as the `"hooks"` of `<workspace>/.claude/settings.json`.
fn claude_hooks(env: &Env, hooks: Value) {
    env.write_json("ws/.claude/settings.json", &json!({"permissions": {"allow": []}, "hooks": hooks}));
}

fn command_hook(matcher: &str, command: &str) -> Value {
    json!([{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}])
}

#[tokio::test]
async fn a_bash_pre_tool_use_hook_that_exits_2_blocks_shell_even_under_yolo() {
    let env = env();
    claude_hooks(
        &env,
        json!({"PreToolUse": command_hook("Bash", "cat > \"$CLAUDE_PROJECT_DIR/pre.json\"; echo 'rm is not allowed here' >&2; exit 2")}),
    );
    let server = scripted(json!([
        call("c1", "shell", json!({"command": "touch ran.txt"})),
        {"text": "blocked, fine"}
    ]))
    .await;
    let out =
        output(lathe(&env, &server.url(), &["-p", "run it", "--yolo", "--output-format", "stream-json"]))
            .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!env.workspace.join("ran.txt").exists(), "the blocked command ran");
    let results = tool_results(&json_lines(&out));
    assert_eq!(results[0]["status"], "denied");
    let seen = tool_result_text(&server.requests()[1].body);
    assert!(seen.contains("rm is not allowed here"), "{seen}");
    let input: Value =
        serde_json::from_str(&std::fs::read_to_string(env.workspace.join("pre.json")).expect("hook input"))
            .expect("json");
    assert_eq!(input["hook_event_name"], "PreToolUse");
    assert_eq!(input["tool_name"], "Bash");
    assert_eq!(input["tool_input"]["command"], "touch ran.txt");
    assert_eq!(input["permission_mode"], "bypassPermissions");
    assert_eq!(input["cwd"], env.workspace.display().to_string());
}

#[tokio::test]
async fn a_write_edit_post_tool_use_hook_receives_the_write_file_payload() {
    let env = env();
    claude_hooks(
        &env,
        json!({"PostToolUse": command_hook("Write|Edit", "cat >> \"$LATHE_PROJECT_DIR/../post.jsonl\"")}),
    );
    let server = scripted(json!([
        call("c1", "write_file", json!({"path": "src/new.txt", "content": "hello\n"})),
        call("c2", "shell", json!({"command": "true"})),
        {"text": "written"}
    ]))
    .await;
    let out = output(lathe(&env, &server.url(), &["-p", "write", "--yolo"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = std::fs::read_to_string(env.root.join("post.jsonl")).expect("hook output");
    let payloads: Vec<Value> =
        serde_json::Deserializer::from_str(&text).into_iter().map(|v| v.expect("json")).collect();
    assert_eq!(payloads.len(), 1, "only the write matches: {text}");
    let payload = &payloads[0];
    assert_eq!(payload["hook_event_name"], "PostToolUse");
    assert_eq!(payload["tool_name"], "Write");
    assert_eq!(payload["tool_input"]["file_path"], env.workspace.join("src/new.txt").display().to_string());
    assert_eq!(payload["tool_input"]["content"], "hello\n");
    assert_eq!(payload["tool_response"]["success"], true);
    assert_eq!(payload["tool_use_id"], "c1");
    assert!(payload["session_id"].as_str().is_some_and(|id| !id.is_empty()));
    assert!(
        payload["transcript_path"].as_str().is_some_and(|p| std::path::Path::new(p).is_file()),
        "{payload}"
    );
}

#[tokio::test]
async fn user_prompt_submit_stdout_reaches_the_first_request() {
    let env = env();
    claude_hooks(
        &env,
        json!({"UserPromptSubmit": command_hook("", "echo 'Reminder: the release branch is frozen.'")}),
    );
    let server = scripted(json!([{"text": "noted"}])).await;
    let out = output(lathe(&env, &server.url(), &["-p", "ship it"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let messages = server.requests()[0].body["messages"].to_string();
    assert!(
        messages.contains("ship it") && messages.contains("Reminder: the release branch is frozen."),
        "{messages}"
    );
}

#[tokio::test]
async fn a_user_prompt_submit_hook_that_exits_2_refuses_the_prompt() {
    let env = env();
    claude_hooks(
        &env,
        json!({"UserPromptSubmit": command_hook("", "echo 'no secrets in prompts' >&2; exit 2")}),
    );
    let server = scripted(json!([{"text": "never"}])).await;
    let out =
        output(lathe(&env, &server.url(), &["-p", "my password is hunter2", "--output-format", "json"]))
            .await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let result = json_lines(&out).pop().expect("result");
    assert_eq!(result["subtype"], "error_hook");
    assert!(
        result["error"]["message"].as_str().is_some_and(|m| m.contains("no secrets in prompts")),
        "{result}"
    );
    assert_eq!(server.requests().len(), 0);
}

#[tokio::test]
async fn a_stop_hook_that_exits_2_makes_exactly_one_more_request() {
    let env = env();
    claude_hooks(
        &env,
        json!({"Stop": command_hook("", "cat >> \"$CLAUDE_PROJECT_DIR/../stop.jsonl\"; echo 'run the tests first' >&2; exit 2")}),
    );
    let server = scripted(json!([{"text": "all done"}, {"text": "tests pass now"}, {"text": "never"}])).await;
    let out = output(lathe(&env, &server.url(), &["-p", "fix it", "--output-format", "stream-json"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[1].body["messages"].to_string().contains("run the tests first"));
    let lines = json_lines(&out);
    assert_eq!(lines.last().expect("result")["result"], "tests pass now");
    let text = std::fs::read_to_string(env.root.join("stop.jsonl")).expect("stop input");
    let stops: Vec<Value> =
        serde_json::Deserializer::from_str(&text).into_iter().map(|v| v.expect("json")).collect();
    let active: Vec<&Value> = stops.iter().map(|s| &s["stop_hook_active"]).collect();
    assert_eq!(active, vec![&json!(false), &json!(true)]);
    assert!(warnings(&lines).iter().any(|w| w.contains("blocked the stop again")), "{lines:?}");
}

#[tokio::test]
async fn a_json_permission_decision_deny_blocks_the_call() {
    let env = env();
    let deny = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                             "permissionDecisionReason": "secrets/ is off limits"}});
    claude_hooks(&env, json!({"PreToolUse": command_hook("Read", &format!("echo '{deny}'"))}));
    std::fs::write(env.workspace.join("secret.txt"), "the key").expect("file");
    let server =
        scripted(json!([call("c1", "read_file", json!({"path": "secret.txt"})), {"text": "ok"}])).await;
    let out = output(lathe(&env, &server.url(), &["-p", "read", "--yolo"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let seen = tool_result_text(&server.requests()[1].body);
    assert!(seen.contains("secrets/ is off limits") && !seen.contains("the key"), "{seen}");
}

#[tokio::test]
async fn a_hook_past_its_timeout_is_killed_and_reported() {
    let env = env();
    claude_hooks(
        &env,
        json!({"PreToolUse": [{"matcher": "", "hooks": [{"type": "command", "command": "sleep 30", "timeout": 1}]}]}),
    );
    let server = scripted(json!([call("c1", "list_dir", json!({"path": "."})), {"text": "listed"}])).await;
    let started = std::time::Instant::now();
    let out = output(lathe(&env, &server.url(), &["-p", "list", "--output-format", "stream-json"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(started.elapsed() < std::time::Duration::from_secs(25), "the hook was not killed at its timeout");
    let lines = json_lines(&out);
    assert!(
        warnings(&lines)
            .iter()
            .any(|w| w.contains("PreToolUse hook `sleep 30` timed out after 1 s and was killed")),
        "{lines:?}"
    );
    assert_eq!(tool_results(&lines)[0]["status"], "completed");
}

#[tokio::test]
async fn a_missing_hook_command_or_invalid_json_output_is_a_warning_and_nothing_is_lost() {
    let env = env();
    claude_hooks(
        &env,
        json!({
            "PreToolUse": [{"matcher": "", "hooks": [{"type": "command", "command": "/no/such/hook-script.sh"},
                                                      {"type": "command", "command": "echo '{\"decision\": '"}]}],
            "NoSuchEvent": []
        }),
    );
    std::fs::write(env.workspace.join("a.txt"), "content of a").expect("file");
    let server = scripted(json!([call("c1", "read_file", json!({"path": "a.txt"})), {"text": "read"}])).await;
    let out = output(lathe(&env, &server.url(), &["-p", "read", "--output-format", "stream-json"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let all = warnings(&json_lines(&out)).join("\n");
    assert!(all.contains("unknown hook event \"NoSuchEvent\""), "{all}");
    assert!(all.contains("hook `/no/such/hook-script.sh` failed with exit code 127"), "{all}");
    assert!(all.contains("printed invalid JSON"), "{all}");
    assert!(tool_result_text(&server.requests()[1].body).contains("content of a"));
}

#[tokio::test]
async fn session_start_context_and_session_end_run_from_lathe_settings() {
    let env = env();
    env.write_json(
        "lathe-home/settings.json",
        &json!({"hooks": {
            "SessionStart": command_hook("startup", "echo 'Project uses tabs.'"),
            "SessionEnd": command_hook("", "cat > \"$CLAUDE_PROJECT_DIR/end.json\"")
        }}),
    );
    let server = scripted(json!([{"text": "ok"}])).await;
    let out = output(lathe(&env, &server.url(), &["-p", "hello"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(server.requests()[0].body["messages"].to_string().contains("Project uses tabs."));
    let end: Value =
        serde_json::from_str(&std::fs::read_to_string(env.workspace.join("end.json")).expect("end"))
            .expect("json");
    assert_eq!(end["hook_event_name"], "SessionEnd");
    assert_eq!(end["reason"], "other");
}

#[tokio::test]
async fn mcp_tool_names_match_hook_matchers() {
    let env = env();
    claude_hooks(
        &env,
        json!({"PreToolUse": command_hook("mcp__everything__.*", "echo 'no MCP today' >&2; exit 2")}),
    );
    let config = env.write_json("mcp.json", &json!({"mcpServers": {"everything": everything_stdio()}}));
    let server =
        scripted(json!([call("c1", "mcp__everything__echo", json!({"message": "x"})), {"text": "ok"}])).await;
    let out =
        output(lathe(&env, &server.url(), &["-p", "go", "--mcp-config", &config.display().to_string()]))
            .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let seen = tool_result_text(&server.requests()[1].body);
    assert!(seen.contains("no MCP today") && !seen.contains("Echo: x"), "{seen}");
}

#[tokio::test]
async fn a_subagent_stop_hook_fires_when_a_sub_agent_ends_and_exit_2_makes_it_continue_once() {
    let env = env();
    claude_hooks(
        &env,
        json!({
            "SubagentStop": command_hook("", "cat >> \"$CLAUDE_PROJECT_DIR/../subagent-stop.jsonl\"; echo 'check the tests too' >&2; exit 2"),
            "Stop": command_hook("", "echo parent >> \"$CLAUDE_PROJECT_DIR/../stop.txt\""),
            "UserPromptSubmit": command_hook("", "echo prompt >> \"$CLAUDE_PROJECT_DIR/../prompts.txt\""),
        }),
    );
    let task = json!({"id": "call_t", "name": "task",
                      "arguments": {"description": "look", "prompt": "Look around", "subagent_type": "explore"}});
    let server = scripted(json!([
        {"tool_calls": [task]},
        {"text": "first look"},
        {"text": "looked again, tests too"},
        {"text": "parent done"}
    ]))
    .await;
    let out = output(lathe(&env, &server.url(), &["-p", "delegate", "--output-format", "stream-json"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    assert_eq!(requests.len(), 4, "the sub-agent made exactly one more request");
    assert!(requests[2].body["messages"].to_string().contains("check the tests too"));
    assert!(requests[3].body["messages"].to_string().contains("looked again, tests too"));
    let text = std::fs::read_to_string(env.root.join("subagent-stop.jsonl")).expect("SubagentStop input");
    let stops: Vec<Value> =
        serde_json::Deserializer::from_str(&text).into_iter().map(|v| v.expect("json")).collect();
    assert_eq!(stops.len(), 2, "{stops:?}");
    assert!(stops.iter().all(|s| s["hook_event_name"] == "SubagentStop"), "{stops:?}");
    let parent_stops = std::fs::read_to_string(env.root.join("stop.txt")).expect("Stop ran");
    assert_eq!(parent_stops.lines().count(), 1, "Stop fires for the parent only");
    let prompts = std::fs::read_to_string(env.root.join("prompts.txt")).expect("UserPromptSubmit ran");
    assert_eq!(prompts.lines().count(), 1, "the sub-agent's prompt is not a user prompt");
}

#[tokio::test]
async fn a_task_or_agent_matcher_gates_sub_agents() {
    for matcher in ["Task|Agent", "Agent", "Task", "task"] {
        let env = env();
        claude_hooks(
            &env,
            json!({"PreToolUse": command_hook(matcher, "echo 'no sub-agents today' >&2; exit 2")}),
        );
        let server = scripted(json!([
            call("t1", "task", json!({"description": "look", "prompt": "look around", "subagent_type": "explore"})),
            {"text": "fine"}
        ]))
        .await;
        let out = output(lathe(&env, &server.url(), &["-p", "go", "--output-format", "stream-json"])).await;
        assert_eq!(out.status.code(), Some(0), "{matcher}: {}", stderr(&out));
        let requests = server.requests();
        assert_eq!(requests.len(), 2, "{matcher}: no sub-agent request, only the parent's two");
        let results = tool_results(&json_lines(&out));
        assert_eq!(results[0]["status"], "denied", "{matcher}: {}", results[0]);
        let seen = tool_result_text(&requests[1].body);
        assert!(seen.contains("no sub-agents today"), "{matcher}: {seen}");
    }
}

#[tokio::test]
async fn a_comma_separated_matcher_is_a_list_of_names_and_a_server_prefix_is_pointed_out() {
    let env = env();
    claude_hooks(
        &env,
        json!({"PreToolUse": [
            {"matcher": "Edit, Write", "hooks": [{"type": "command", "command": "echo 'no writes' >&2; exit 2"}]},
            {"matcher": "mcp__my-srv", "hooks": [{"type": "command", "command": "true"}]}
        ]}),
    );
    let server = scripted(json!([
        call("c1", "write_file", json!({"path": "new.txt", "content": "x\n"})),
        {"text": "blocked"}
    ]))
    .await;
    let out =
        output(lathe(&env, &server.url(), &["-p", "write", "--yolo", "--output-format", "stream-json"]))
            .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = json_lines(&out);
    let results = tool_results(&lines);
    assert_eq!(results[0]["status"], "denied", "{}", results[0]);
    assert!(!env.workspace.join("new.txt").exists());
    let warned = lines.iter().any(|line| {
        line["type"] == "warning"
            && line["message"]
                .as_str()
                .is_some_and(|m| m.contains("mcp__my-srv") && m.contains("mcp__my-srv__.*"))
    });
    assert!(warned, "{lines:?}");
}

#[tokio::test]
async fn with_claude_config_dir_set_its_deny_rule_and_its_hook_both_apply() {
    let env = env();
    // Only `$CLAUDE_CONFIG_DIR/settings.json` configures anything (there is no `~/.claude`): the
    // permission rules and the hooks are taken from the same files.
    let dir = env.root.join("claude-config");
    env.write_json(
        "claude-config/settings.json",
        &json!({
            "permissions": {"deny": ["Bash(touch denied.txt)"]},
            "hooks": {"PostToolUse": command_hook("Bash", "cat >> \"$CLAUDE_PROJECT_DIR/../post.jsonl\"")}
        }),
    );
    let server = scripted(json!([
        call("c1", "shell", json!({"command": "touch denied.txt"})),
        call("c2", "shell", json!({"command": "touch allowed.txt"})),
        {"text": "done"}
    ]))
    .await;
    let mut command =
        lathe(&env, &server.url(), &["-p", "touch both", "--yolo", "--output-format", "stream-json"]);
    command.env("CLAUDE_CONFIG_DIR", &dir);
    let out = output(command).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!env.workspace.join("denied.txt").exists(), "the deny rule did not bind");
    assert!(env.workspace.join("allowed.txt").exists(), "the allowed command did not run");
    let results = tool_results(&json_lines(&out));
    assert_eq!(results[0]["status"], "denied", "{results:?}");
    let text = std::fs::read_to_string(env.root.join("post.jsonl")).expect("the hook did not run");
    let payloads: Vec<Value> =
        serde_json::Deserializer::from_str(&text).into_iter().map(|v| v.expect("json")).collect();
    assert_eq!(payloads.len(), 1, "only the command that ran: {text}");
    assert_eq!(payloads[0]["tool_input"]["command"], "touch allowed.txt");
}

#[tokio::test]
async fn a_hook_output_field_outside_the_schema_is_named_once_per_hook() {
    let env = env();
    claude_hooks(
        &env,
        json!({"PreToolUse": command_hook("Bash", "echo '{\"permissionDecision\": \"deny\", \"note\": 1}'")}),
    );
    let server = scripted(json!([
        call("c1", "shell", json!({"command": "echo one >> ran.txt"})),
        call("c2", "shell", json!({"command": "echo two >> ran.txt"})),
        {"text": "both ran"}
    ]))
    .await;
    let out =
        output(lathe(&env, &server.url(), &["-p", "run them", "--yolo", "--output-format", "stream-json"]))
            .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Claude's schema puts permissionDecision under hookSpecificOutput: at the top level it
    // decides nothing, and the user is told.
    assert_eq!(std::fs::read_to_string(env.workspace.join("ran.txt")).unwrap_or_default(), "one\ntwo\n");
    let warned: Vec<String> = warnings(&json_lines(&out))
        .into_iter()
        .filter(|warning| warning.contains("Lathe does not understand"))
        .collect();
    assert_eq!(warned.len(), 1, "once per hook: {warned:?}");
    assert!(
        warned[0].contains("`permissionDecision` (it belongs under hookSpecificOutput)")
            && warned[0].contains("`note`"),
        "{}",
        warned[0]
    );
}
