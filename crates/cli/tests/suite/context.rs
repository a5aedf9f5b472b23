//! Context management end to end: `lathe -p` against lathe-mock playing a model with a 32k-token
//! window (the providers' real context-length errors, pairing checks), then `--continue`.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use lathe_core::context::SUMMARY_REQUEST_MARKER;
use lathe_mock::{LoggedRequest, MockServer, Mode, Script};
use serde_json::{Value, json};

const TASK: &str = "Read every file under src/ one by one and report the checksum line of each.";
const SUMMARY: &str = "## User's task and constraints\nRead every file under src/.\n## Verified facts\nChecksum lines \
                       found so far.\n## Files changed\nNone.\n## Commands run\nNone.\n## Open problems\nNone.\n## Next \
                       step\nRead the next file.";
const WINDOW: u64 = 32_000;
const FILES: usize = 300;

fn seed_files(dir: &Path, count: usize) {
    std::fs::create_dir_all(dir.join("src")).expect("src");
    for i in 0..count {
        let mut text = format!("file {i:03}: checksum {:08x}\n", i * 2_654_435_761 % 4_294_967_291);
        let mut line = 0;
        while text.len() < 5_000 {
            text.push_str(&format!(
                "{i:03}.{line:03} the quick brown fox jumps over the lazy dog {}\n",
                i * line
            ));
            line += 1;
        }
        std::fs::write(dir.join(format!("src/f{i:03}.txt")), text).expect("file");
    }
}

fn script(turns: Vec<Value>) -> Script {
    let script = json!({"context_window": WINDOW, "check_pairing": true,
                        "side_replies": [{"when_last_user_contains": SUMMARY_REQUEST_MARKER, "text": SUMMARY}],
                        "turns": turns});
    Script::from_json(&script.to_string()).expect("script")
}

fn reading_turns(count: usize) -> Vec<Value> {
    let mut turns: Vec<Value> = (0..count)
        .map(|i| {
            json!({"tool_calls": [{"id": format!("call_{i:03}"), "name": "read_file",
                                   "arguments": {"path": format!("src/f{i:03}.txt")}}],
                   "usage": {"output_tokens": 30, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 10}})
        })
        .collect();
    turns.push(json!({"text": "All files read.", "usage": {"output_tokens": 5}}));
    turns
}

async fn lathe(home: &Path, workspace: &Path, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_lathe"));
    command
        .args(args)
        .arg("-C")
        .arg(workspace)
        .env("LATHE_HOME", home)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("LATHE_PROVIDER")
        .stdin(Stdio::null());
    tokio::task::spawn_blocking(move || command.output()).await.expect("join").expect("run lathe")
}

fn lines(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect()
}

fn assert_fits_pairs_and_keeps_the_task(requests: &[LoggedRequest]) {
    for request in requests {
        // The mock checks the window and the pairing of every call with exactly one result and
        // answers 400 otherwise.
        assert_eq!(
            request.status,
            200,
            "request {} was rejected: {:.300}",
            request.seq,
            request.body.to_string()
        );
        let output = ["max_tokens", "max_completion_tokens"].iter().find_map(|k| request.body[*k].as_u64());
        let input = lathe_mock::input_tokens(&request.body);
        assert!(input + output.unwrap_or(0) <= WINDOW, "request {}: {input} tokens", request.seq);
        assert!(request.body.to_string().contains(TASK), "request {} lost the task sentence", request.seq);
    }
}

