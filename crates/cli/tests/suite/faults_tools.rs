//! Faults of the tools, through the real binary against lathe-mock: commands that reach for the
//! user's terminal (K5), search tools that disagree about what exists (K8), very long lines (K9)
//! and bytes the user did not ask to change (K10).

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::harness::{Env, FAST_RETRIES, base_url, output, serve, stderr, tool_results};

fn call(id: &str, name: &str, arguments: Value) -> Value {
    json!({"id": id, "name": name, "arguments": arguments})
}

/// The outputs of a run's tool results, in order.
fn outputs(out: &std::process::Output) -> Vec<String> {
    tool_results(out).iter().map(|r| r["output"].as_str().unwrap_or_default().to_string()).collect()
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git").args(args).current_dir(dir).status().expect("git must be installed");
    assert!(status.success(), "git {args:?}");
}

/// A local HTTP server that answers every request with 401 and `WWW-Authenticate: Basic`, as a
/// private git remote does. Returns its URL.
async fn auth_wall() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/private/repo.git", listener.local_addr().expect("addr"));
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buffer = [0u8; 4096];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buffer).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buffer[..n]),
                    }
                }
                let response = "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"git\"\r\n\
                                Content-Length: 0\r\nConnection: close\r\n\r\n";
                let _ = socket.write_all(response.as_bytes()).await;
            });
        }
    });
    url
}

