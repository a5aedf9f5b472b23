//! Faults that used to poison a session or a script, through the real binary against lathe-mock:
//! one bad item in the history (K2) and headless mode that must stay scriptable (K6).

use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::harness::{
    Env, FAST_RETRIES, PIXEL_PNG, PROTOCOLS, base_url, json_lines, output, request_texts, serve, stderr,
    stdout,
};

fn read_call(id: &str, path: &str) -> Value {
    json!({"id": id, "name": "read_file", "arguments": {"path": path}})
}

const IMAGE_REJECTION: &str = "Could not process image";

#[tokio::test]
async fn an_image_that_does_not_decode_is_described_and_never_sent() {
    for provider in PROTOCOLS {
        let env = Env::new(FAST_RETRIES);
        // The PNG signature and a 13-byte IHDR chunk, with nothing decodable after it.
        env.put("shot.png", &PIXEL_PNG[..33]);
        let server = serve(json!({
            "turns": [{"tool_calls": [read_call("c1", "shot.png")]}, {"text": "done"}, {"text": "later"}],
            "reject_images": {"status": 400, "message": IMAGE_REJECTION}}))
        .await;
        let out = output(env.run_against(&server, provider, "look at shot.png", &[])).await;
        assert_eq!(out.status.code(), Some(0), "{provider}: {}", stderr(&out));
        let again = output(env.run_against(&server, provider, "and now?", &["--continue"])).await;
        assert_eq!(again.status.code(), Some(0), "{provider}: {}", stderr(&again));
        let requests = server.requests();
        assert_eq!(requests.len(), 3, "{provider}");
        assert!(requests.iter().all(|r| r.status == 200), "{provider}: a request carried an image");
        assert!(request_texts(&server)[1].contains("shot.png was not shown as an image"), "{provider}");
    }
}

#[tokio::test]
async fn an_image_the_provider_rejects_becomes_a_text_note_and_the_request_is_sent_once_more() {
    for provider in PROTOCOLS {
        let env = Env::new(FAST_RETRIES);
        env.put("pixel.png", PIXEL_PNG);
        let server = serve(json!({
            "turns": [{"tool_calls": [read_call("c1", "pixel.png")]}, {"text": "done"}, {"text": "still fine"}],
            "reject_images": {"status": 400, "message": IMAGE_REJECTION}}))
        .await;
        let out = output(env.run_against(&server, provider, "look at pixel.png", &[])).await;
        assert_eq!(out.status.code(), Some(0), "{provider}: {}", stderr(&out));
        assert_eq!(stdout(&out).trim(), "done", "{provider}");
        assert!(stderr(&out).contains(IMAGE_REJECTION), "{provider}: the user is told: {}", stderr(&out));
        let again = output(env.run_against(&server, provider, "and now?", &["--continue"])).await;
        assert_eq!(again.status.code(), Some(0), "{provider}: {}", stderr(&again));
        let statuses: Vec<u16> = server.requests().iter().map(|r| r.status).collect();
        assert_eq!(statuses, vec![200, 400, 200, 200], "{provider}: rejected once, then never again");
        let texts = request_texts(&server);
        assert!(texts[2].contains("[image removed: the model provider could not process it"), "{provider}");
    }
}

#[tokio::test]
async fn a_prompt_whose_request_failed_is_not_glued_to_the_next_one() {
    for provider in PROTOCOLS {
        let env = Env::new(FAST_RETRIES);
        let too_long = json!({"error": {"status": 400, "message": "prompt is too long: 250000 tokens > 200000 maximum"}});
        let server = serve(json!({"turns": [too_long, too_long, too_long, {"text": "ok"}]})).await;
        // Without automatic compaction, "prompt too long" ends the run on the context window.
        let first = output(env.run_against(&server, provider, "first task", &["--no-auto-compact"])).await;
        assert_eq!(first.status.code(), Some(4), "{provider}: {}", stderr(&first));
        let err = stderr(&first);
        assert!(
            err.contains("start a new session") && err.contains("not kept in the session"),
            "{provider}: {err}"
        );
        for prompt in ["retry 0", "retry 1", "retry 2"] {
            let _ = output(env.run_against(&server, provider, prompt, &["--continue", "--no-auto-compact"]))
                .await;
        }
        let last = server.requests().pop().expect("request");
        assert_eq!(last.status, 200, "{provider}");
        let body = last.body.to_string();
        assert!(body.contains("retry 2"), "{provider}: {body}");
        for earlier in ["first task", "retry 0", "retry 1"] {
            assert!(!body.contains(earlier), "{provider}: {earlier:?} was sent again: {body}");
        }
    }
}

