//! Skills, custom commands and sub-agents through `lathe -p` against `lathe-mock`: what the
//! provider receives.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use lathe_mock::{LoggedRequest, MockServer, Mode, Script};
use serde_json::{Value, json};

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    user_home: PathBuf,
    workspace: PathBuf,
}

fn env() -> Env {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("lathe-home");
    let user_home = tmp.path().join("user");
    let workspace = tmp.path().join("ws");
    for dir in [&home, &user_home, &workspace] {
        std::fs::create_dir_all(dir).expect("dir");
    }
    std::fs::write(home.join("config.toml"), "[retry]\nmax_retries = 0\n").expect("config");
    Env { _tmp: tmp, home, user_home, workspace }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
    std::fs::write(path, text).expect("write");
}

async fn run(env: &Env, server: &MockServer, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_lathe"));
    command
        .args(args)
        .args(["--provider", "anthropic", "--base-url", &server.url(), "-C"])
        .arg(&env.workspace)
        .env("LATHE_HOME", &env.home)
        .env("HOME", &env.user_home)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("LATHE_PROVIDER")
        .stdin(Stdio::null());
    tokio::task::spawn_blocking(move || command.output()).await.expect("join").expect("run lathe")
}

async fn scripted(turns: Value) -> MockServer {
    let script = Script::from_json(&json!({ "turns": turns }).to_string()).expect("script");
    MockServer::start(Mode::Scripted(script)).await.expect("mock")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn tool<'a>(request: &'a LoggedRequest, name: &str) -> Option<&'a Value> {
    request.body["tools"].as_array()?.iter().find(|tool| tool["name"] == name)
}

