//! Background shell jobs through the real binary against `lathe-mock`: a real HTTP server started
//! with `run_in_background`, read with `shell_output`, reached from a second `shell` call, ended by
//! `shell_kill` — and never outliving Lathe: not when the model forgets it, not when Lathe gets
//! SIGTERM, SIGINT or SIGHUP while it runs.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::support::*;

/// A port nothing listens on now (the OS picks it; the listener is closed again).
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).expect("bind");
    listener.local_addr().expect("address").port()
}

/// The command of a dev server: writes its pid, then becomes `python3 -m http.server` on `port`.
fn server_command(port: u16) -> String {
    format!("echo $$ > server.pid; exec python3 -u -m http.server {port} --bind 127.0.0.1")
}

fn start_server(port: u16) -> Value {
    call("c1", "shell", json!({"command": server_command(port), "run_in_background": true}))
}

/// Waits for the server's line that says it listens.
fn wait_until_serving() -> Value {
    call("c2", "shell_output", json!({"id": "job1", "filter": "Serving HTTP", "wait_ms": 20_000}))
}

fn listening(port: u16) -> bool {
    std::net::TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_secs(1)).is_ok()
}

/// The server's pid, as it wrote it.
fn server_pid(env: &Env) -> String {
    let pid = std::fs::read_to_string(env.workspace.join("server.pid")).expect("the server wrote its pid");
    pid.trim().to_string()
}

/// Waits up to 5 s for `pid` to be gone.
fn gone_soon(pid: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline && !process_gone(pid) {
        std::thread::sleep(Duration::from_millis(20));
    }
    process_gone(pid)
}

