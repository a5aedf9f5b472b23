//! Shared set-up for the fault tests: a temp home and workspace, the `lathe` binary pointed at a
//! `lathe-mock` script over each protocol, and readers for what it printed and stored.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use lathe_mock::{MockServer, Mode, Script};
use serde_json::Value;

/// The providers every protocol-neutral fault is tried on.
pub const PROTOCOLS: [&str; 3] = ["anthropic", "openai", "responses"];

/// Retries that do not slow the tests down.
pub const FAST_RETRIES: &str = "[retry]\nmax_retries = 2\ninitial_delay_ms = 10\nmax_delay_ms = 20\n";

/// A temp home (with `config.toml`) and an empty workspace.
pub struct Env {
    _tmp: tempfile::TempDir,
    pub home: PathBuf,
    pub workspace: PathBuf,
}

impl Env {
    pub fn new(config: &str) -> Env {
        let tmp = tempfile::tempdir().expect("tempdir");
        let home = tmp.path().join("home");
        let workspace = tmp.path().join("ws");
        std::fs::create_dir_all(&home).expect("home");
        std::fs::create_dir_all(&workspace).expect("ws");
        std::fs::write(home.join("config.toml"), config).expect("config");
        Env { _tmp: tmp, home, workspace }
    }

    /// `lathe ARGS -C <workspace>` with this home, no keys from the environment, stdin null.
    pub fn lathe(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_lathe"));
        command
            .args(args)
            .arg("-C")
            .arg(&self.workspace)
            .env("LATHE_HOME", &self.home)
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_API_KEY")
            .env_remove("LATHE_PROVIDER")
            .env_remove("LATHE_MODEL")
            .env_remove("LATHE_PERMISSION_MODE")
            .stdin(Stdio::null());
        command
    }

    /// `lathe -p PROMPT --provider P --base-url … EXTRA` against `server`.
    pub fn run_against(&self, server: &MockServer, provider: &str, prompt: &str, extra: &[&str]) -> Command {
        let base = base_url(server, provider);
        let mut args = vec!["-p", prompt, "--provider", provider, "--base-url", base.as_str()];
        args.extend_from_slice(extra);
        self.lathe(&args)
    }

    /// Every session file's text, concatenated.
    pub fn sessions_text(&self) -> String {
        let mut text = String::new();
        let Ok(projects) = std::fs::read_dir(self.home.join("sessions")) else { return text };
        for project in projects.flatten() {
            for file in std::fs::read_dir(project.path()).into_iter().flatten().flatten() {
                text.push_str(&std::fs::read_to_string(file.path()).unwrap_or_default());
            }
        }
        text
    }

    pub fn put(&self, rel: &str, bytes: impl AsRef<[u8]>) {
        let path = self.workspace.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
        std::fs::write(path, bytes).expect("write");
    }
}

/// Runs `git ARGS` in `dir` with a test identity and no signing; panics with git's stderr on failure.
pub fn git(dir: &std::path::Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// The base URL of `server` for a provider name.
pub fn base_url(server: &MockServer, provider: &str) -> String {
    match provider {
        "anthropic" => server.url(),
        _ => format!("{}/v1", server.url()),
    }
}

/// Starts a scripted mock from a whole script (`{"turns": […], …}`).
pub async fn serve(script: Value) -> MockServer {
    let script = Script::from_json(&script.to_string()).expect("script");
    MockServer::start(Mode::Scripted(script)).await.expect("mock")
}

pub async fn output(mut command: Command) -> Output {
    tokio::task::spawn_blocking(move || command.output()).await.expect("join").expect("run lathe")
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

pub fn json_lines(output: &Output) -> Vec<Value> {
    stdout(output)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect()
}

/// The `tool_result` lines of a stream-json run, in order.
pub fn tool_results(output: &Output) -> Vec<Value> {
    json_lines(output).into_iter().filter(|line| line["type"] == "tool_result").collect()
}

/// The request bodies the server received, as text.
pub fn request_texts(server: &MockServer) -> Vec<String> {
    server.requests().iter().map(|request| request.body.to_string()).collect()
}

/// A real 1×1 PNG (70 bytes).
pub const PIXEL_PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00,
    0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89, 0x00,
    0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0, 0x1f, 0x00, 0x05,
    0x00, 0x01, 0xff, 0x89, 0x99, 0x3d, 0x1d, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42,
    0x60, 0x82,
];