#[tokio::test]
async fn three_hundred_reads_complete_inside_a_32k_window_and_continue_from_the_boundary() {
    for (provider, base) in [("anthropic", ""), ("openai", "/v1")] {
        let tmp = tempfile::tempdir().expect("tmp");
        let (home, workspace) = (tmp.path().join("home"), tmp.path().join("ws"));
        std::fs::create_dir_all(&home).expect("home");
        seed_files(&workspace, FILES);
        std::fs::write(
            home.join("config.toml"),
            format!("context_window = {WINDOW}\n[retry]\nmax_retries = 0\n"),
        )
        .expect("config");
        let server = MockServer::start(Mode::Scripted(script(reading_turns(FILES)))).await.expect("mock");
        let url = format!("{}{base}", server.url());
        let args = [
            "-p",
            TASK,
            "--provider",
            provider,
            "--base-url",
            &url,
            "--output-format",
            "stream-json",
            "--max-turns",
            "400",
        ];
        let out = lathe(&home, &workspace, &args).await;
        let events = lines(&out);
        let result = events.last().expect("result");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{provider}: {result}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(result["subtype"], "success");
        assert_eq!(result["tool_calls"], FILES);
        // Cache reads (and, on Anthropic, writes) are counted in the result: 100 and 10 per read.
        assert_eq!(result["usage"]["cache_read_tokens"], 100 * FILES);
        let writes = if provider == "anthropic" { 10 * FILES } else { 0 };
        assert_eq!(result["usage"]["cache_write_tokens"], writes, "{provider}");
        let requests = server.requests();
        assert_fits_pairs_and_keeps_the_task(&requests);
        let count = |kind: &str| events.iter().filter(|line| line["type"] == kind).count();
        assert!(count("compacted") >= 1, "{provider}: no compaction");
        assert!(count("context_pruned") >= 1, "{provider}: no pruning");
        let usage =
            events.iter().rfind(|line| line["type"] == "usage" && !line["context"].is_null()).expect("usage");
        assert_eq!(usage["context"]["window_tokens"], WINDOW);
        assert!(usage["context"]["used_tokens"].as_u64().is_some_and(|used| used < WINDOW), "{usage}");
        assert!(!usage["context"]["largest"].as_array().expect("largest").is_empty());

        // --continue starts from the last boundary: its summary first, the early reads gone.
        let next = MockServer::start(Mode::Scripted(script(vec![json!({"text": "Nothing left to read."})])))
            .await
            .expect("mock");
        let url = format!("{}{base}", next.url());
        let args = ["-p", "What is left?", "--continue", "--provider", provider, "--base-url", &url];
        let out = lathe(&home, &workspace, &args).await;
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let requests = next.requests();
        assert_fits_pairs_and_keeps_the_task(&requests);
        let body = &requests[0].body;
        let first = match provider {
            "anthropic" => body["messages"][0]["content"].to_string(),
            _ => body["messages"]
                .as_array()
                .expect("messages")
                .iter()
                .find(|m| m["role"] == "user")
                .expect("user")["content"]
                .to_string(),
        };
        assert!(first.contains("compacted to fit the model's context window"), "{first:.400}");
        assert!(!body.to_string().contains("file 000: checksum"), "the first read is no longer sent");
    }
}

#[tokio::test]
async fn a_server_that_under_reports_usage_never_gets_a_request_over_the_window() {
    const SMALL: u64 = 16_000;
    let tmp = tempfile::tempdir().expect("tmp");
    let (home, workspace) = (tmp.path().join("home"), tmp.path().join("ws"));
    std::fs::create_dir_all(&home).expect("home");
    seed_files(&workspace, 40);
    std::fs::write(home.join("config.toml"), format!("context_window = {SMALL}\n[retry]\nmax_retries = 0\n"))
        .expect("config");
    let script = json!({"context_window": SMALL, "check_pairing": true, "report_input_tokens": 10,
                        "side_replies": [{"when_last_user_contains": SUMMARY_REQUEST_MARKER, "text": SUMMARY}],
                        "turns": reading_turns(40)});
    let script = Script::from_json(&script.to_string()).expect("script");
    let server = MockServer::start(Mode::Scripted(script)).await.expect("mock");
    let url = format!("{}/v1", server.url());
    let args = ["-p", TASK, "--provider", "openai", "--base-url", &url, "--max-turns", "100"];
    let out = lathe(&home, &workspace, &args).await;
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let requests = server.requests();
    for request in &requests {
        let output = ["max_tokens", "max_completion_tokens"].iter().find_map(|k| request.body[*k].as_u64());
        let input = lathe_mock::input_tokens(&request.body);
        assert_eq!(request.status, 200, "request {}: {input} tokens", request.seq);
        assert!(input + output.unwrap_or(0) <= SMALL, "request {}: {input} tokens", request.seq);
    }
}

