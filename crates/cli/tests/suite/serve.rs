//! `lathe serve` end to end: the real binary on loopback against `lathe-mock`, its web UI driven
//! in Debian's headless chromium by playwright-core (crates/cli/tests/serve/browser.mjs, both
//! installed by scripts/install-test-deps.sh). The shared start-up (`Served`) is used by the
//! attack and load tests too.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

use super::support::{self, Env};

/// A running `lathe serve`.
pub struct Served {
    pub child: Child,
    /// `http://127.0.0.1:PORT`
    pub base: String,
    pub port: u16,
    pub steer: String,
    pub watch: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Served {
    /// Ends the server with SIGTERM as a user's Ctrl+C would; its exit code.
    pub fn stop(&mut self) -> Option<i32> {
        let pid = self.child.id() as libc::pid_t;
        // SAFETY: a signal to our own child process.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        self.child.wait().ok().and_then(|status| status.code())
    }
}

/// `lathe serve --listen 127.0.0.1:0 <extra>` in the test's workspace against the mock at `url`;
/// waits for its URLs on stdout. `envs` are added to its environment.
pub fn serve(env: &Env, url: &str, extra: &[&str], envs: &[(&str, &Path)]) -> Served {
    let mut args = vec!["--sandbox", "off", "serve"];
    if !extra.contains(&"--listen") {
        args.extend_from_slice(&["--listen", "127.0.0.1:0"]);
    }
    args.extend_from_slice(extra);
    let mut command = support::lathe(env, url, &args);
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    for (key, value) in envs {
        command.env(key, value);
    }
    let mut child = command.spawn().expect("lathe serve");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    let first = lines.next().and_then(Result::ok).unwrap_or_default();
    let second = lines.next().and_then(Result::ok).unwrap_or_default();
    let (base, steer) = first.split_once("/#token=").unwrap_or_else(|| panic!("no URL on stdout: {first:?}"));
    let watch = second.split_once("/#token=").map(|(_, token)| token.to_string()).expect("watch URL");
    let port = base.rsplit(':').next().and_then(|port| port.parse().ok()).expect("port");
    Served { child, base: base.to_string(), port, steer: steer.to_string(), watch }
}

/// `.test-deps` says the browser dependencies must be there (CI sets `LATHE_TEST_DEPS`).
pub fn browser_ready() -> bool {
    let prefix = support::npm_prefix();
    let installed = prefix.join("node_modules/playwright-core/package.json").is_file()
        && Path::new("/usr/bin/chromium").is_file();
    if !installed && std::env::var_os("LATHE_TEST_DEPS").is_none() {
        eprintln!(
            "skipped: chromium or playwright-core missing and LATHE_TEST_DEPS unset (run scripts/install-test-deps.sh)"
        );
        return false;
    }
    assert!(installed, "chromium or playwright-core is not installed: run scripts/install-test-deps.sh");
    true
}

/// Where the screenshots go: target/serve-screenshots/<test>.
fn shots_dir(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/serve-screenshots").join(test);
    std::fs::create_dir_all(&dir).expect("screenshot dir");
    dir
}

/// Every session file under the test's Lathe home, one after another.
fn ledgers(env: &Env) -> String {
    let files = support::session_files(&env.home).into_iter();
    files.map(|path| std::fs::read_to_string(path).expect("ledger")).collect()
}

/// The text of the last user message of a request (Anthropic shape).
pub fn last_user_text(body: &Value) -> String {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let Some(last) = messages.iter().rev().find(|m| m["role"] == "user") else { return String::new() };
    match &last["content"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => {
            blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n")
        }
        _ => String::new(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_web_ui_streams_asks_steers_reloads_and_replays_what_a_closed_tab_missed() {
    if !browser_ready() {
        return;
    }
    let env = support::env();
    let mock = support::scripted(json!([
        {"text": "Writing the **notes**.", "text_chunks": 3,
         "tool_calls": [{"id": "w1", "name": "write_file", "arguments": {"path": "notes.txt", "content": "hello from the web\n"}}]},
        {"text": "Wrote notes.txt. I will now describe it at some length, word by word.", "text_chunks": 30, "chunk_delay_ms": 120},
        {"text": "Noted: a README comes next."},
        {"text": "Listing.", "tool_calls": [{"id": "l1", "name": "list_dir", "arguments": {"path": "."}}]},
        {"text": "notes.txt is the only file."},
    ]))
    .await;
    let mut served = serve(&env, &mock.url(), &[], &[]);
    let shots = shots_dir("web-ui");
    let mut command = Command::new("node");
    command
        .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/serve/browser.mjs"))
        .env("SERVE_URL", format!("{}/#token={}", served.base, served.steer))
        .env("NPM_PREFIX", support::npm_prefix())
        .env("SHOTS", &shots)
        .env("LATHE_HOME", &env.home)
        .env("MOCK_URL", mock.url())
        .stdin(Stdio::null());
    let output = support::output(command).await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "browser.mjs failed: {}\n{stdout}", support::stderr(&output));
    let out: Value =
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"));
    eprintln!("screenshots: {}", shots.display());

    assert_eq!(out["role"], "steer");
    // The permission card showed the write's diff; Allow ran it: the file is there.
    assert!(out["permissionText"].as_str().unwrap_or_default().contains("Write notes.txt"), "{out}");
    assert!(out["diffBeforeAllow"].as_str().unwrap_or_default().contains("+ hello from the web"), "{out}");
    assert_eq!(
        std::fs::read_to_string(env.workspace.join("notes.txt")).expect("notes.txt"),
        "hello from the web\n"
    );
    assert!(out["diffAfter"].as_str().unwrap_or_default().contains("+ hello from the web"), "{out}");
    assert_eq!(out["toolStatus"], "completed");
    // The answer is in the ledger with the client that gave it.
    let ledger = ledgers(&env);
    assert!(ledger.contains("answered the permission prompt ask-1: allow_once"), "{ledger}");
    // Streamed Markdown and the status line.
    assert_eq!(out["strong"], "notes");
    let first = out["first"].as_str().expect("transcript");
    assert!(
        first.contains("Wrote notes.txt. I will now describe it at some length, word by word."),
        "{first}"
    );
    assert!(out["model"].as_str().is_some_and(|model| !model.is_empty() && model != "–"), "{out}");
    assert!(out["tokens"].as_str().unwrap_or_default().contains(" in, "), "{out}");
    assert!(out["cost"].as_str().unwrap_or_default().starts_with('$'), "{out}");
    // The message typed while the second answer streamed went with the next request.
    assert_eq!(out["streamingWhenSteered"], true);
    let requests = mock.requests();
    assert!(!last_user_text(&requests[1].body).contains("also add a README"));
    assert_eq!(last_user_text(&requests[2].body), "also add a README");
    // Reload: the same transcript; a reopened tab: what the other tab saw meanwhile.
    assert_eq!(out["reloaded"], out["first"]);
    let second = out["second"].as_str().expect("second tab");
    assert!(
        second.starts_with(first.trim_end()) && second.contains("notes.txt is the only file."),
        "{second}"
    );
    assert_eq!(out["reopened"], out["second"]);
    assert_eq!(last_user_text(&requests[3].body), "list the files");
    // Another origin got nothing and changed nothing.
    assert_ne!(out["evil"]["fetch"], 200, "{out}");
    assert_ne!(out["evil"]["ws"], "open", "{out}");
    assert_eq!(out["evilChanged"], json!({"ledger": false, "requests": 0}), "{out}");
    assert_eq!(mock.requests().len(), 5);
    for shot in out["screenshots"].as_array().expect("screenshots") {
        assert!(Path::new(shot.as_str().expect("path")).is_file(), "{shot}");
    }
    assert_eq!(served.stop(), Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_of_an_earlier_server_is_resumed_from_the_ledger_by_a_steering_client_only() {
    use super::serve_client::Rpc;
    let env = support::env();
    let mock = support::scripted(json!([{"text": "First answer."}, {"text": "Second answer."}])).await;
    let workspace = env.workspace.display().to_string();
    let init = json!({"protocolVersion": 1, "clientCapabilities": {}});
    let mut first = serve(&env, &mock.url(), &[], &[]);
    let mut client = Rpc::connect(first.port, &first.steer).await;
    client.call("initialize", init.clone()).await;
    let new = client.call("session/new", json!({"cwd": workspace, "mcpServers": []})).await;
    let session = new["result"]["sessionId"].as_str().expect("session").to_string();
    let prompt = json!({"sessionId": session, "prompt": [{"type": "text", "text": "hello"}]});
    assert_eq!(client.call("session/prompt", prompt).await["result"]["stopReason"], "end_turn");
    drop(client);
    assert_eq!(first.stop(), Some(0));

    let second = serve(&env, &mock.url(), &[], &[]);
    let load = json!({"sessionId": session, "cwd": workspace, "mcpServers": []});
    let mut watcher = Rpc::connect(second.port, &second.watch).await;
    watcher.call("initialize", init.clone()).await;
    let listed = watcher.call("_lathe/sessions", json!({})).await;
    assert_eq!(listed["result"]["sessions"][0]["id"], session.as_str(), "{listed}");
    assert_eq!(listed["result"]["sessions"][0]["open"], false);
    let refused = watcher.call("session/load", load.clone()).await;
    assert_eq!(refused["error"]["code"], -32001, "a watcher cannot resume: {refused}");

    let mut steer = Rpc::connect(second.port, &second.steer).await;
    steer.call("initialize", init).await;
    let loaded = steer.call("session/load", load).await;
    assert!(loaded["result"]["_meta"]["lathe"]["seq"].as_u64().is_some_and(|seq| seq >= 2), "{loaded}");
    let replayed: Vec<&Value> = steer.seen.iter().map(|m| &m["params"]["update"]).collect();
    let text = |kind: &str| -> String {
        replayed
            .iter()
            .filter(|u| u["sessionUpdate"] == kind)
            .filter_map(|u| u["content"]["text"].as_str())
            .collect()
    };
    assert_eq!(text("user_message_chunk"), "hello");
    assert_eq!(text("agent_message_chunk"), "First answer.");
    let prompt = json!({"sessionId": session, "prompt": [{"type": "text", "text": "again"}]});
    assert_eq!(steer.call("session/prompt", prompt).await["result"]["stopReason"], "end_turn");
    let messages = mock.requests()[1].body["messages"].as_array().cloned().unwrap_or_default();
    assert_eq!(messages.len(), 3, "the resumed conversation went with the next request");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_sent_mid_turn_joins_the_turns_next_request_and_is_answered_with_it() {
    use super::serve_client::Rpc;
    let env = support::env();
    std::fs::write(env.workspace.join("notes.txt"), "one line\n").expect("notes.txt");
    let mock = support::scripted(json!([
        {"text": "Reading the notes first.", "text_chunks": 10, "chunk_delay_ms": 100,
         "tool_calls": [{"id": "r1", "name": "read_file", "arguments": {"path": "notes.txt"}}]},
        {"text": "Read it, and I will keep it short."},
    ]))
    .await;
    let mut served = serve(&env, &mock.url(), &[], &[]);
    let mut client = Rpc::connect(served.port, &served.steer).await;
    client.call("initialize", json!({"protocolVersion": 1, "clientCapabilities": {}})).await;
    let workspace = env.workspace.display().to_string();
    let new = client.call("session/new", json!({"cwd": workspace, "mcpServers": []})).await;
    let session = new["result"]["sessionId"].as_str().expect("session").to_string();
    let prompt = |id: u64, text: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt",
               "params": {"sessionId": session, "prompt": [{"type": "text", "text": text}]}})
    };
    client.send(prompt(101, "summarise notes.txt")).await;
    // The first answer is streaming: the turn runs.
    client.until(|m| m["params"]["update"]["sessionUpdate"] == "agent_message_chunk").await;
    client.send(prompt(102, "keep it short")).await;
    let first = client.until(|m| m["id"] == 101 || m["id"] == 102).await;
    let second = client.until(|m| m["id"] == 101 || m["id"] == 102).await;
    assert_eq!(first["result"]["stopReason"], "end_turn", "{first}");
    assert_eq!(second["result"]["stopReason"], "end_turn", "{second}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "one turn: the steering message did not start another");
    assert!(!last_user_text(&requests[0].body).contains("keep it short"));
    assert!(last_user_text(&requests[1].body).ends_with("keep it short"), "{}", requests[1].body);
    // The ledger says which client typed it, just before it.
    let ledger = ledgers(&env);
    let note = ledger.rfind("the next user message is from serve client c1").expect("note");
    let steered = ledger.rfind("keep it short").expect("message");
    let result = ledger.find("\"tool_result\"").expect("the read's result");
    assert!(result < note && note < steered, "after the read's result, the note, then the message: {ledger}");
    assert_eq!(served.stop(), Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_that_is_slow_to_start_does_not_hold_up_other_requests() {
    use super::serve_client::Rpc;
    let env = support::env();
    let mock = support::scripted(json!([{"text": "Hello."}])).await;
    let mut served = serve(&env, &mock.url(), &[], &[]);
    let mut client = Rpc::connect(served.port, &served.steer).await;
    client.call("initialize", json!({"protocolVersion": 1, "clientCapabilities": {}})).await;
    let workspace = env.workspace.display().to_string();
    // An MCP server that never answers: the session's start waits for it (until it exits).
    let slow = json!([{"name": "slow", "command": "/bin/sleep", "args": ["3"], "env": []}]);
    client
        .send(json!({"jsonrpc": "2.0", "id": 201, "method": "session/new",
                     "params": {"cwd": workspace, "mcpServers": slow}}))
        .await;
    client.send(json!({"jsonrpc": "2.0", "id": 202, "method": "_lathe/sessions", "params": {}})).await;
    let first = client.until(|m| m["id"] == 201 || m["id"] == 202).await;
    assert_eq!(first["id"], 202, "the listing is answered while the session starts: {first}");
    let second = client.until(|m| m["id"] == 201).await;
    assert!(second["result"]["sessionId"].is_string() || second["error"].is_object(), "{second}");
    assert_eq!(served.stop(), Some(0));
}