/// `arg` quoted for `sh`.
fn quoted(arg: &str) -> String {
    format!("'{}'", arg.replace('\'', "'\\''"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_never_reach_the_users_terminal() {
    let script_bin = Command::new("script").arg("--version").output();
    assert!(
        script_bin.is_ok_and(|o| o.status.success()),
        "this test needs `script` (util-linux) to give lathe a terminal; scripts/install-build-deps.sh installs it"
    );
    let env = Env::new(FAST_RETRIES);
    let remote = auth_wall().await;
    let server = serve(json!({"turns": [
        {"tool_calls": [call("c1", "shell", json!({"command": "sh -c 'read x < /dev/tty; echo $x'", "timeout_ms": 20000}))]},
        {"tool_calls": [call("c2", "shell", json!({"command": format!("git ls-remote {remote}"), "timeout_ms": 20000}))]},
        {"text": "done"}
    ]}))
    .await;
    let base = base_url(&server, "anthropic");
    let lathe = [
        env!("CARGO_BIN_EXE_lathe"),
        "-p",
        "try the commands",
        "--provider",
        "anthropic",
        "--base-url",
        &base,
        "--yolo",
        "--output-format",
        "stream-json",
        "-C",
        &env.workspace.display().to_string(),
    ]
    .iter()
    .map(|arg| quoted(arg))
    .collect::<Vec<_>>()
    .join(" ");
    // `script` runs lathe on a new pseudo-terminal and copies everything written to it to stdout.
    // Its stdin stays open and silent, like a user who types nothing.
    let mut child = Command::new("script")
        .args(["-q", "-e", "-c", &lathe, "/dev/null"])
        .env("LATHE_HOME", &env.home)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("GIT_TERMINAL_PROMPT")
        .env_remove("GIT_ASKPASS")
        .env_remove("SSH_ASKPASS")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn script");
    let _typing_nothing = child.stdin.take();
    let mut terminal = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut seen = Vec::new();
        let _ = terminal.read_to_end(&mut seen);
        String::from_utf8_lossy(&seen).into_owned()
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            break None;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let screen = reader.join().expect("reader");
    assert_eq!(status.and_then(|s| s.code()), Some(0), "{screen}");
    // Everything on the terminal is Lathe's own stream-json: no prompt, no command output.
    let (json, other): (Vec<&str>, Vec<&str>) =
        screen.lines().map(str::trim).filter(|line| !line.is_empty()).partition(|line| line.starts_with('{'));
    assert!(other.is_empty(), "written to the terminal: {other:?}");
    let results: Vec<Value> = json
        .iter()
        .map(|line| serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .filter(|line| line["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 2, "{screen}");
    for result in &results {
        let elapsed = result["elapsed_ms"].as_u64().expect("elapsed_ms");
        assert!(elapsed < 3_000, "the command waited on the terminal for {elapsed} ms: {result}");
        assert_ne!(result["exit_code"], 124, "timed out: {result}");
    }
    let tty = results[0]["output"].as_str().unwrap_or_default();
    assert!(tty.contains("/dev/tty") && tty.contains("No such device"), "{tty}");
    let git = results[1]["output"].as_str().unwrap_or_default();
    assert!(git.contains("could not read Username") && results[1]["exit_code"] == 128, "{}", results[1]);
}

#[tokio::test]
async fn glob_list_dir_and_grep_agree_about_ignored_files() {
    let env = Env::new(FAST_RETRIES);
    git(&env.workspace, &["init", "-q"]);
    env.put(".gitignore", "dist/\n*.log\n");
    env.put("dist/bundle.js", "const NEEDLE = 1;\n");
    env.put("debug.log", "NEEDLE in a log\n");
    env.put("src/main.js", "console.log('hi');\n");
    let server = serve(json!({"turns": [
        {"tool_calls": [
            call("c1", "glob", json!({"pattern": "dist/bundle.js"})),
            call("c2", "glob", json!({"pattern": "**/bundle.js"})),
            call("c3", "list_dir", json!({"path": "."})),
            call("c4", "grep", json!({"pattern": "NEEDLE"})),
            call("c5", "grep", json!({"pattern": "NEEDLE", "include_ignored": true, "output_mode": "files"})),
            call("c6", "list_dir", json!({"path": "dist"}))]},
        {"text": "done"}
    ]}))
    .await;
    let out =
        output(env.run_against(&server, "anthropic", "find the bundle", &["--output-format", "stream-json"]))
            .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let got = outputs(&out);
    assert_eq!(got[0], "dist/bundle.js\n");
    assert!(got[1].contains("1 ignored or hidden file would match (dist/bundle.js)"), "{}", got[1]);
    assert!(got[1].contains("include_ignored: true"), "{}", got[1]);
    assert!(got[2].contains("  src/\n") && !got[2].contains("  dist/\n"), "{}", got[2]);
    assert!(got[2].contains("entries not shown: .git/, .gitignore, debug.log, dist/;"), "{}", got[2]);
    assert!(got[3].starts_with("No matches") && got[3].contains("include_ignored"), "{}", got[3]);
    assert_eq!(got[4], "debug.log\ndist/bundle.js\n");
    assert_eq!(got[5], "dist/\n  bundle.js\n");
}

#[tokio::test]
async fn glob_grep_and_list_dir_follow_one_rule_for_symlinked_directories() {
    let env = Env::new(FAST_RETRIES);
    env.put("real/notes.txt", "NEEDLE\n");
    std::os::unix::fs::symlink("real", env.workspace.join("alias")).expect("symlink");
    let server = serve(json!({"turns": [
        {"tool_calls": [
            call("c1", "glob", json!({"pattern": "**/*.txt"})),
            call("c2", "grep", json!({"pattern": "NEEDLE"})),
            call("c3", "list_dir", json!({"path": "."})),
            call("c4", "glob", json!({"pattern": "*.txt", "path": "alias"}))]},
        {"text": "done"}
    ]}))
    .await;
    let out = output(env.run_against(&server, "openai", "look", &["--output-format", "stream-json"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let got = outputs(&out);
    let note = "[1 symlinked directory not entered: alias -> real; pass one as path to search inside]\n";
    assert_eq!(got[0], format!("real/notes.txt\n{note}"));
    assert_eq!(got[1], format!("real/notes.txt:1:NEEDLE\n{note}"));
    assert_eq!(got[2], "./\n  alias/ -> real (symlink, not entered)\n  real/\n    notes.txt\n");
    assert_eq!(got[3], "alias/notes.txt\n");
}

#[tokio::test]
async fn a_match_deep_in_a_minified_line_is_shown_with_its_column_and_read_file_pages_to_it() {
    let env = Env::new(FAST_RETRIES);
    let mut line = "a".repeat(2_000_000);
    line.replace_range(1_500_000..1_500_006, "NEEDLE");
    env.put("min.js", &line);
    let server = serve(json!({"turns": [
        {"tool_calls": [call("c1", "grep", json!({"pattern": "NEEDLE", "path": "min.js"}))]},
        {"tool_calls": [call("c2", "read_file", json!({"path": "min.js", "column": 1_499_801}))]},
        {"text": "found it"}
    ]}))
    .await;
    let out =
        output(env.run_against(&server, "responses", "find NEEDLE", &["--output-format", "stream-json"]))
            .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let got = outputs(&out);
    assert!(got[0].len() < 1_200, "{} bytes", got[0].len());
    assert!(got[0].starts_with("min.js:1:1500001: …"), "{}", &got[0][..60]);
    assert!(got[0].contains("aaaNEEDLEaaa"), "{}", got[0]);
    assert!(got[1].starts_with("     1\t[from column 1499801] "), "{}", &got[1][..60]);
    assert!(
        got[1].contains("NEEDLE") && got[1].contains("column=1501801"),
        "{}",
        &got[1][got[1].len() - 120..]
    );
}

#[tokio::test]
async fn write_file_keeps_the_files_bom_line_endings_and_encoding() {
    let env = Env::new(FAST_RETRIES);
    env.put("w.cs", b"\xEF\xBB\xBFline1\r\nline2\r\nline3\r\n");
    env.put("latin.txt", b"caf\xE9\n");
    let server = serve(json!({"turns": [
        {"tool_calls": [call("c1", "read_file", json!({"path": "w.cs"})), call("c2", "read_file", json!({"path": "latin.txt"}))]},
        {"tool_calls": [call("c3", "write_file", json!({"path": "w.cs", "content": "café\n"}))]},
        {"tool_calls": [call("c4", "write_file", json!({"path": "latin.txt", "content": "déjà vu\n"}))]},
        {"tool_calls": [call("c5", "write_file", json!({"path": "latin.txt", "content": "arrow → here\n"}))]},
        {"text": "done"}
    ]}))
    .await;
    let out = output(env.run_against(
        &server,
        "anthropic",
        "rewrite",
        &["--yolo", "--output-format", "stream-json"],
    ))
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let bytes = std::fs::read(env.workspace.join("w.cs")).expect("w.cs");
    assert_eq!(bytes, [0xEF, 0xBB, 0xBF, 0x63, 0x61, 0x66, 0xC3, 0xA9, 0x0D, 0x0A]);
    assert_eq!(std::fs::read(env.workspace.join("latin.txt")).expect("latin"), b"d\xE9j\xE0 vu\n");
    let results = tool_results(&out);
    assert_eq!(results[4]["is_error"], true);
    assert!(
        results[4]["output"].as_str().is_some_and(|o| o.contains("Windows-1252 (Latin-1)")),
        "{}",
        results[4]
    );
}

#[tokio::test]
async fn read_file_marks_a_missing_final_newline() {
    let env = Env::new(FAST_RETRIES);
    env.put("h.txt", "hello");
    env.put("hn.txt", "hello\n");
    let server = serve(json!({"turns": [
        {"tool_calls": [call("c1", "read_file", json!({"path": "h.txt"})), call("c2", "read_file", json!({"path": "hn.txt"}))]},
        {"text": "done"}
    ]}))
    .await;
    let out = output(env.run_against(&server, "openai", "read", &["--output-format", "stream-json"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let got = outputs(&out);
    assert_eq!(got[0], "     1\thello\n\\ No newline at end of file\n");
    assert_eq!(got[1], "     1\thello\n");
}

#[test]
fn quoting_survives_spaces_and_quotes() {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("printf %s {}", quoted("it's a test")))
        .stdout(Stdio::piped())
        .stdin(Stdio::piped())
        .spawn()
        .expect("sh");
    let _ = child.stdin.take().map(|mut stdin| stdin.write_all(b""));
    let out = child.wait_with_output().expect("wait");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "it's a test");
}
