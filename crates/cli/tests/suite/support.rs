//! Shared set-up of the MCP and hook tests: a temp home and workspace, `lathe -p` against
//! `lathe-mock`, and the MCP test servers installed by scripts/install-test-deps.sh.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use lathe_mock::{MockServer, Mode, Script};
use serde_json::{Value, json};

pub struct Env {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
    pub workspace: PathBuf,
}

/// A fresh `LATHE_HOME` (no retries) and workspace; `HOME` points into the temp dir too, so the
/// user's own `~/.claude/settings.json` is never read.
pub fn env() -> Env {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().canonicalize().expect("canonical");
    let home = root.join("lathe-home");
    let workspace = root.join("ws");
    std::fs::create_dir_all(&home).expect("home");
    std::fs::create_dir_all(&workspace).expect("ws");
    std::fs::write(home.join("config.toml"), "[retry]\nmax_retries = 0\n").expect("config");
    Env { _tmp: tmp, root, home, workspace }
}

impl Env {
    /// Adds `text` at the top of `LATHE_HOME/config.toml` (before any table, so top-level keys stay
    /// top-level).
    pub fn config(&self, text: &str) {
        let path = self.home.join("config.toml");
        let old = std::fs::read_to_string(&path).expect("config");
        std::fs::write(&path, format!("{text}\n{old}")).expect("config");
    }

    /// Writes `value` as JSON to `relative` under the root, returning its path.
    pub fn write_json(&self, relative: &str, value: &Value) -> PathBuf {
        let path = self.root.join(relative);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
        std::fs::write(&path, serde_json::to_string_pretty(value).expect("json")).expect("write");
        path
    }
}

/// `lathe <args> -C <workspace>` with the test's home, against the mock at `url` (Anthropic).
pub fn lathe(env: &Env, url: &str, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_lathe"));
    command
        .args(args)
        .args(["--provider", "anthropic", "--base-url", url, "-C"])
        .arg(&env.workspace)
        .env("LATHE_HOME", &env.home)
        .env("HOME", &env.root)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("MCP_TIMEOUT")
        .env_remove("MCP_TOOL_TIMEOUT")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("LATHE_PROVIDER")
        .stdin(Stdio::null());
    command
}

pub async fn output(mut command: Command) -> Output {
    tokio::task::spawn_blocking(move || command.output()).await.expect("join").expect("run lathe")
}

pub async fn scripted(turns: Value) -> MockServer {
    let script = Script::from_json(&json!({ "turns": turns }).to_string()).expect("script");
    MockServer::start(Mode::Scripted(script)).await.expect("mock")
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

pub fn json_lines(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect()
}

/// The `warning` lines of a stream-json run.
pub fn warnings(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| l["type"] == "warning")
        .filter_map(|l| l["message"].as_str().map(str::to_string))
        .collect()
}

/// The `tool_result` lines of a stream-json run.
pub fn tool_results(lines: &[Value]) -> Vec<Value> {
    lines.iter().filter(|l| l["type"] == "tool_result").cloned().collect()
}

/// The tool names offered in a request (Anthropic shape).
pub fn offered_tools(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|t| t.iter().filter_map(|t| t["name"].as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

/// One tool call turn of the mock script.
pub fn call(id: &str, name: &str, arguments: Value) -> Value {
    json!({"tool_calls": [{"id": id, "name": name, "arguments": arguments}]})
}

/// `.test-deps/npm` of the repository, or `$LATHE_TEST_DEPS/npm`.
pub fn npm_prefix() -> PathBuf {
    let base = std::env::var_os("LATHE_TEST_DEPS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.test-deps"));
    base.join("npm")
}

/// An installed MCP test server executable; panics with the fix when it is missing.
pub fn npm_bin(name: &str) -> String {
    let path = npm_prefix().join("node_modules/.bin").join(name);
    assert!(
        path.is_file(),
        "the MCP test server {name} is not installed at {}: run scripts/install-test-deps.sh",
        path.display()
    );
    path.display().to_string()
}

/// The `.mcp.json` entry for server-everything over stdio.
pub fn everything_stdio() -> Value {
    json!({"command": npm_bin("mcp-server-everything"), "args": ["stdio"]})
}

/// The odd fixture server of lathe-mcp's tests (garbage on stdout, a tool with an invalid schema).
pub fn odd_server(garbage: bool) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp/tests/fixtures/odd-server.cjs");
    json!({"command": "node", "args": [script.display().to_string()],
           "env": {"NODE_PATH": npm_prefix().join("node_modules").display().to_string(),
                   "ODD_GARBAGE": if garbage { "1" } else { "0" }}})
}

/// The text of every tool result in a request (Anthropic shape), joined.
pub fn tool_result_text(body: &Value) -> String {
    let mut out = String::new();
    for message in body["messages"].as_array().into_iter().flatten() {
        for block in message["content"].as_array().into_iter().flatten() {
            if block["type"] == "tool_result" {
                out.push_str(&block["content"].to_string());
                out.push('\n');
            }
        }
    }
    out
}

/// Whether process `pid` is gone (or a zombie).
pub fn process_gone(pid: &str) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.is_empty() || stat.split_whitespace().nth(2) == Some("Z")
}

/// The session files (`*.jsonl`) under `home`'s `sessions` folder, at any depth, sorted.
pub fn session_files(home: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![home.join("sessions")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|ext| ext == "jsonl") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}
