//! Background sub-agents and forks through `lathe -p` against `lathe-mock`: the parent runs on
//! `parent-model`, a background sub-agent on `bg-model` (a custom agent's `model`), so the mock
//! serves each its own turns whatever order their requests arrive in, and the log tells them apart.

use std::path::Path;
use std::process::Stdio;

use lathe_mock::{LoggedRequest, MockServer, Mode, Script};
use serde_json::{Value, json};

use super::support::{
    Env, env, json_lines, lathe, output, process_gone, session_files, stderr, tool_result_text,
};

const WORKER: &str =
    "---\nname: worker\ndescription: Background worker\nmodel: bg-model\n---\nYou are the BG-WORKER.\n";

async fn mock(parent: Value, sub: Value) -> MockServer {
    let script = json!({"turns": parent, "model_turns": {"bg-model": sub}});
    let script = Script::from_json(&script.to_string()).expect("script");
    MockServer::start(Mode::Scripted(script)).await.expect("mock")
}

fn setup() -> Env {
    let env = env();
    let agents = env.workspace.join(".lathe/agents");
    std::fs::create_dir_all(&agents).expect("agents");
    std::fs::write(agents.join("worker.md"), WORKER).expect("agent");
    std::fs::write(env.workspace.join("notes.txt"), "hello\n").expect("file");
    env
}

fn background_task(id: &str, prompt: &str) -> Value {
    json!({"tool_calls": [{"id": id, "name": "task", "arguments": {
        "description": "survey", "prompt": prompt, "subagent_type": "worker", "run_in_background": true}}]})
}

fn shell(id: &str, command: &str) -> Value {
    json!({"tool_calls": [{"id": id, "name": "shell", "arguments": {"command": command}}]})
}

fn by_model<'a>(requests: &'a [LoggedRequest], model: &str) -> Vec<&'a LoggedRequest> {
    requests.iter().filter(|request| request.body["model"] == model).collect()
}

/// The `<task-notification>` blocks of a request's user-side text.
fn notifications(request: &LoggedRequest) -> Vec<String> {
    let mut out = Vec::new();
    for message in request.body["messages"].as_array().into_iter().flatten() {
        for block in message["content"].as_array().into_iter().flatten() {
            if let Some(text) = block["text"].as_str().filter(|text| text.starts_with("<task-notification>"))
            {
                out.push(text.to_string());
            }
        }
    }
    out
}

fn strip_cache_control(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove("cache_control");
            map.values_mut().for_each(strip_cache_control);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_cache_control),
        _ => {}
    }
}

fn session_file(home: &Path) -> String {
    let found: Vec<_> = session_files(home)
        .into_iter()
        .filter(|path| !path.to_string_lossy().contains("subagents"))
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    std::fs::read_to_string(&found[0]).expect("session file")
}

fn transcript(home: &Path, id: &str) -> String {
    let path = session_files(home)
        .into_iter()
        .find(|path| path.ends_with(format!("subagents/{id}.jsonl")))
        .unwrap_or_else(|| panic!("no transcript {id}"));
    std::fs::read_to_string(path).expect("transcript")
}