#[tokio::test]
async fn instructions_too_big_for_the_window_stop_at_once_naming_the_sizes_and_the_setting() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (home, workspace) = (tmp.path().join("home"), tmp.path().join("ws"));
    std::fs::create_dir_all(&home).expect("home");
    std::fs::create_dir_all(&workspace).expect("ws");
    let rule = "- Always run the whole test suite before you say a change is done.\n";
    std::fs::write(workspace.join("AGENTS.md"), rule.repeat(40 * 1024 / rule.len())).expect("AGENTS.md");
    std::fs::write(home.join("config.toml"), "context_window = 8192\n[retry]\nmax_retries = 0\n")
        .expect("config");
    let script = json!({"context_window": 8192, "check_pairing": true,
                        "side_replies": [{"when_last_user_contains": SUMMARY_REQUEST_MARKER, "text": SUMMARY}],
                        "turns": [{"text": "never sent"}]});
    let server = MockServer::start(Mode::Scripted(Script::from_json(&script.to_string()).expect("script")))
        .await
        .expect("mock");
    let url = server.url();
    let out = lathe(&home, &workspace, &["-p", "hello", "--provider", "anthropic", "--base-url", &url]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert_eq!(server.requests().len(), 0, "no summary request nor model request is sent");
    for needle in [
        "8192 tokens",
        "project instructions",
        "AGENTS.md",
        "instructions_max_bytes",
        "compaction cannot help",
    ] {
        assert!(stderr.contains(needle), "`{needle}` in: {stderr}");
    }
}

fn setup(config: &str) -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let tmp = tempfile::tempdir().expect("tmp");
    let (home, workspace) = (tmp.path().join("home"), tmp.path().join("ws"));
    std::fs::create_dir_all(&home).expect("home");
    std::fs::create_dir_all(&workspace).expect("ws");
    std::fs::write(home.join("config.toml"), format!("{config}\n[retry]\nmax_retries = 0\n"))
        .expect("config");
    (tmp, home, workspace)
}

fn too_long_forever() -> Script {
    let too_long = json!({"error": {"status": 400, "type": "invalid_request_error",
                                    "message": "prompt is too long: 250000 tokens > 200000 maximum"}});
    Script::from_json(&json!({"turns": vec![too_long; 8]}).to_string()).expect("script")
}

#[tokio::test]
async fn a_provider_that_always_says_prompt_too_long_stops_with_exit_4_after_three_compactions() {
    let (_tmp, home, workspace) = setup("");
    let server = MockServer::start(Mode::Scripted(too_long_forever())).await.expect("mock");
    let out =
        lathe(&home, &workspace, &["-p", TASK, "--provider", "anthropic", "--base-url", &server.url()]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("compaction failed 3 times in a row"), "{stderr}");
    assert!(stderr.contains("prompt is too long"), "{stderr}");
    assert_eq!(server.requests().len(), 4, "the request and three summary requests, never a loop");
}

#[tokio::test]
async fn with_auto_compaction_off_prompt_too_long_stops_with_exit_4_and_error_context() {
    for (config, flag) in [("auto_compact = false", None), ("", Some("--no-auto-compact"))] {
        let (_tmp, home, workspace) = setup(config);
        let server = MockServer::start(Mode::Scripted(too_long_forever())).await.expect("mock");
        let url = server.url();
        let mut args = vec!["-p", TASK, "--provider", "anthropic", "--base-url", &url];
        args.extend(flag);
        let out = lathe(&home, &workspace, &args).await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(4), "{stderr}");
        assert!(stderr.contains("prompt is too long"), "{stderr}");
        assert_eq!(server.requests().len(), 1);

        args.extend(["--output-format", "json"]);
        let out = lathe(&home, &workspace, &args).await;
        assert_eq!(out.status.code(), Some(4), "{}", String::from_utf8_lossy(&out.stderr));
        let result: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON result");
        assert_eq!(result["subtype"], "error_context", "{result}");
        assert_eq!(result["is_error"], true, "{result}");
        let message = result["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("prompt is too long") && message.contains("start a new session"),
            "{result}"
        );
    }
}

#[tokio::test]
async fn a_context_window_too_small_to_use_is_a_usage_error() {
    for config in ["context_window = 100", "[providers.anthropic]\ncontext_window = 10"] {
        let (_tmp, home, workspace) = setup(config);
        let out = lathe(
            &home,
            &workspace,
            &["-p", "hi", "--provider", "anthropic", "--base-url", "http://127.0.0.1:9"],
        )
        .await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("context_window") && stderr.contains("at least 1024"), "{stderr}");
    }
}