fn tool_names(request: &LoggedRequest) -> Vec<String> {
    request.body["tools"]
        .as_array()
        .map(|tools| tools.iter().filter_map(|t| t["name"].as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

/// The text of every `tool_result` block in the request's messages, with its call id.
fn tool_results(request: &LoggedRequest) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for message in request.body["messages"].as_array().into_iter().flatten() {
        for block in message["content"].as_array().into_iter().flatten() {
            if block["type"] == "tool_result" {
                let text = match &block["content"] {
                    Value::String(text) => text.clone(),
                    Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
                    other => other.to_string(),
                };
                out.push((block["tool_use_id"].as_str().unwrap_or_default().to_string(), text));
            }
        }
    }
    out
}

fn task_call(id: &str, kind: &str, prompt: &str) -> Value {
    json!({"id": id, "name": "task",
           "arguments": {"description": "look around", "prompt": prompt, "subagent_type": kind}})
}

#[tokio::test]
async fn skill_is_listed_by_description_and_its_body_comes_from_the_skill_tool() {
    let env = env();
    let skill = env.workspace.join(".claude/skills/release-notes");
    write(
        &skill.join("SKILL.md"),
        "---\nname: release-notes\ndescription: Writes release notes from git history\n---\n\
         BODY-MARKER: read template.md, then summarise.\n",
    );
    write(&skill.join("template.md"), "# Notes\n");
    let server = scripted(json!([
        {"tool_calls": [{"id": "call_1", "name": "skill", "arguments": {"name": "release-notes"}}]},
        {"text": "Done."}
    ]))
    .await;
    let out = run(&env, &server, &["-p", "write release notes"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let listed = tool(&requests[0], "skill").expect("skill tool offered");
    let description = listed["description"].as_str().expect("description");
    assert!(description.contains("- release-notes: Writes release notes from git history"), "{description}");
    assert!(
        !requests[0].body.to_string().contains("BODY-MARKER"),
        "the body is not sent before it is loaded"
    );
    let results = tool_results(&requests[1]);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].0, "call_1");
    assert!(results[0].1.contains("BODY-MARKER: read template.md, then summarise."), "{}", results[0].1);
    assert!(results[0].1.contains("- template.md"), "{}", results[0].1);
}

#[tokio::test]
async fn bad_skill_and_agent_files_are_reported_and_the_rest_load() {
    let env = env();
    let project = env.workspace.join(".lathe/skills");
    write(&project.join("good/SKILL.md"), "---\nname: good\ndescription: A good skill\n---\nbody\n");
    write(&project.join("plain/SKILL.md"), "no frontmatter here\n");
    write(&project.join("broken/SKILL.md"), "---\nname: broken\ndescription: [unclosed\n---\n");
    write(
        &env.user_home.join(".claude/skills/good/SKILL.md"),
        "---\nname: good\ndescription: user copy\n---\n",
    );
    let huge = format!("---\nname: huge\ndescription: big\n---\n{}", "x".repeat(5 * 1024 * 1024));
    write(&env.home.join("skills/huge/SKILL.md"), &huge);
    let agents = env.workspace.join(".claude/agents");
    write(&agents.join("fine.md"), "---\nname: fine\ndescription: A fine agent\n---\nPrompt\n");
    write(&agents.join("nofront.md"), "Prompt only\n");
    write(&agents.join("zdup.md"), "---\nname: fine\ndescription: again\n---\n");
    write(&agents.join("bad.md"), "---\nname: bad\ndescription: : :\n  - x\n---\n");
    write(&agents.join("huge.md"), &huge.replace("name: huge", "name: hugeagent"));
    let server = scripted(json!([{"text": "ok"}])).await;
    let out = run(&env, &server, &["-p", "hi"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    for needle in [
        "plain/SKILL.md: no YAML frontmatter",
        "broken/SKILL.md: invalid YAML",
        "huge/SKILL.md: 5242",
        "nofront.md: no YAML frontmatter",
        "bad.md: invalid YAML",
        "huge.md: 5242",
        "agent `fine` in",
    ] {
        assert!(err.contains(needle), "{needle}: {err}");
    }
    assert!(err.contains("skill `good` in") && err.contains("same name"), "{err}");
    let requests = server.requests();
    let skills = tool(&requests[0], "skill").expect("skill tool")["description"].to_string();
    assert!(skills.contains("- good: A good skill"), "{skills}");
    assert!(!skills.contains("huge") && !skills.contains("broken"), "{skills}");
    let task = tool(&requests[0], "task").expect("task tool")["description"].to_string();
    assert!(task.contains("- fine: A fine agent") && task.contains("- explore:"), "{task}");
    assert!(!task.contains("hugeagent") && !task.contains("- bad:"), "{task}");
}

#[tokio::test]
async fn slash_command_expands_its_arguments_in_print_mode() {
    let env = env();
    write(
        &env.workspace.join(".claude/commands/greet.md"),
        "---\ndescription: Greet someone\nargument-hint: <name>\n---\nSay hello to $ARGUMENTS, politely.\n",
    );
    let server = scripted(json!([{"text": "Hello Bob!"}])).await;
    let out = run(&env, &server, &["-p", "/greet Bob"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    let first = &requests[0].body["messages"][0];
    assert_eq!(first["role"], "user");
    let text = first["content"].to_string();
    assert!(text.contains("Say hello to Bob, politely."), "{text}");
    assert!(!text.contains("/greet"), "{text}");
}

#[tokio::test]
async fn an_unknown_command_is_refused_in_print_mode_as_in_the_ui_and_a_path_is_a_prompt() {
    let env = env();
    let server = scripted(json!([{"text": "It is slow because of the disk."}])).await;
    let out = run(&env, &server, &["-p", "/nosuch thing"]).await;
    assert_eq!(out.status.code(), Some(2), "a usage error: {}", stderr(&out));
    assert!(stderr(&out).contains("unknown command /nosuch"), "{}", stderr(&out));
    assert!(server.requests().is_empty(), "an unknown command is never sent to the model");
    let out = run(&env, &server, &["-p", "/usr/bin/foo is slow"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = server.requests()[0].body["messages"].to_string();
    assert!(text.contains("/usr/bin/foo is slow"), "{text}");
}

#[tokio::test]
async fn explore_sub_agent_gets_a_fresh_read_only_context_and_only_its_answer_returns() {
    let env = env();
    write(&env.workspace.join("src/main.rs"), "fn main() {}\n");
    let server = scripted(json!([
        {"text": "Let me delegate.", "tool_calls": [task_call("call_t", "explore", "Find where main is defined")],
         "usage": {"input_tokens": 100, "output_tokens": 10}},
        {"tool_calls": [{"id": "sub_grep", "name": "grep", "arguments": {"pattern": "fn main"}}],
         "usage": {"input_tokens": 1000, "output_tokens": 20}},
        {"text": "main is defined in src/main.rs:1", "usage": {"input_tokens": 2000, "output_tokens": 30}},
        {"text": "It is in src/main.rs.", "usage": {"input_tokens": 300, "output_tokens": 5}}
    ]))
    .await;
    let out =
        run(&env, &server, &["-p", "PARENT-PROMPT where is main?", "--output-format", "stream-json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    assert_eq!(requests.len(), 4);

    let sub = &requests[1];
    let messages = sub.body["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 1, "only the prompt: {messages:?}");
    assert!(messages[0]["content"].to_string().contains("Find where main is defined"));
    assert!(!sub.body.to_string().contains("PARENT-PROMPT"), "none of the parent's messages");
    assert!(sub.body["system"][0]["text"].as_str().expect("system").contains("search agent"));
    let names = tool_names(sub);
    for write_tool in ["write_file", "edit_file", "shell", "task"] {
        assert!(!names.iter().any(|n| n == write_tool), "{write_tool} offered: {names:?}");
    }
    assert!(names.iter().any(|n| n == "grep") && names.iter().any(|n| n == "read_file"), "{names:?}");
    assert_eq!(tool_results(&requests[2])[0].0, "sub_grep");

    let last = &requests[3];
    let results = tool_results(last);
    assert_eq!(results, vec![("call_t".to_string(), "main is defined in src/main.rs:1".to_string())]);
    assert!(!last.body.to_string().contains("sub_grep"), "the sub-agent's calls stay in its ledger");

    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("json line"))
        .collect();
    let nested = lines
        .iter()
        .find(|l| l["type"] == "tool_call" && l["name"] == "grep")
        .expect("the sub-agent's call is shown");
    assert_eq!(nested["parent_tool_use_id"], "call_t");
    assert_eq!(nested["subagent_type"], "explore");
    let result = lines.last().expect("result");
    assert_eq!(result["usage"]["input_tokens"], 3400, "sub-agent tokens count toward the totals");

    let agent_id = nested["subagent_id"].as_str().expect("id");
    let sessions = env.home.join("sessions");
    let transcript = walk(&sessions).into_iter().find(|p| p.ends_with(format!("subagents/{agent_id}.jsonl")));
    let transcript = std::fs::read_to_string(transcript.expect("transcript saved")).expect("read");
    assert!(transcript.contains("sub_grep") && transcript.contains("main is defined"), "{transcript}");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[tokio::test]
async fn custom_agent_gets_exactly_its_tools_and_its_body_as_system_prompt() {
    let env = env();
    write(
        &env.workspace.join(".claude/agents/reviewer.md"),
        "---\nname: reviewer\ndescription: Reviews a change\ntools: Read, Grep\n---\nREVIEWER-PROMPT: review carefully.\n",
    );
    let server = scripted(json!([
        {"tool_calls": [task_call("call_r", "reviewer", "Review src/")]},
        {"tool_calls": [{"id": "w1", "name": "write_file", "arguments": {"path": "review.txt", "content": "x"}}]},
        {"text": "Looks good."},
        {"text": "Reviewed."}
    ]))
    .await;
    let out = run(&env, &server, &["-p", "review", "--yolo"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let task = tool(&requests[0], "task").expect("task tool")["description"].to_string();
    assert!(task.contains("- reviewer: Reviews a change"), "{task}");
    assert_eq!(tool_names(&requests[1]), ["read_file", "grep"]);
    let system = requests[1].body["system"][0]["text"].as_str().expect("system");
    assert_eq!(system, "REVIEWER-PROMPT: review carefully.");
    // Even with --yolo, a tool outside its list does not run for it.
    let refused = tool_results(&requests[2]);
    assert_eq!(refused.len(), 1);
    assert!(refused[0].1.contains("unknown tool `write_file`"), "{}", refused[0].1);
    assert!(!env.workspace.join("review.txt").exists());
    assert_eq!(tool_results(&requests[3]), vec![("call_r".to_string(), "Looks good.".to_string())]);
}

#[tokio::test]
async fn a_commands_allowed_tools_are_the_only_tools_of_its_turn() {
    let env = env();
    write(
        &env.workspace.join(".lathe/commands/audit.md"),
        "---\ndescription: Audit code\nallowed-tools: Read, Grep\n---\nAudit $ARGUMENTS. State: !`touch bang.txt`\n",
    );
    let server = scripted(json!([
        {"tool_calls": [{"id": "w1", "name": "write_file", "arguments": {"path": "out.txt", "content": "x"}}]},
        {"text": "Audited."}
    ]))
    .await;
    let out = run(&env, &server, &["-p", "/audit src", "--yolo"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(tool_names(&requests[0]), ["read_file", "grep"]);
    let prompt = requests[0].body["messages"][0]["content"].to_string();
    assert!(
        prompt.contains("Audit src. State: [!`touch bang.txt` not run: allowed-tools leave out Bash]"),
        "{prompt}"
    );
    assert!(!env.workspace.join("bang.txt").exists());
    let refused = tool_results(&requests[1]);
    assert!(refused[0].1.contains("unknown tool `write_file`"), "{}", refused[0].1);
    assert!(!env.workspace.join("out.txt").exists());
    assert!(stderr(&out).contains("allowed-tools leave out Bash"), "{}", stderr(&out));
}

#[tokio::test]
async fn parallel_task_calls_run_concurrently() {
    let env = env();
    let slow = json!({"text": "report", "first_byte_delay_ms": 400});
    let server = scripted(json!([
        {"tool_calls": [task_call("t1", "explore", "one"), task_call("t2", "explore", "two"),
                        task_call("t3", "plan", "three")]},
        slow, slow, slow,
        {"text": "All done."}
    ]))
    .await;
    let out = run(&env, &server, &["-p", "split it"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    let subs = &requests[1..4];
    let last_start = subs.iter().map(|r| r.received_ms).fold(f64::MIN, f64::max);
    let first_end = subs.iter().filter_map(|r| r.response_end_ms).fold(f64::MAX, f64::min);
    assert!(last_start < first_end, "all three were in flight at once: {last_start} vs {first_end}");
    let results = tool_results(&requests[4]);
    let ids: Vec<&str> = results.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["t1", "t2", "t3"]);
    assert!(results.iter().all(|(_, text)| text == "report"), "{results:?}");
}

#[tokio::test]
async fn sub_agent_at_its_turn_limit_returns_a_clear_partial_result() {
    let env = env();
    let server = scripted(json!([
        {"tool_calls": [task_call("call_t", "explore", "Survey everything")]},
        {"text": "Looking at the root.", "tool_calls": [{"id": "g1", "name": "glob", "arguments": {"pattern": "*"}}]},
        {"text": "Still looking.", "tool_calls": [{"id": "g2", "name": "glob", "arguments": {"pattern": "**"}}]},
        {"text": "Partial is fine."}
    ]))
    .await;
    let out = run(&env, &server, &["-p", "survey", "--max-turns", "2"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let results = tool_results(&requests[3]);
    assert_eq!(results.len(), 1);
    let text = &results[0].1;
    assert!(text.starts_with("[partial result: the explore sub-agent"), "{text}");
    assert!(text.contains("limit of 2 turns") && text.contains("2 tool calls"), "{text}");
    assert!(text.contains("Looking at the root.") && text.contains("Still looking."), "{text}");
}

#[tokio::test]
async fn a_sub_agent_is_held_to_the_parents_permission_rules() {
    let env = env();
    write(&env.workspace.join("keep.txt"), "precious\n");
    write(&env.workspace.join(".lathe/settings.json"), r#"{"permissions": {"deny": ["Bash(rm *)"]}}"#);
    let server = scripted(json!([
        {"tool_calls": [task_call("call_g", "general", "Clean up")]},
        {"tool_calls": [{"id": "rm1", "name": "shell", "arguments": {"command": "rm keep.txt"}}]},
        {"text": "Could not delete it."},
        {"text": "Done."}
    ]))
    .await;
    let out = run(&env, &server, &["-p", "clean up", "--yolo"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    assert!(tool_names(&requests[1]).contains(&"shell".to_string()));
    let refused = tool_results(&requests[2]);
    assert_eq!(refused.len(), 1);
    assert!(refused[0].1.contains("Bash(rm *)"), "{}", refused[0].1);
    assert_eq!(std::fs::read_to_string(env.workspace.join("keep.txt")).expect("kept"), "precious\n");
}

#[tokio::test]
async fn a_skill_the_model_loads_holds_it_to_the_skills_allowed_tools() {
    let env = env();
    write(
        &env.workspace.join(".claude/skills/inspect/SKILL.md"),
        "---\nname: inspect\ndescription: Inspects code without changing it\nallowed-tools: Read, Grep\n---\nLook only.\n",
    );
    write(&env.workspace.join("src/lib.rs"), "pub fn add() {}\n");
    let server = scripted(json!([
        {"tool_calls": [{"id": "s1", "name": "skill", "arguments": {"name": "inspect"}}]},
        {"tool_calls": [
            {"id": "r1", "name": "read_file", "arguments": {"path": "src/lib.rs"}},
            {"id": "w1", "name": "write_file", "arguments": {"path": "out.txt", "content": "x"}}
        ]},
        {"text": "Inspected."}
    ]))
    .await;
    let out = run(&env, &server, &["-p", "inspect the code", "--yolo"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(tool_names(&requests[0]), tool_names(&requests[2]), "the tool list stays the same");
    let loaded = tool_results(&requests[1]);
    assert!(loaded[0].1.contains("only these tools run: Read, Grep"), "{}", loaded[0].1);
    let results = tool_results(&requests[2]);
    let read = results.iter().find(|(id, _)| id == "r1").expect("read result");
    assert!(read.1.contains("pub fn add() {}"), "{}", read.1);
    let write = results.iter().find(|(id, _)| id == "w1").expect("write result");
    assert!(write.1.contains("write_file is not in the allowed-tools of the skill `inspect`"), "{}", write.1);
    assert!(!env.workspace.join("out.txt").exists());
}