#[tokio::test]
async fn a_background_sub_agent_runs_beside_the_parent_and_its_report_reaches_the_next_request() {
    let env = setup();
    let wait = format!(
        "until grep -qs BG-REPORT /dev/null $(find '{}' -name worker-call_bg.jsonl); do sleep 0.05; done; sleep 0.3",
        env.home.display()
    );
    let server = mock(
        json!([
            background_task("call_bg", "BG-JOB survey the notes"),
            {"tool_calls": [{"id": "out1", "name": "task_output", "arguments": {"id": "worker-call_bg"}}],
             "first_byte_delay_ms": 600},
            {"tool_calls": [{"id": "glob1", "name": "glob", "arguments": {"pattern": "*"}}], "first_byte_delay_ms": 600},
            shell("wait1", &wait),
            {"text": "PARENT-DONE"}
        ]),
        json!([{"text": "BG-REPORT: notes.txt says hello", "first_byte_delay_ms": 4000,
                "usage": {"input_tokens": 500, "output_tokens": 20}}]),
    )
    .await;
    let out = output(lathe(&env, &server.url(), &["--model", "parent-model", "--yolo", "-p", "go"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "PARENT-DONE");
    let requests = server.requests();
    let (parent, sub) = (by_model(&requests, "parent-model"), by_model(&requests, "bg-model"));
    assert_eq!((parent.len(), sub.len()), (5, 1));
    assert!(sub[0].body["system"][0]["text"].as_str().unwrap_or_default().contains("BG-WORKER"));
    let end = sub[0].response_end_ms.expect("the sub-agent's answer ended");
    // Its request was in flight while the parent made two more requests (the parent's answers
    // take 0.6 s each, the sub-agent's 4 s, so a slow start of either does not change the order).
    let times: Vec<f64> = parent.iter().map(|request| request.received_ms).collect();
    let span = (sub[0].received_ms, end);
    assert!(span.0 < times[2] && times[3] < end, "{times:?} vs {span:?}");
    let started = tool_result_text(&parent[1].body);
    assert!(started.contains("Started the background sub-agent `worker-call_bg`"), "{started}");
    let progress = tool_result_text(&parent[2].body);
    assert!(progress.contains("worker-call_bg (worker: survey) is still running"), "{progress}");
    for request in &parent[..4] {
        assert!(!request.body.to_string().contains("BG-REPORT"), "no report before it finished");
    }
    let delivered = notifications(parent[4]);
    assert_eq!(delivered.len(), 1, "{delivered:?}");
    assert!(delivered[0].contains("id: worker-call_bg") && delivered[0].contains("status: completed"));
    assert!(delivered[0].contains("report:\nBG-REPORT: notes.txt says hello"), "{}", delivered[0]);
    assert!(delivered[0].contains("500 input tokens"), "{}", delivered[0]);
    let ledger = session_file(&env.home);
    assert!(ledger.contains(r#""meta":"subagent_started""#) && ledger.contains(r#""meta":"subagent_ended""#));

    // The resumed session sends the delivered report once, and no note that it did not finish.
    let resumed = mock(json!([{"text": "again"}]), json!([])).await;
    let args = ["--model", "parent-model", "--continue", "-p", "and now?"];
    let out = output(lathe(&env, &resumed.url(), &args)).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = resumed.requests();
    assert_eq!(notifications(&requests[0]).len(), 1);
    assert!(!requests[0].body.to_string().contains("did not finish"));
}

/// The sub-agent writes its shell's pid and sleeps; the parent waits for the pid file.
fn sleeper_script(parent_after: Value) -> (Value, Value) {
    let mut parent = vec![
        background_task("call_bg", "BG-JOB sleep"),
        shell("wait1", "until [ -s sub.pid ]; do sleep 0.05; done; cat sub.pid"),
    ];
    parent.extend(parent_after.as_array().cloned().unwrap_or_default());
    let sub = json!([
        shell("sub_sleep", "echo $$ > sub.pid; exec sleep 30"),
        {"text": "BG-REPORT never sent"}
    ]);
    (Value::Array(parent), sub)
}

#[tokio::test]
async fn the_run_ending_while_a_background_sub_agent_runs_stops_it_and_says_so() {
    let env = setup();
    let (parent, sub) = sleeper_script(json!([{"text": "PARENT-DONE"}]));
    let server = mock(parent, sub).await;
    let out = output(lathe(&env, &server.url(), &["--model", "parent-model", "--yolo", "-p", "go"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "PARENT-DONE");
    let err = stderr(&out);
    assert!(err.contains("background sub-agent worker-call_bg (worker: survey) was still running when the session ended; it was stopped"), "{err}");
    let pid = std::fs::read_to_string(env.workspace.join("sub.pid")).expect("pid").trim().to_string();
    assert!(process_gone(&pid), "the sub-agent's command {pid} survived");
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(by_model(&server.requests(), "bg-model").len(), 1, "no sub-agent request after the exit");
    let own = transcript(&env.home, "worker-call_bg");
    assert!(own.contains(r#""call_id":"sub_sleep""#), "its call has a result: {own}");
}

#[tokio::test]
async fn sigterm_stops_a_background_sub_agent_and_the_resumed_session_says_it_did_not_finish() {
    let env = setup();
    let (parent, sub) = sleeper_script(json!([shell("long", "sleep 30"), {"text": "never"}]));
    let server = mock(parent, sub).await;
    let mut command = lathe(&env, &server.url(), &["--model", "parent-model", "--yolo", "-p", "go"]);
    let child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("lathe");
    let pid_file = env.workspace.join("sub.pid");
    while by_model(&server.requests(), "parent-model").len() < 3 || !pid_file.exists() {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    // SIGTERM while the parent waits on its own command and the sub-agent on its.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let status = std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
    assert!(status.expect("kill").success());
    let out =
        tokio::task::spawn_blocking(move || child.wait_with_output()).await.expect("join").expect("wait");
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    assert!(stderr(&out).contains("was still running when the session ended"), "{}", stderr(&out));
    let pid = std::fs::read_to_string(&pid_file).expect("pid").trim().to_string();
    assert!(process_gone(&pid), "the sub-agent's command {pid} survived");
    assert_eq!(by_model(&server.requests(), "bg-model").len(), 1);

    let resumed = mock(json!([{"text": "ok"}]), json!([])).await;
    let args = ["--model", "parent-model", "--continue", "-p", "what happened?"];
    let out = output(lathe(&env, &resumed.url(), &args)).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("background sub-agent worker-call_bg (worker: survey) did not finish"));
    let notes = notifications(&resumed.requests()[0]);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("status: lost") && notes[0].contains("did not finish"), "{}", notes[0]);
}

#[tokio::test]
async fn task_kill_stops_a_running_sub_agent_and_an_unknown_id_is_a_clear_error() {
    let env = setup();
    let (parent, sub) = sleeper_script(json!([
        {"tool_calls": [
            {"id": "kill1", "name": "task_kill", "arguments": {"id": "worker-call_bg"}},
            {"id": "out_bad", "name": "task_output", "arguments": {"id": "nope"}}]},
        {"tool_calls": [{"id": "out2", "name": "task_output", "arguments": {"id": "worker-call_bg"}}]},
        {"text": "PARENT-DONE"}
    ]));
    let server = mock(parent, sub).await;
    let out = output(lathe(&env, &server.url(), &["--model", "parent-model", "--yolo", "-p", "go"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    let parent = by_model(&requests, "parent-model");
    assert_eq!(parent.len(), 5);
    let results = tool_result_text(&parent[3].body);
    assert!(results.contains("worker-call_bg was stopped after"), "{results}");
    assert!(
        results.contains("no background sub-agent has the id `nope`; the ids are: worker-call_bg"),
        "{results}"
    );
    let after = tool_result_text(&parent[4].body);
    assert!(after.contains("worker-call_bg (worker: survey) killed"), "{after}");
    assert!(notifications(parent[4]).is_empty(), "a killed sub-agent is not notified");
    assert!(!stderr(&out).contains("was still running when the session ended"), "{}", stderr(&out));
    let pid = std::fs::read_to_string(env.workspace.join("sub.pid")).expect("pid").trim().to_string();
    assert!(process_gone(&pid), "the killed sub-agent's command {pid} survived");
    assert_eq!(by_model(&requests, "bg-model").len(), 1);
    let own = transcript(&env.home, "worker-call_bg");
    assert!(own.contains(r#""call_id":"sub_sleep""#) && own.contains("interrupted"), "{own}");
    assert!(session_file(&env.home).contains(r#""status":"killed""#));
}

#[tokio::test]
async fn a_fork_starts_with_its_parents_request_byte_for_byte_and_cannot_fork_again() {
    let env = setup();
    let fork_call = |id: &str| json!({"id": id, "name": "task", "arguments": {"description": "check", "prompt": "FORK-JOB check notes", "fork": true}});
    let server = MockServer::start(Mode::Scripted(
        Script::from_json(
            &json!({"turns": [
                {"tool_calls": [{"id": "g0", "name": "glob", "arguments": {"pattern": "*"}}],
                 "usage": {"input_tokens": 900, "output_tokens": 5}},
                {"text": "Forking.", "tool_calls": [fork_call("call_f")],
                 "usage": {"input_tokens": 1000, "output_tokens": 9, "cache_creation_input_tokens": 900}},
                {"tool_calls": [fork_call("again")],
                 "usage": {"input_tokens": 50, "output_tokens": 9, "cache_read_input_tokens": 1000}},
                {"text": "FORK-REPORT notes are fine", "usage": {"input_tokens": 60, "output_tokens": 5}},
                {"text": "PARENT-DONE"}
            ]})
            .to_string(),
        )
        .expect("script"),
    ))
    .await
    .expect("mock");
    let args = ["--model", "parent-model", "-p", "go", "--output-format", "stream-json"];
    let out = output(lathe(&env, &server.url(), &args)).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    let (parent, fork) = (&requests[1].body, &requests[2].body);
    assert_eq!(fork["system"], parent["system"], "the same system blocks, breakpoints included");
    assert_eq!(fork["tools"], parent["tools"], "the same tools");
    assert_eq!(fork["model"], parent["model"]);
    let (mut parent_messages, mut fork_messages) = (parent["messages"].clone(), fork["messages"].clone());
    strip_cache_control(&mut parent_messages);
    strip_cache_control(&mut fork_messages);
    let (parent_messages, fork_messages) =
        (parent_messages.as_array().expect("messages"), fork_messages.as_array().expect("messages"));
    assert_eq!(fork_messages[..parent_messages.len()], parent_messages[..], "the parent's messages first");
    let rest = &fork_messages[parent_messages.len()..];
    assert_eq!(rest.len(), 2, "{rest:?}");
    assert_eq!(rest[0]["role"], "assistant");
    assert_eq!(rest[0]["content"][1]["id"], "call_f");
    assert_eq!(rest[1]["content"][0]["tool_use_id"], "call_f");
    let directive = rest[1]["content"][1]["text"].as_str().unwrap_or_default();
    assert!(directive.contains("<fork-directive>") && directive.contains("Task: FORK-JOB check notes"));
    assert!(directive.contains("under 500 words"), "{directive}");

    let refused = tool_result_text(&requests[3].body);
    assert!(refused.contains("a fork cannot use this tool"), "{refused}");
    let report = tool_result_text(&requests[4].body);
    assert!(report.contains("FORK-REPORT notes are fine"), "{report}");
    assert!(
        !requests[4].body.to_string().contains("fork-directive"),
        "the fork's conversation stays its own"
    );
    let lines = json_lines(&out);
    let result = lines.last().expect("result");
    assert_eq!(result["usage"]["cache_read_tokens"], 1000, "the fork's cache reads count");
}