/// The text of the tool result for the `n`-th call (the request after it carries it).
fn result_of(server: &lathe_mock::MockServer, n: usize) -> String {
    let requests = server.requests();
    let body = &requests.get(n).unwrap_or_else(|| panic!("request {n} was sent")).body;
    let messages = body["messages"].as_array().expect("messages");
    let last = messages.last().expect("a last message");
    last["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|block| block["type"] == "tool_result")
        .map(|block| match &block["content"] {
            Value::String(text) => text.clone(),
            other => other.as_array().into_iter().flatten().filter_map(|b| b["text"].as_str()).collect(),
        })
        .collect()
}

#[tokio::test]
async fn a_background_server_is_read_reached_from_another_call_and_killed() {
    let env = env();
    let port = free_port();
    let fetch = format!(
        "if command -v curl >/dev/null; then curl -sS -o /dev/null -w 'status %{{http_code}}\\n' http://127.0.0.1:{port}/; \
         else python3 -c \"import urllib.request; print('status', urllib.request.urlopen('http://127.0.0.1:{port}/').status)\"; fi"
    );
    let server = scripted(json!([
        start_server(port),
        wait_until_serving(),
        call("c3", "shell", json!({"command": fetch})),
        call("c4", "shell_output", json!({"id": "job1", "filter": "GET / ", "wait_ms": 20_000})),
        call("c5", "shell_kill", json!({"id": "job1"})),
        call("c6", "shell_output", json!({"id": "job1"})),
        {"text": "done"}
    ]))
    .await;
    let out =
        output(lathe(&env, &server.url(), &["-p", "serve it", "--yolo", "--output-format", "stream-json"]))
            .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let started = result_of(&server, 1);
    assert!(started.starts_with("started job1 (pid "), "{started}");
    assert!(started.contains(&format!("in the background: {}", server_command(port))), "{started}");
    let serving = result_of(&server, 2);
    assert!(serving.starts_with("[job1 is running ("), "{serving}");
    assert!(serving.contains(&format!("Serving HTTP on 127.0.0.1 port {port}")), "{serving}");
    assert_eq!(result_of(&server, 3), "status 200\nexit code: 0");
    let logged = result_of(&server, 4);
    assert!(logged.contains("\"GET / HTTP/1.1\" 200"), "the server logged the request: {logged}");
    let killed = result_of(&server, 5);
    assert!(killed.starts_with("[job1 was stopped after "), "{killed}");
    let after = result_of(&server, 6);
    assert!(after.starts_with("[job1 was stopped after ") && after.ends_with("(no new output)"), "{after}");

    let pid = server_pid(&env);
    assert!(gone_soon(&pid), "the server {pid} outlived shell_kill");
    assert!(!listening(port), "port {port} is still open");
    let lines = json_lines(&out);
    assert_eq!(warnings(&lines), Vec::<String>::new(), "nothing was left to stop at the end");
}

#[tokio::test]
async fn a_job_the_model_never_stops_ends_with_the_session_also_when_the_provider_fails() {
    let failure = json!({"error": {"status": 500, "message": "the provider broke"}});
    for (last, code) in [(json!({"text": "left it running"}), 0), (failure, 3)] {
        let env = env();
        let port = free_port();
        let server = scripted(json!([start_server(port), wait_until_serving(), last])).await;
        let out = output(lathe(
            &env,
            &server.url(),
            &["-p", "serve it", "--yolo", "--output-format", "stream-json"],
        ))
        .await;
        assert_eq!(out.status.code(), Some(code), "{}", stderr(&out));
        assert!(result_of(&server, 2).contains("Serving HTTP"), "{}", result_of(&server, 2));
        let pid = server_pid(&env);
        assert!(process_gone(&pid), "exit {code}: the server {pid} outlived Lathe");
        assert!(!listening(port), "exit {code}: port {port} is still open after Lathe exited");
        let lines = json_lines(&out);
        assert_eq!(
            warnings(&lines),
            [format!(
                "stopped the background job still running at the end of the session: job1 ({})",
                server_command(port)
            )],
            "exit {code}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signal_to_lathe_ends_its_running_jobs() {
    for (signal, code) in [("TERM", 143), ("INT", 130), ("HUP", 129)] {
        let env = env();
        let port = free_port();
        let server = scripted(json!([
            start_server(port),
            wait_until_serving(),
            // The model takes its time: Lathe waits for it while the server runs.
            {"first_byte_delay_ms": 60_000, "text": "too late"}
        ]))
        .await;
        let mut command =
            lathe(&env, &server.url(), &["-p", "serve it", "--yolo", "--output-format", "stream-json"]);
        let events = env.root.join("events.jsonl");
        command.stdout(std::fs::File::create(&events).expect("events file")).stderr(Stdio::null());
        let mut child = command.spawn().expect("lathe starts");
        let deadline = Instant::now() + Duration::from_secs(30);
        while server.requests().len() < 3 {
            assert!(Instant::now() < deadline, "{signal}: the third request never came");
            assert!(child.try_wait().expect("wait").is_none(), "{signal}: lathe ended early");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let pid = server_pid(&env);
        assert!(listening(port), "{signal}: the server listens while Lathe runs");
        let sent = Command::new("kill").arg(format!("-{signal}")).arg(child.id().to_string()).status();
        assert!(sent.expect("kill runs").success());
        let deadline = Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait") {
                break status;
            }
            assert!(Instant::now() < deadline, "{signal}: lathe did not exit");
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        assert_eq!(status.code(), Some(code), "{signal}");
        assert!(process_gone(&pid), "{signal}: the server {pid} outlived Lathe");
        assert!(!listening(port), "{signal}: port {port} is still open after Lathe exited");
        let events = std::fs::read_to_string(&events).expect("events");
        let stopped =
            events.lines().filter_map(|line| serde_json::from_str::<Value>(line).ok()).any(|line| {
                line["type"] == "warning"
                    && line["message"]
                        .as_str()
                        .is_some_and(|m| m.starts_with("stopped the background job still running"))
            });
        assert!(stopped, "{signal}: the session did not say it stopped the job:\n{events}");
    }
}

#[tokio::test]
async fn a_background_command_gets_the_same_permission_decision_as_a_foreground_one() {
    let env = env();
    let port = free_port();
    let server = scripted(json!([start_server(port), {"text": "could not start it"}])).await;
    // Headless in the default mode: a command that is not read-only is denied, in the background too.
    let out = output(lathe(&env, &server.url(), &["-p", "serve it"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result = result_of(&server, 1);
    assert!(result.contains("denied"), "{result}");
    assert!(!env.workspace.join("server.pid").exists(), "the command ran");
    assert!(!listening(port));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_jobs_in_the_terminal_ui_lists_a_running_job_and_quitting_ends_it() {
    use super::tmux::Tmux;
    use super::tui::{SETTINGS_END, WAIT};
    let setup = super::tui::setup();
    let port = free_port();
    let server =
        super::tui::scripted(json!([start_server(port), wait_until_serving(), {"text": "The server runs."}]))
            .await;
    let script = super::tui::pane_script(&setup, &server, &["--yolo"]);
    let dir = setup.tmp.path().to_path_buf();
    tokio::task::spawn_blocking(move || {
        let pane = Tmux::start(&dir, 120, 32, &script);
        pane.wait_for("claude-sonnet-4-5", WAIT);
        pane.type_text("start the dev server");
        pane.keys(&["Enter"]);
        pane.wait_for("The server runs.", WAIT);
        pane.type_text("/jobs");
        pane.keys(&["Enter"]);
        let listed = pane.wait_for("background jobs (id, state, started ago, command):", WAIT);
        let row = listed.lines().find(|line| line.trim_start().starts_with("job1")).unwrap_or_default();
        assert!(row.trim_start().starts_with("job1  running  "), "{listed}");
        assert!(row.trim_end().ends_with(&server_command(port)), "{listed}");
        pane.type_text("/quit");
        pane.keys(&["Enter"]);
        let end = pane.wait_for(SETTINGS_END, WAIT);
        assert!(end.contains("lathe exited with status 0"), "{end}");
    })
    .await
    .expect("scenario");
    let pid = std::fs::read_to_string(setup.workspace.join("server.pid")).expect("pid");
    assert!(process_gone(pid.trim()), "the server {} outlived the terminal UI", pid.trim());
    assert!(!listening(port), "port {port} is still open after Lathe exited");
}
