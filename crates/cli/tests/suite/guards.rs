//! The guards in the loop, through the real binary against lathe-mock: the cap on tool calls per
//! response, repeated identical calls, the write that drops most of a file, and how such runs end
//! (exit status, `result` subtype, what the model was told, what is on disk).

use std::process::Output;

use lathe_mock::MockServer;
use serde_json::{Value, json};

use super::harness::{Env, FAST_RETRIES, json_lines, output, serve, stderr, tool_results};

fn call(id: &str, name: &str, arguments: Value) -> Value {
    json!({"id": id, "name": name, "arguments": arguments})
}

fn shell(id: &str, command: &str) -> Value {
    call(id, "shell", json!({"command": command}))
}

/// The tool results carried by request `index`, as the model reads them (Anthropic `tool_result`
/// blocks of the last message, or OpenAI Chat `tool` messages after the last assistant message).
fn results_sent(server: &MockServer, index: usize) -> Vec<String> {
    let requests = server.requests();
    let body = &requests[index].body;
    let messages = body["messages"].as_array().expect("messages");
    if let Some(last) = messages.last().and_then(|m| m["content"].as_array())
        && last.iter().any(|block| block["type"] == "tool_result")
    {
        return last.iter().filter(|block| block["type"] == "tool_result").map(Value::to_string).collect();
    }
    let after_assistant = messages.iter().rposition(|m| m["role"] == "assistant").map_or(0, |i| i + 1);
    messages[after_assistant..]
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].to_string())
        .collect()
}

/// The final `result` object of a json or stream-json run.
fn result(out: &Output) -> Value {
    json_lines(out).pop().expect("a result line")
}

fn lines_of(env: &Env, file: &str) -> Vec<String> {
    std::fs::read_to_string(env.workspace.join(file)).unwrap_or_default().lines().map(String::from).collect()
}

#[tokio::test]
async fn a_response_with_40_calls_runs_only_the_cap_and_answers_the_rest() {
    for (provider, flag, cap) in [("anthropic", None, 16), ("openai", Some("5"), 5)] {
        let env = Env::new(FAST_RETRIES);
        let calls: Vec<Value> =
            (0..40).map(|n| shell(&format!("c{n}"), &format!("echo {n} >> log.txt"))).collect();
        let server = serve(json!({"turns": [{"tool_calls": calls}, {"text": "done"}]})).await;
        let mut extra = vec!["--yolo", "--output-format", "json"];
        if let Some(cap) = flag {
            extra.extend(["--max-calls-per-response", cap]);
        }
        let out = output(env.run_against(&server, provider, "log the numbers", &extra)).await;
        assert_eq!(out.status.code(), Some(0), "{provider}: {}", stderr(&out));
        let expected: Vec<String> = (0..cap).map(|n| n.to_string()).collect();
        assert_eq!(lines_of(&env, "log.txt"), expected, "{provider}: only the first {cap} calls ran");
        assert_eq!(server.requests().len(), 2, "{provider}");
        let sent = results_sent(&server, 1);
        assert_eq!(sent.len(), 40, "{provider}: every call has its result");
        let not_run =
            format!("not run: your response made 40 tool calls; Lathe runs at most {cap} per response");
        let refused = sent.iter().filter(|text| text.contains(&not_run)).count();
        assert_eq!(refused, 40 - cap, "{provider}: {sent:#?}");
        assert!(sent[cap..].iter().all(|text| text.contains("Wait for the results")), "{provider}");
        assert_eq!(result(&out)["tool_calls"], 40, "{provider}");
    }
}

#[tokio::test]
async fn the_same_call_in_five_responses_is_refused_from_the_third_and_the_run_ends_as_no_progress() {
    let env = Env::new(FAST_RETRIES);
    let turn = |n: usize| json!({"tool_calls": [shell(&format!("c{n}"), "echo Hello >> greet.txt")]});
    let server =
        serve(json!({"turns": [turn(1), turn(2), turn(3), turn(4), turn(5), {"text": "done"}]})).await;
    let out =
        output(env.run_against(&server, "openai", "greet", &["--yolo", "--output-format", "stream-json"]))
            .await;
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert_eq!(lines_of(&env, "greet.txt"), ["Hello", "Hello"], "the call ran twice");
    let statuses: Vec<Value> = tool_results(&out).iter().map(|r| r["status"].clone()).collect();
    assert_eq!(statuses, ["completed", "completed", "failed", "failed", "failed"]);
    // The model was told after its third call, and the run ended after the third refusal.
    assert_eq!(server.requests().len(), 5);
    let told = results_sent(&server, 3);
    assert!(told[0].contains("already made twice") && told[0].contains("do something different"), "{told:?}");
    let end = result(&out);
    assert_eq!(end["subtype"], "error_no_progress", "{end}");
    assert_eq!(end["is_error"], true);
    assert!(end["error"]["message"].as_str().is_some_and(|m| m.contains("echo Hello >> greet.txt")), "{end}");
}