#[tokio::test]
async fn a_prompt_whose_request_failed_through_the_compaction_attempts_is_not_glued_to_the_next_one() {
    for provider in PROTOCOLS {
        let env = Env::new(FAST_RETRIES);
        let too_long = json!({"error": {"status": 400, "message": "prompt is too long: 250000 tokens > 200000 maximum"}});
        // After a first answer, every request (the summary requests of the compaction attempts
        // too) is refused as too long.
        let mut turns = vec![json!({"text": "first answer"})];
        turns.extend(std::iter::repeat_n(too_long, 40));
        let refusing = serve(json!({ "turns": turns })).await;
        let first = output(env.run_against(&refusing, provider, "first task", &[])).await;
        assert_eq!(first.status.code(), Some(0), "{provider}: {}", stderr(&first));
        for prompt in ["retry 0", "retry 1"] {
            let out = output(env.run_against(&refusing, provider, prompt, &["--continue"])).await;
            assert_eq!(out.status.code(), Some(4), "{provider}: {}", stderr(&out));
            assert!(stderr(&out).contains("not kept in the session"), "{provider}: {}", stderr(&out));
        }
        let answering = serve(json!({"turns": [{"text": "ok"}]})).await;
        let last = output(env.run_against(&answering, provider, "retry 2", &["--continue"])).await;
        assert_eq!(last.status.code(), Some(0), "{provider}: {}", stderr(&last));
        let body = answering.requests().pop().expect("request").body;
        let text = body.to_string();
        assert!(text.contains("first task") && text.contains("first answer"), "{provider}: {text}");
        for earlier in ["retry 0", "retry 1"] {
            assert!(!text.contains(earlier), "{provider}: {earlier:?} was sent again: {text}");
        }
        let messages = body.get("messages").or_else(|| body.get("input")).and_then(Value::as_array);
        let last_message =
            messages.and_then(|messages| messages.last()).map(Value::to_string).unwrap_or_default();
        assert!(
            last_message.contains("retry 2") && !last_message.contains("first"),
            "{provider}: {last_message}"
        );
    }
}

/// The session files under `home`.
fn session_files(home: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for project in std::fs::read_dir(home.join("sessions")).into_iter().flatten().flatten() {
        for file in std::fs::read_dir(project.path()).into_iter().flatten().flatten() {
            files.push(file.path());
        }
    }
    files
}

#[tokio::test]
async fn a_lost_line_between_a_call_and_the_next_answer_is_repaired_where_it_sits_on_resume() {
    for provider in PROTOCOLS {
        for lost in ["tool_result", "user"] {
            let env = Env::new(FAST_RETRIES);
            env.put("notes.txt", "a note\n");
            let first = serve(json!({"turns": [
                {"tool_calls": [read_call("c1", "notes.txt")]},
                {"text": "read it"},
                {"text": "second answer"}
            ]}))
            .await;
            let out = output(env.run_against(&first, provider, "read notes.txt", &[])).await;
            assert_eq!(out.status.code(), Some(0), "{provider}: {}", stderr(&out));
            let out = output(env.run_against(&first, provider, "and again", &["--continue"])).await;
            assert_eq!(out.status.code(), Some(0), "{provider}: {}", stderr(&out));
            // The line of the call's result (or of the second prompt) is cut in half.
            let files = session_files(&env.home);
            assert_eq!(files.len(), 1, "{files:?}");
            let text = std::fs::read_to_string(&files[0]).expect("session");
            let cut: Vec<String> = text
                .lines()
                .map(|line| {
                    let value: Value = serde_json::from_str(line).unwrap_or_default();
                    let hit = match lost {
                        "tool_result" => value["type"] == "tool_result",
                        _ => value["type"] == "user" && line.contains("and again"),
                    };
                    if hit { line[..line.len() / 2].to_string() } else { line.to_string() }
                })
                .collect();
            std::fs::write(&files[0], cut.join("\n") + "\n").expect("write");

            let strict =
                serve(json!({"check_pairing": true, "turns": [{"text": "fine"}, {"text": "still fine"}]}))
                    .await;
            for prompt in ["after the loss", "once more"] {
                let out = output(env.run_against(&strict, provider, prompt, &["--continue"])).await;
                assert_eq!(out.status.code(), Some(0), "{provider}/{lost}: {}", stderr(&out));
            }
            let statuses: Vec<u16> = strict.requests().iter().map(|r| r.status).collect();
            assert_eq!(statuses, vec![200, 200], "{provider}/{lost}: {}", strict.requests()[0].body);
            let body = strict.requests()[0].body.to_string();
            assert!(body.contains("read it") && body.contains("after the loss"), "{provider}/{lost}: {body}");
            let note = match lost {
                "tool_result" => "the result of this call was lost",
                _ => "a message of this conversation was lost here",
            };
            assert!(body.contains(note), "{provider}/{lost}: {body}");
        }
    }
}

#[tokio::test]
async fn an_open_pipe_that_is_never_written_is_not_waited_on() {
    let env = Env::new(FAST_RETRIES);
    let server = serve(json!({"turns": [{"text": "hi there"}]})).await;
    let base = base_url(&server, "anthropic");
    let mut command = env.lathe(&["-p", "say hi", "--provider", "anthropic", "--base-url", &base]);
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = command.spawn().expect("spawn");
    // Keep the write end open (and silent) for the whole run.
    let _open_stdin = child.stdin.take();
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            break None;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let out = child.wait_with_output().expect("output");
    assert_eq!(status.and_then(|s| s.code()), Some(0), "lathe waited on stdin: {}", stderr(&out));
    assert!(stderr(&out).contains("note: stdin was not read"), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "hi there");
    let body = request_texts(&server).pop().expect("request");
    assert!(body.contains("say hi"), "{body}");
}

