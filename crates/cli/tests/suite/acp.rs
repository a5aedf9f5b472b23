//! `lathe acp` driven by the official ACP TypeScript client (`@agentclientprotocol/sdk`, installed
//! by scripts/install-test-deps.sh) against `lathe-mock`: crates/cli/tests/acp/client.mjs runs the
//! protocol and prints what it saw; these tests check that, the files on disk, the processes and
//! the requests the model server received.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use super::support::{self, Env};

/// Runs client.mjs against `lathe acp` pointed at `url`; returns its JSON output.
async fn drive(env: &Env, url: &str, offer_fs: bool, mcp_servers: Value) -> Value {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/acp/client.mjs");
    let prefix = support::npm_prefix();
    assert!(
        prefix.join("node_modules/@agentclientprotocol/sdk/package.json").is_file(),
        "the ACP client is not installed at {}: run scripts/install-test-deps.sh",
        prefix.display()
    );
    // Unconfined: the pid the command writes is then the one this test can look for.
    let args = json!(["--provider", "anthropic", "--base-url", url, "--sandbox", "off"]).to_string();
    let mut command = Command::new("node");
    command
        .arg(script)
        .env("LATHE_BIN", env!("CARGO_BIN_EXE_lathe"))
        .env("LATHE_ARGS", args)
        .env("WORKSPACE", &env.workspace)
        .env("ACP_SDK_PREFIX", &prefix)
        .env("ACP_FS", if offer_fs { "1" } else { "0" })
        .env("PIXEL_PNG_HEX", hex::encode(super::harness::PIXEL_PNG))
        .env("ACP_MCP_SERVERS", mcp_servers.to_string())
        .env("LATHE_HOME", &env.home)
        .env("HOME", &env.root)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("LATHE_PROVIDER")
        .env_remove("LATHE_PERMISSION_MODE")
        .stdin(Stdio::null());
    let output = support::output(command).await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "client.mjs failed: {}\n{stdout}", support::stderr(&output));
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

/// The updates of one phase of the first connection, as `sessionUpdate` kinds and values.
fn phase<'a>(out: &'a Value, name: &str) -> Vec<&'a Value> {
    out["first"]["updates"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|entry| entry["phase"] == name)
        .map(|entry| &entry["update"])
        .collect()
}

fn kinds(updates: &[&Value]) -> Vec<String> {
    let mut kinds: Vec<String> =
        updates.iter().filter_map(|u| u["sessionUpdate"].as_str().map(str::to_string)).collect();
    kinds.dedup();
    kinds
}