#[tokio::test]
async fn the_same_call_five_times_in_one_response_runs_twice_and_ends_the_run() {
    let env = Env::new(FAST_RETRIES);
    let calls: Vec<Value> = (0..5).map(|n| shell(&format!("c{n}"), "echo Hello >> greet.txt")).collect();
    let server = serve(json!({"turns": [{"tool_calls": calls}, {"text": "done"}]})).await;
    let out = output(env.run_against(&server, "anthropic", "greet", &["--yolo"])).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert_eq!(lines_of(&env, "greet.txt"), ["Hello", "Hello"]);
    assert!(err.contains("stopped, no progress") && err.contains("echo Hello >> greet.txt"), "{err}");
    assert_eq!(server.requests().len(), 1, "no request after the run stopped");
    // Every call of the response still has its result in the session.
    assert_eq!(env.sessions_text().matches("already made twice").count(), 3);
}

#[tokio::test]
async fn a_call_repeated_around_successful_edits_is_never_refused() {
    let env = Env::new(FAST_RETRIES);
    let test = |id: &str| json!({"tool_calls": [shell(id, "echo run >> runs.txt")]});
    let edit = |id: &str, n: u32| json!({"tool_calls": [call(id, "write_file", json!({"path": format!("fix{n}.py"), "content": "x = 1\n"}))]});
    let script = json!({"turns": [test("t1"), edit("e1", 1), test("t2"), edit("e2", 2), test("t3"), {"text": "fixed"}]});
    let server = serve(script).await;
    let out =
        output(env.run_against(&server, "anthropic", "fix it", &["--yolo", "--output-format", "json"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(lines_of(&env, "runs.txt"), ["run", "run", "run"]);
    assert_eq!(result(&out)["subtype"], "success");
}

#[tokio::test]
async fn a_write_that_drops_most_of_a_read_file_is_written_with_a_warning_to_the_model() {
    let env = Env::new(FAST_RETRIES);
    let old: String = (1..=10).map(|i| format!("def f{i}(x):\n    return x + {i}\n\n")).collect();
    env.put("mathutil.py", &old);
    let new = "def f1(x):\n    return x + 1\n";
    let server = serve(json!({"turns": [
        {"tool_calls": [call("r", "read_file", json!({"path": "mathutil.py"}))]},
        {"tool_calls": [call("w", "write_file", json!({"path": "mathutil.py", "content": new}))]},
        {"text": "done"}
    ]}))
    .await;
    let out =
        output(env.run_against(&server, "openai", "tidy", &["--permission-mode", "accept-edits"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(env.workspace.join("mathutil.py")).expect("file"), new);
    let sent = results_sent(&server, 2);
    assert!(
        sent[0].contains("warning: this write removed 18 of the 20 lines the file had")
            && sent[0].contains("restore"),
        "{sent:?}"
    );
}

#[tokio::test]
async fn denied_calls_are_listed_in_the_result_and_on_stderr_in_default_mode() {
    for format in ["text", "json"] {
        let env = Env::new(FAST_RETRIES);
        env.put("build/out.o", "object");
        let server = serve(json!({"turns": [
            {"tool_calls": [shell("d1", "rm -rf build")]},
            {"text": "I could not clean the build."}
        ]}))
        .await;
        let out = output(env.run_against(&server, "anthropic", "clean", &["--output-format", format])).await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert!(env.workspace.join("build/out.o").exists(), "the denied command did not run");
        if format == "text" {
            let answer = String::from_utf8_lossy(&out.stdout);
            assert_eq!(answer.trim(), "I could not clean the build.");
            let line =
                err.lines().find(|line| line.starts_with("denied: ")).unwrap_or_else(|| panic!("{err}"));
            assert!(line.starts_with("denied: shell `rm -rf build` — "), "{line}");
            assert!(line.contains("permission"), "the reason is given: {line}");
        } else {
            let denials = &result(&out)["permission_denials"];
            assert_eq!(
                denials,
                &json!([{"tool_name": "shell", "tool_use_id": "d1", "tool_input": {"command": "rm -rf build"}}])
            );
        }
    }
}

/// The text of every user message in request `index` (Anthropic content blocks or a plain string).
fn user_texts(server: &MockServer, index: usize) -> Vec<String> {
    let requests = server.requests();
    let messages = requests[index].body["messages"].as_array().expect("messages").clone();
    messages
        .iter()
        .filter(|m| m["role"] == "user")
        .flat_map(|m| match &m["content"] {
            Value::String(text) => vec![text.clone()],
            Value::Array(blocks) => {
                blocks.iter().filter_map(|b| b["text"].as_str().map(String::from)).collect()
            }
            _ => Vec::new(),
        })
        .collect()
}

#[tokio::test]
async fn a_rename_left_half_done_is_pointed_out_once_before_the_model_stops() {
    let env = Env::new(FAST_RETRIES);
    std::fs::write(
        env.workspace.join("app.py"),
        "from settings import TIMEOUT\n\n\ndef wait():\n    return TIMEOUT * 2\n",
    )
    .unwrap();
    let rename = |id: &str, old: &str, new: &str| {
        call(id, "edit_file", json!({"path": "app.py", "old_string": old, "new_string": new}))
    };
    let server = serve(json!({"turns": [
        {"tool_calls": [call("r", "read_file", json!({"path": "app.py"}))]},
        {"tool_calls": [rename("e1", "from settings import TIMEOUT\n", "from settings import TIMEOUT_SECONDS\n")]},
        {"text": "Renamed it."},
        {"tool_calls": [rename("e2", "    return TIMEOUT * 2", "    return TIMEOUT_SECONDS * 2")]},
        {"text": "Renamed it everywhere."},
    ]}))
    .await;
    let out = output(env.run_against(
        &server,
        "anthropic",
        "rename TIMEOUT",
        &["--yolo", "--output-format", "json"],
    ))
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        server.requests().len(),
        5,
        "the first stop was turned into one more step, the second was not"
    );
    let edit_result = results_sent(&server, 2).join("\n");
    assert!(
        edit_result.contains("`TIMEOUT` still occurs in the file") && edit_result.contains("line 5:"),
        "{edit_result}"
    );
    let nudge = user_texts(&server, 3).pop().unwrap_or_default();
    assert!(nudge.starts_with("Before you finish"), "{nudge}");
    assert!(
        nudge.contains("`TIMEOUT` is still used in app.py:\n  line 5:     return TIMEOUT * 2"),
        "{nudge}"
    );
    assert_eq!(
        std::fs::read_to_string(env.workspace.join("app.py")).unwrap(),
        "from settings import TIMEOUT_SECONDS\n\n\ndef wait():\n    return TIMEOUT_SECONDS * 2\n"
    );
    assert_eq!(result(&out)["result"], "Renamed it everywhere.");
}

#[tokio::test]
async fn a_second_stop_after_the_pointer_stands() {
    // The model stops right after the half rename twice: told once, then the stop stands.
    let env = Env::new(FAST_RETRIES);
    std::fs::write(env.workspace.join("a.py"), "x = 1\nprint(x)\n").unwrap();
    let server = serve(json!({"turns": [
        {"tool_calls": [call("r", "read_file", json!({"path": "a.py"}))]},
        {"tool_calls": [call("e", "edit_file", json!({"path": "a.py", "old_string": "x = 1", "new_string": "y = 1"}))]},
        {"text": "Done."},
        {"text": "It should stay."},
    ]}))
    .await;
    let out =
        output(env.run_against(&server, "openai", "rename x", &["--yolo", "--output-format", "json"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(server.requests().len(), 4);
    assert_eq!(result(&out)["result"], "It should stay.");
}

#[tokio::test]
async fn a_rename_finished_before_the_stop_is_not_held_up() {
    let env = Env::new(FAST_RETRIES);
    std::fs::write(env.workspace.join("a.py"), "x = 1\nprint(x)\n").unwrap();
    let edit = |id: &str, old: &str, new: &str| {
        call(id, "edit_file", json!({"path": "a.py", "old_string": old, "new_string": new}))
    };
    let server = serve(json!({"turns": [
        {"tool_calls": [call("r", "read_file", json!({"path": "a.py"}))]},
        {"tool_calls": [edit("e1", "x = 1", "y = 1")]},
        {"tool_calls": [edit("e2", "print(x)", "print(y)")]},
        {"text": "Done."},
    ]}))
    .await;
    let out =
        output(env.run_against(&server, "anthropic", "rename x", &["--yolo", "--output-format", "json"]))
            .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(server.requests().len(), 4, "no extra step");
    assert_eq!(std::fs::read_to_string(env.workspace.join("a.py")).unwrap(), "y = 1\nprint(y)\n");
}