#[tokio::test]
async fn piped_input_that_ends_is_appended_to_the_prompt() {
    let env = Env::new(FAST_RETRIES);
    let server = serve(json!({"turns": [{"text": "reviewed"}]})).await;
    let base = base_url(&server, "anthropic");
    let mut command = env.lathe(&["-p", "review this", "--provider", "anthropic", "--base-url", &base]);
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = command.spawn().expect("spawn");
    child.stdin.take().expect("stdin").write_all(b"diff --git a/x b/x\n").expect("write");
    let out =
        tokio::task::spawn_blocking(move || child.wait_with_output()).await.expect("join").expect("wait");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("not read"), "{}", stderr(&out));
    let body = request_texts(&server).pop().expect("request");
    assert!(body.contains("review this") && body.contains("diff --git a/x b/x"), "{body}");
}

#[tokio::test]
async fn every_failure_in_json_output_ends_with_a_result_object() {
    let env = Env::new(FAST_RETRIES);
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
    let down = format!("http://127.0.0.1:{port}");
    let cases: Vec<(Vec<&str>, &str, i32, &str)> = vec![
        (vec!["-p", "hi", "--max-turns", "many"], "usage", 2, "error_usage"),
        (vec!["-p", "hi", "--max-turns", "0"], "usage", 2, "error_usage"),
        (vec!["-p", "hi", "--provider", "frobnicate"], "usage", 2, "error_usage"),
        (vec!["-p", "hi", "--permission-mode", "sometimes"], "usage", 2, "error_usage"),
        (vec!["-p", "  "], "usage", 2, "error_usage"),
        (vec![], "usage", 2, "error_usage"),
        (vec!["-p", "hi", "--provider", "anthropic", "--base-url", &down], "unreachable", 3, "error_api"),
    ];
    for format in ["json", "stream-json"] {
        for (args, kind, code, subtype) in &cases {
            let mut all = args.clone();
            all.extend(["--output-format", format]);
            let out = output(env.lathe(&all)).await;
            assert_eq!(out.status.code(), Some(*code), "{all:?}: {}", stderr(&out));
            let result = json_lines(&out).pop().unwrap_or_else(|| panic!("{all:?}: no output"));
            assert_eq!(result["type"], "result", "{all:?}");
            assert_eq!(result["is_error"], true, "{all:?}");
            assert_eq!(result["subtype"], *subtype, "{all:?}: {result}");
            assert_eq!(result["error"]["kind"], *kind, "{all:?}: {result}");
            assert!(result["error"]["message"].as_str().is_some_and(|m| !m.is_empty()), "{all:?}");
        }
    }
    // A config file that does not parse, and no session to continue.
    let bad_config = Env::new("max_turns = \"lots\"\n");
    let out = output(bad_config.lathe(&["-p", "hi", "--output-format", "json"])).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(json_lines(&out).pop().expect("result")["subtype"], "error_usage");
    // A session that cannot be found is a failed run (exit 1); a missing or malformed id is a usage error.
    let fresh = Env::new("");
    let cases: [(&[&str], i32, &str); 4] = [
        (&["-p", "hi", "--continue"], 1, "error_session"),
        (&["-p", "hi", "--resume", "0193a5c0-0000-7000-8000-00000000dead"], 1, "error_session"),
        (&["-p", "hi", "--resume"], 2, "error_usage"),
        (&["-p", "hi", "--resume", "../elsewhere"], 2, "error_usage"),
    ];
    for (args, code, subtype) in cases {
        let mut all = args.to_vec();
        all.extend(["--provider", "anthropic", "--base-url", &down, "--output-format", "stream-json"]);
        let out = output(fresh.lathe(&all)).await;
        assert_eq!(out.status.code(), Some(code), "{all:?}: {}", stderr(&out));
        let result = json_lines(&out).pop().expect("result");
        assert_eq!(
            (result["subtype"].as_str(), result["is_error"].as_bool()),
            (Some(subtype), Some(true)),
            "{all:?}"
        );
    }
    let args = ["-p", "hi", "--resume", "nonexistent", "--provider", "anthropic", "--base-url", &down];
    let out = output(fresh.lathe(&args)).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("no session"), "{}", stderr(&out));
}

#[tokio::test]
async fn continue_after_a_refused_run_picks_the_conversation_before_it() {
    let env = Env::new(FAST_RETRIES);
    let server = serve(json!({"turns": [{"text": "first answer"}, {"text": "second answer"}]})).await;
    let out = output(env.run_against(&server, "anthropic", "remember the word heron", &[])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Refused before its prompt reached the ledger: an unknown command is a usage error.
    std::thread::sleep(Duration::from_millis(20));
    let refused = output(env.run_against(&server, "anthropic", "/no-such-command", &[])).await;
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    let again = output(env.run_against(&server, "anthropic", "which word?", &["--continue"])).await;
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    let texts = request_texts(&server);
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert!(texts[1].contains("heron") && texts[1].contains("which word?"), "{}", texts[1]);
}