fn text_of(updates: &[&Value], kind: &str) -> String {
    updates
        .iter()
        .filter(|u| u["sessionUpdate"] == kind)
        .filter_map(|u| u["content"]["text"].as_str())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sdk_client_prompts_answers_a_permission_cancels_and_loads() {
    let env = support::env();
    let server = support::scripted(json!([
        {"text": "Writing the notes.", "text_chunks": 3,
         "tool_calls": [{"id": "w1", "name": "write_file", "arguments": {"path": "notes.txt", "content": "hello from acp\n"}}]},
        {"thinking": {"text": "Now track the work.", "signature": "sig"},
         "tool_calls": [{"id": "t1", "name": "todo_write", "arguments": {"items": [
            {"content": "write the notes", "status": "completed"}, {"content": "report", "status": "in_progress"}]}}]},
        {"text": "Wrote notes.txt."},
        {"tool_calls": [{"id": "s1", "name": "shell", "arguments": {"command": "echo $$ > sleeper.pid; exec sleep 300"}}]},
    ]))
    .await;
    let commands = env.workspace.join(".lathe/commands");
    std::fs::create_dir_all(&commands).expect("commands dir");
    std::fs::write(
        commands.join("greet.md"),
        "---\ndescription: Say hello\nargument-hint: NAME\n---\nGreet $ARGUMENTS\n",
    )
    .expect("command file");
    let out = drive(&env, &server.url(), false, json!([])).await;
    let first = &out["first"];

    // initialize: protocol 1, load session, images, embedded context, MCP over HTTP.
    let init = &first["initialize"];
    assert_eq!(init["protocolVersion"], 1, "{init}");
    assert_eq!(init["agentCapabilities"]["loadSession"], true);
    assert_eq!(init["agentCapabilities"]["promptCapabilities"]["image"], true);
    assert_eq!(init["agentCapabilities"]["promptCapabilities"]["embeddedContext"], true);
    assert_eq!(init["agentCapabilities"]["mcpCapabilities"]["http"], true);
    assert_eq!(init["agentInfo"]["name"], "lathe");
    // session/new: Lathe's session id, its permission modes.
    let session_id = first["newSession"]["sessionId"].as_str().expect("session id").to_string();
    assert_eq!(first["newSession"]["modes"]["currentModeId"], "default");

    // The workspace's command file is an available command.
    let announced = first["updates"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|entry| entry["update"]["sessionUpdate"] == "available_commands_update")
        .expect("available commands");
    assert_eq!(
        announced["update"]["availableCommands"],
        json!([{"name": "greet", "description": "Say hello", "input": {"hint": "NAME"}}])
    );

    // Prompt 1: chunks, the write's tool call, its permission (allowed), its diff, the plan.
    assert_eq!(first["prompt1"]["stopReason"], "end_turn", "{}", first["prompt1"]);
    assert_eq!(first["prompt1"]["_meta"]["lathe"]["stats"]["turns"], 3);
    let updates = phase(&out, "prompt1");
    assert_eq!(text_of(&updates, "agent_message_chunk"), "Writing the notes.Wrote notes.txt.");
    assert_eq!(text_of(&updates, "agent_thought_chunk"), "Now track the work.");
    let call =
        updates.iter().find(|u| u["sessionUpdate"] == "tool_call" && u["toolCallId"] == "w1").expect("call");
    assert_eq!(call["kind"], "edit");
    assert_eq!(call["title"], "Write notes.txt");
    assert_eq!(call["status"], "in_progress");
    let notes = env.workspace.join("notes.txt");
    assert_eq!(call["locations"], json!([{"path": notes.display().to_string()}]));
    let permissions = first["permissions"].as_array().expect("permissions");
    assert_eq!(permissions.len(), 1, "one permission request: {permissions:?}");
    let asked = &permissions[0]["request"];
    assert_eq!(asked["toolCall"]["toolCallId"], "w1");
    let options: Vec<&str> =
        asked["options"].as_array().into_iter().flatten().filter_map(|o| o["kind"].as_str()).collect();
    assert!(options.contains(&"allow_once") && options.contains(&"reject_once"), "{options:?}");
    assert_eq!(asked["toolCall"]["content"][0]["type"], "diff");
    assert_eq!(asked["toolCall"]["content"][0]["newText"], "hello from acp\n");
    let done = updates
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call_update" && u["toolCallId"] == "w1")
        .expect("the write's update");
    assert_eq!(done["status"], "completed");
    assert_eq!(done["content"][0]["type"], "diff", "{done}");
    assert_eq!(done["content"][0]["path"], notes.display().to_string());
    assert_eq!(done["content"][0]["newText"], "hello from acp\n");
    assert_eq!(std::fs::read_to_string(&notes).expect("notes.txt"), "hello from acp\n");
    let plan = updates.iter().find(|u| u["sessionUpdate"] == "plan").expect("plan");
    assert_eq!(
        plan["entries"][1],
        json!({"content": "report", "priority": "medium", "status": "in_progress"})
    );

    // set_mode bypass: the mode update, and prompt 2's command runs without asking.
    assert!(
        kinds(&phase(&out, "mode")).contains(&"current_mode_update".to_string())
            || kinds(&phase(&out, "prompt2")).contains(&"current_mode_update".to_string())
    );
    assert_eq!(first["prompt2"]["stopReason"], "cancelled", "{}", first["prompt2"]);
    let updates = phase(&out, "prompt2");
    let shell = updates
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call" && u["toolCallId"] == "s1")
        .expect("shell call");
    assert_eq!(shell["kind"], "execute");
    let ended = updates
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call_update" && u["toolCallId"] == "s1")
        .expect("the command's end");
    assert_eq!(ended["status"], "failed");
    assert_eq!(ended["_meta"]["lathe"]["status"], "interrupted");
    let pid = std::fs::read_to_string(env.workspace.join("sleeper.pid")).expect("pid");
    assert!(support::process_gone(pid.trim()), "the cancelled command's process {pid} is gone");
    assert_eq!(permissions.len(), 1, "bypass asked nothing more");
    assert_eq!(first["exit"]["code"], 0);

    // session/load in a new process: the conversation replayed before the answer.
    let second = &out["second"];
    assert_eq!(second["load"]["modes"]["currentModeId"], "default", "{}", second["load"]);
    let replayed: Vec<&Value> = second["replayed"].as_array().into_iter().flatten().collect();
    assert!(replayed.iter().all(|n| n["sessionId"] == session_id.as_str()));
    let replayed: Vec<&Value> = replayed.iter().map(|n| &n["update"]).collect();
    let said = text_of(&replayed, "user_message_chunk");
    assert!(said.starts_with("write the notes file") && said.ends_with("run the long command"), "{said}");
    assert!(
        replayed
            .iter()
            .any(|u| u["sessionUpdate"] == "user_message_chunk" && u["content"]["type"] == "image")
    );
    assert_eq!(text_of(&replayed, "agent_message_chunk"), "Writing the notes.Wrote notes.txt.");
    let calls: Vec<&str> = replayed
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call")
        .filter_map(|u| u["toolCallId"].as_str())
        .collect();
    assert_eq!(calls, ["w1", "t1", "s1"]);
    assert!(replayed.iter().any(|u| u["sessionUpdate"] == "plan"));
    assert_eq!(second["exit"]["code"], 0);
    // The model server saw three requests for prompt 1 and one for prompt 2, nothing more; the
    // first prompt's image and embedded resource reached the model.
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let first_request = requests[0].body.to_string();
    assert!(first_request.contains("image/png"), "{first_request}");
    assert!(
        first_request.contains("<context ref=\\\"file:///spec.md\\\">\\nthe spec says hello"),
        "{first_request}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_client_s_fs_reads_and_edits_go_through_the_editor() {
    let env = support::env();
    std::fs::write(env.workspace.join("seed.txt"), "disk text\n").expect("seed");
    let server = support::scripted(json!([
        {"tool_calls": [{"id": "r1", "name": "read_file", "arguments": {"path": "seed.txt"}}]},
        {"tool_calls": [{"id": "w1", "name": "write_file", "arguments": {"path": "notes.txt", "content": "via the editor\n"}}]},
        {"text": "Done."},
    ]))
    .await;
    // The client's MCP server (stdio) joins the session's tools.
    let everything = json!([{"name": "everything", "command": support::npm_bin("mcp-server-everything"),
                             "args": ["stdio"], "env": []}]);
    let out = drive(&env, &server.url(), true, everything).await;
    let first = &out["first"];
    assert_eq!(first["prompt1"]["stopReason"], "end_turn", "{}", first["prompt1"]);
    let seed = env.workspace.join("seed.txt").display().to_string();
    let notes = env.workspace.join("notes.txt");
    assert_eq!(
        first["fsCalls"],
        json!([
            {"method": "read", "params": {"sessionId": first["newSession"]["sessionId"], "path": seed}},
            {"method": "write", "params": {"sessionId": first["newSession"]["sessionId"],
                                           "path": notes.display().to_string(), "content": "via the editor\n"}},
        ])
    );
    assert!(!notes.exists(), "the write went to the client, not to the disk");
    // The model read the editor's buffer, not the disk.
    let requests = server.requests();
    let offered = support::offered_tools(&requests[0].body);
    assert!(offered.iter().any(|tool| tool == "mcp__everything__echo"), "{offered:?}");
    let second = requests.get(1).map(|request| request.body.to_string()).unwrap_or_default();
    assert!(second.contains("client buffer of"), "{second}");
    assert!(!second.contains("disk text"), "{second}");
}

/// `lathe acp` spoken to line by line, without the SDK: requests out, every message in.
struct Wire {
    child: std::process::Child,
    lines: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
    stdin: std::process::ChildStdin,
}

impl Wire {
    fn start(env: &Env, url: &str) -> Wire {
        let mut child = Command::new(env!("CARGO_BIN_EXE_lathe"))
            .args(["--provider", "anthropic", "--base-url", url, "--sandbox", "off", "acp"])
            .env("LATHE_HOME", &env.home)
            .env("HOME", &env.root)
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("LATHE_PROVIDER")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("lathe acp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        Wire { child, lines: std::io::BufRead::lines(std::io::BufReader::new(stdout)), stdin }
    }

    /// Sends request `id` and returns its answer (the notifications before it are dropped).
    fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.answer(id)
    }

    /// Writes one message.
    fn send(&mut self, message: Value) {
        self.raw(format!("{message}\n").as_bytes());
    }

    /// Writes bytes as they are.
    fn raw(&mut self, bytes: &[u8]) {
        use std::io::Write;
        self.stdin.write_all(bytes).expect("write");
        self.stdin.flush().expect("flush");
    }

    /// The next message for which `wanted` holds (the others are dropped).
    fn until(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        loop {
            let line = self.lines.next().expect("a message").expect("read");
            let message: Value =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
            if wanted(&message) {
                return message;
            }
        }
    }

    /// The answer to request `id` (the messages before it are dropped).
    fn answer(&mut self, id: u64) -> Value {
        loop {
            let line = self.lines.next().expect("an answer").expect("read");
            let message: Value =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
            if message["id"] == id {
                return message;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_error_answers_the_prompt_with_an_error_and_the_session_goes_on() {
    let env = support::env();
    let server = support::scripted(json!([
        {"error": {"status": 400, "message": "the request was malformed somehow"}},
        {"text": "Fine now."},
    ]))
    .await;
    let url = server.url();
    let workspace = env.workspace.display().to_string();
    let answers = tokio::task::spawn_blocking(move || {
        let mut wire = Wire::start(&env, &url);
        let mut answers = vec![wire.call(1, "initialize", json!({"protocolVersion": 1}))];
        let session = wire.call(2, "session/new", json!({"cwd": workspace, "mcpServers": []}));
        let id = session["result"]["sessionId"].clone();
        let prompt = |text: &str| json!({"sessionId": id, "prompt": [{"type": "text", "text": text}]});
        answers.push(wire.call(3, "session/prompt", prompt("first")));
        answers.push(wire.call(4, "session/prompt", prompt("second")));
        answers.push(wire.call(5, "session/set_mode", json!({"sessionId": id, "modeId": "sometimes"})));
        answers.push(wire.call(6, "session/prompt", json!({"sessionId": "no-such-session", "prompt": []})));
        drop(wire.stdin);
        answers.push(json!({"exit": wire.child.wait().expect("wait").code()}));
        answers
    })
    .await
    .expect("join");
    assert_eq!(answers[0]["result"]["protocolVersion"], 1);
    let error = &answers[1]["error"];
    assert_eq!(error["code"], -32603, "{}", answers[1]);
    assert!(error.to_string().contains("the request was malformed somehow"), "{error}");
    assert_eq!(answers[2]["result"]["stopReason"], "end_turn", "{}", answers[2]);
    assert_eq!(answers[3]["error"]["code"], -32602, "{}", answers[3]);
    assert!(answers[3]["error"].to_string().contains("unknown permission mode"), "{}", answers[3]);
    assert_eq!(answers[4]["error"]["code"], -32602, "{}", answers[4]);
    assert_eq!(answers[5]["exit"], 0);
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_that_is_not_utf8_is_answered_and_the_connection_goes_on() {
    let env = support::env();
    let server = support::scripted(json!([])).await;
    let url = server.url();
    let answers = tokio::task::spawn_blocking(move || {
        let mut wire = Wire::start(&env, &url);
        let mut answers = vec![wire.call(1, "initialize", json!({"protocolVersion": 1}))];
        wire.raw(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"foo/\xff\xfe\",\"params\":{}}\r\n");
        answers.push(wire.answer(2));
        answers.push(wire.call(3, "initialize", json!({"protocolVersion": 1})));
        drop(wire.stdin);
        answers.push(json!({"exit": wire.child.wait().expect("wait").code()}));
        answers
    })
    .await
    .expect("join");
    assert_eq!(answers[0]["result"]["protocolVersion"], 1);
    assert_eq!(answers[1]["error"]["code"], -32601, "{}", answers[1]);
    assert_eq!(answers[1]["error"]["data"], "foo/\u{fffd}\u{fffd}", "{}", answers[1]);
    assert_eq!(answers[2]["result"]["protocolVersion"], 1, "{}", answers[2]);
    assert_eq!(answers[3]["exit"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_reading_ends_the_connection_as_closing_does() {
    let env = support::env();
    let server = support::scripted(json!([])).await;
    let url = server.url();
    let workspace = env.workspace.clone();
    let exit = tokio::task::spawn_blocking(move || {
        let mut wire = Wire::start(&env, &url);
        wire.call(1, "initialize", json!({"protocolVersion": 1}));
        wire.call(2, "session/new", json!({"cwd": workspace, "mcpServers": []}));
        // The client closes its end of Lathe's stdout, then asks something (its answer meets a
        // broken pipe), then closes stdin.
        let Wire { mut child, lines, stdin } = wire;
        drop(lines);
        let mut wire_in = stdin;
        use std::io::Write;
        let asked =
            json!({"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {"protocolVersion": 1}});
        wire_in.write_all(format!("{asked}\n").as_bytes()).expect("write");
        wire_in.flush().expect("flush");
        drop(wire_in);
        child.wait().expect("wait").code()
    })
    .await
    .expect("join");
    assert_eq!(exit, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_during_a_permission_prompt_leaves_no_stale_answer_behind() {
    let env = support::env();
    let server = support::scripted(json!([
        {"tool_calls": [{"id": "w1", "name": "write_file", "arguments": {"path": "a.txt", "content": "x\n"}}]},
        {"text": "Next."},
    ]))
    .await;
    let url = server.url();
    let workspace = env.workspace.clone();
    let answers = tokio::task::spawn_blocking(move || {
        let mut wire = Wire::start(&env, &url);
        wire.call(1, "initialize", json!({"protocolVersion": 1}));
        let session = wire.call(2, "session/new", json!({"cwd": workspace, "mcpServers": []}));
        let id = session["result"]["sessionId"].clone();
        let prompt = |text: &str| json!({"sessionId": id, "prompt": [{"type": "text", "text": text}]});
        wire.send(
            json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt("write it")}),
        );
        let asked = wire.until(|message| message["method"] == "session/request_permission");
        // As the protocol asks of a client: the cancel, then the pending question answered
        // `cancelled`.
        wire.send(json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": id}}));
        wire.send(
            json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"outcome": {"outcome": "cancelled"}}}),
        );
        let mut answers = vec![wire.answer(3)];
        answers.push(wire.call(4, "session/prompt", prompt("go on")));
        drop(wire.stdin);
        answers.push(json!({"exit": wire.child.wait().expect("wait").code()}));
        answers
    })
    .await
    .expect("join");
    assert_eq!(answers[0]["result"]["stopReason"], "cancelled", "{}", answers[0]);
    assert_eq!(answers[0]["result"]["_meta"]["lathe"]["warnings"], json!([]), "{}", answers[0]);
    assert_eq!(answers[1]["result"]["stopReason"], "end_turn", "{}", answers[1]);
    assert_eq!(answers[1]["result"]["_meta"]["lathe"]["warnings"], json!([]), "{}", answers[1]);
    assert_eq!(answers[2]["exit"], 0);
    // The cancel denied the write; the second prompt was the model's second request.
    assert_eq!(server.requests().len(), 2);
}
