//! MCP servers through `lathe -p` against `lathe-mock`, with real servers from npm
//! (scripts/install-test-deps.sh): tool lists and calls reach the model, broken servers leave the
//! session working with a warning, hanging calls are cancelled, servers end with the session.

use std::time::Duration;

use serde_json::{Value, json};

use super::support::*;

fn mcp_file(env: &Env, servers: Value) -> String {
    env.write_json("mcp.json", &json!({"mcpServers": servers})).display().to_string()
}

#[tokio::test]
async fn stdio_server_tools_are_offered_and_a_call_result_reaches_the_model() {
    let env = env();
    let config = mcp_file(&env, json!({"everything": everything_stdio()}));
    let server = scripted(json!([
        call("c1", "mcp__everything__echo", json!({"message": "hello from the model"})),
        call("c2", "mcp__everything__get-tiny-image", json!({})),
        {"text": "done"}
    ]))
    .await;
    let out = output(lathe(
        &env,
        &server.url(),
        &["-p", "use mcp", "--mcp-config", &config, "--output-format", "stream-json"],
    ))
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = json_lines(&out);
    assert_eq!(warnings(&lines), Vec::<String>::new());
    assert!(lines[0]["tools"].as_array().is_some_and(|t| t.iter().any(|n| n == "mcp__everything__echo")));

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let first = &requests[0].body;
    let tools = offered_tools(first);
    assert!(
        tools.contains(&"read_file".to_string()) && tools.contains(&"mcp__everything__echo".to_string()),
        "{tools:?}"
    );
    let echo = first["tools"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["name"] == "mcp__everything__echo"))
        .expect("echo");
    assert_eq!(echo["input_schema"]["properties"]["message"]["type"], "string");
    assert_eq!(echo["description"], "Echoes back the input string");
    // Read-only tools run in the default permission mode.
    assert!(
        tool_result_text(&requests[1].body).contains("Echo: hello from the model"),
        "{}",
        requests[1].body
    );
    let image = requests[2].body["messages"].to_string();
    assert!(image.contains("image/png") && image.contains("\"type\":\"image\""), "{image}");
}

#[tokio::test]
async fn streamable_http_server_with_a_header_from_the_environment() {
    let env = env();
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
    let child = std::process::Command::new(npm_bin("mcp-server-everything"))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let _guard = KillOnDrop(child);
    for _ in 0..400 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let config = mcp_file(
        &env,
        json!({"remote": {"type": "http", "url": format!("http://127.0.0.1:{port}/mcp"),
                          "headers": {"Authorization": "Bearer ${LATHE_TEST_MCP_TOKEN}"}}}),
    );
    let server =
        scripted(json!([call("c1", "mcp__remote__get-sum", json!({"a": 20, "b": 22})), {"text": "42"}]))
            .await;
    let mut command = lathe(&env, &server.url(), &["-p", "add", "--mcp-config", &config]);
    command.env("LATHE_TEST_MCP_TOKEN", "t0ken");
    let out = output(command).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    assert!(offered_tools(&requests[0].body).contains(&"mcp__remote__get-sum".to_string()));
    assert!(tool_result_text(&requests[1].body).contains("42"), "{}", requests[1].body);
}

struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn a_mutating_mcp_tool_asks_in_default_mode_and_runs_under_yolo() {
    let env = env();
    let fs =
        json!({"command": npm_bin("mcp-server-filesystem"), "args": [env.workspace.display().to_string()]});
    let config = mcp_file(&env, json!({"fs": fs}));
    let target = env.workspace.join("note.txt");
    let write = call(
        "c1",
        "mcp__fs__write_file",
        json!({"path": target.display().to_string(), "content": "from mcp"}),
    );

    let server = scripted(json!([write.clone(), {"text": "could not"}])).await;
    let out = output(lathe(
        &env,
        &server.url(),
        &["-p", "write", "--mcp-config", &config, "--output-format", "stream-json"],
    ))
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = tool_results(&json_lines(&out));
    assert_eq!(results[0]["status"], "denied", "{results:?}");
    assert!(results[0]["output"].as_str().is_some_and(|o| o.contains("permission denied")), "{results:?}");
    assert!(!target.exists());

    let server = scripted(json!([write, call("c2", "mcp__fs__read_text_file", json!({"path": target.display().to_string()})), {"text": "ok"}])).await;
    let out = output(lathe(&env, &server.url(), &["-p", "write", "--mcp-config", &config, "--yolo"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&target).expect("written"), "from mcp");
    assert!(tool_result_text(&server.requests()[2].body).contains("from mcp"));
}

#[tokio::test]
async fn allow_and_deny_rules_name_mcp_servers_and_tools() {
    let env = env();
    let fs =
        json!({"command": npm_bin("mcp-server-filesystem"), "args": [env.workspace.display().to_string()]});
    let config = mcp_file(&env, json!({"fs": fs}));
    let target = env.workspace.join("note.txt");
    let write = call(
        "c1",
        "mcp__fs__write_file",
        json!({"path": target.display().to_string(), "content": "allowed by a rule"}),
    );
    let mkdir = call(
        "c2",
        "mcp__fs__create_directory",
        json!({"path": env.workspace.join("made").display().to_string()}),
    );
    let run = async |permissions: Value| {
        env.write_json("ws/.lathe/settings.json", &json!({"permissions": permissions}));
        let _ = std::fs::remove_file(&target);
        let server = scripted(json!([write.clone(), mkdir.clone(), {"text": "done"}])).await;
        let out = output(lathe(
            &env,
            &server.url(),
            &["-p", "write", "--mcp-config", &config, "--output-format", "stream-json"],
        ))
        .await;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        tool_results(&json_lines(&out))
    };

    // A rule naming one tool allows that tool only; the other still asks (headless: denied).
    let results = run(json!({"allow": ["mcp__fs__write_file"]})).await;
    assert_eq!(results[0]["status"], "completed", "{results:?}");
    assert!(
        results[0]["decision"].as_str().is_some_and(|d| d.contains("mcp__fs__write_file")),
        "{results:?}"
    );
    assert_eq!(std::fs::read_to_string(&target).expect("written"), "allowed by a rule");
    assert_eq!(results[1]["status"], "denied", "{results:?}");
    assert!(results[1]["output"].as_str().is_some_and(|o| o.contains("permission denied")), "{results:?}");
    assert!(!env.workspace.join("made").exists());

    // A rule naming the server allows all its tools; a deny rule for one tool still wins.
    let results = run(json!({"allow": ["mcp__fs"], "deny": ["mcp__fs__create_directory"]})).await;
    assert_eq!(results[0]["status"], "completed", "{results:?}");
    assert_eq!(std::fs::read_to_string(&target).expect("written"), "allowed by a rule");
    assert_eq!(results[1]["status"], "denied", "{results:?}");
    assert!(results[1]["output"].as_str().is_some_and(|o| o.contains("is denied by")), "{results:?}");
    assert!(!env.workspace.join("made").exists());
}

#[tokio::test]
async fn servers_that_are_missing_exit_at_once_or_hang_leave_the_session_working() {
    let env = env();
    // The default limit (10 s): a shorter one would fail server-everything on a loaded machine.
    let config = mcp_file(
        &env,
        json!({
            "missing": {"command": "/no/such/mcp-server"},
            "quits": {"command": "sh", "args": ["-c", "echo 'cannot open database' >&2; exit 1"]},
            "hangs": {"command": "sleep", "args": ["60"]},
            "everything": everything_stdio()
        }),
    );
    let server =
        scripted(json!([call("c1", "mcp__everything__echo", json!({"message": "alive"})), {"text": "fine"}]))
            .await;
    let started = std::time::Instant::now();
    let out = output(lathe(
        &env,
        &server.url(),
        &["-p", "go", "--mcp-config", &config, "--output-format", "stream-json"],
    ))
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = json_lines(&out);
    let warnings = warnings(&lines);
    assert_eq!(warnings.len(), 3, "{warnings:#?}");
    assert!(
        warnings[0].contains("`missing` failed to start: cannot run `/no/such/mcp-server`"),
        "{warnings:#?}"
    );
    assert!(
        warnings[1].contains("`quits` failed to start") && warnings[1].contains("cannot open database"),
        "{warnings:#?}"
    );
    assert!(
        warnings[2].contains("`hangs` failed to start: did not finish starting within 10000 ms"),
        "{warnings:#?}"
    );
    assert!(tool_result_text(&server.requests()[1].body).contains("Echo: alive"));
    assert!(started.elapsed() < Duration::from_secs(60), "the hanging server held the session");
}

#[tokio::test]
async fn a_hanging_tool_call_is_cancelled_at_its_timeout() {
    let env = env();
    env.config("[mcp]\ntool_timeout_ms = 1000");
    let config = mcp_file(&env, json!({"everything": everything_stdio()}));
    let server = scripted(json!([
        call("c1", "mcp__everything__trigger-long-running-operation", json!({"duration": 120, "steps": 120})),
        {"text": "it timed out"}
    ]))
    .await;
    let out = output(lathe(
        &env,
        &server.url(),
        &["-p", "wait", "--mcp-config", &config, "--output-format", "stream-json"],
    ))
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = tool_results(&json_lines(&out));
    assert_eq!(results[0]["status"], "interrupted", "{results:?}");
    assert!(results[0]["elapsed_ms"].as_u64().is_some_and(|ms| (1000..60_000).contains(&ms)), "{results:?}");
    assert!(tool_result_text(&server.requests()[1].body).contains("timed out after 1000 ms"));
}

#[tokio::test]
async fn project_servers_are_skipped_headless_until_approved_or_trusted() {
    let env = env();
    env.write_json("ws/.mcp.json", &json!({"mcpServers": {"proj": everything_stdio()}}));
    let server = scripted(json!([{"text": "a"}, {"text": "b"}, {"text": "c"}])).await;
    let out = output(lathe(&env, &server.url(), &["-p", "hi", "--output-format", "stream-json"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let warnings = warnings(&json_lines(&out));
    assert!(
        warnings.iter().any(|w| w.contains("skipped because they are not approved: proj")),
        "{warnings:?}"
    );
    assert!(!offered_tools(&server.requests()[0].body).iter().any(|t| t.starts_with("mcp__proj__")));

    // A project config cannot trust itself.
    std::fs::create_dir_all(env.workspace.join(".lathe")).expect("dir");
    std::fs::write(env.workspace.join(".lathe/config.toml"), "trust_project_mcp = true\n").expect("config");
    let out = output(lathe(&env, &server.url(), &["-p", "hi"])).await;
    assert!(stderr(&out).contains("ignored trust_project_mcp"), "{}", stderr(&out));
    assert!(!offered_tools(&server.requests()[1].body).iter().any(|t| t.starts_with("mcp__proj__")));

    env.config("trust_project_mcp = true");
    let out = output(lathe(&env, &server.url(), &["-p", "hi"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(offered_tools(&server.requests()[2].body).contains(&"mcp__proj__echo".to_string()));
}

#[tokio::test]
async fn lathe_mcp_approve_then_list_shows_status_and_tool_counts() {
    let env = env();
    env.write_json(
        "ws/.mcp.json",
        &json!({"mcpServers": {"proj": everything_stdio(), "gone": {"command": "/no/such/server"}}}),
    );
    let list = |env: &Env| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_lathe"));
        command
            .args(["mcp", "list", "-C"])
            .arg(&env.workspace)
            .env("LATHE_HOME", &env.home)
            .env("HOME", &env.root);
        command
    };
    let before = output(list(&env)).await;
    let text = String::from_utf8_lossy(&before.stdout).into_owned();
    assert!(text.lines().any(|l| l.starts_with("proj") && l.contains("needs approval")), "{text}");

    let mut approve = std::process::Command::new(env!("CARGO_BIN_EXE_lathe"));
    approve.args(["mcp", "approve", "proj", "-C"]).arg(&env.workspace).env("LATHE_HOME", &env.home);
    let approved = output(approve).await;
    assert_eq!(approved.status.code(), Some(0), "{}", stderr(&approved));

    let after = output(list(&env)).await;
    assert_eq!(after.status.code(), Some(0), "{}", stderr(&after));
    let text = String::from_utf8_lossy(&after.stdout).into_owned();
    let proj = text.lines().find(|l| l.starts_with("proj")).expect("proj line");
    assert!(
        proj.contains("stdio") && proj.contains("project") && proj.contains("connected · 13 tools"),
        "{text}"
    );
    assert!(text.lines().any(|l| l.starts_with("gone") && l.contains("needs approval")), "{text}");
}

#[tokio::test]
async fn bad_config_garbage_on_stdout_and_an_invalid_schema_leave_the_rest_working() {
    let env = env();
    std::fs::write(env.home.join("mcp.json"), "{\"mcpServers\": {\"x\": ").expect("bad json");
    let config = mcp_file(
        &env,
        json!({"odd": odd_server(true), "pigeon": {"type": "pigeon", "url": "coo://"}, "everything": everything_stdio()}),
    );
    let server =
        scripted(json!([call("c1", "mcp__odd__good", json!({"text": "still works"})), {"text": "ok"}])).await;
    let out = output(lathe(
        &env,
        &server.url(),
        &["-p", "go", "--yolo", "--mcp-config", &config, "--output-format", "stream-json"],
    ))
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let all = warnings(&json_lines(&out)).join("\n");
    assert!(all.contains("mcp.json: not valid JSON"), "{all}");
    assert!(all.contains("unknown transport \"type\": \"pigeon\""), "{all}");
    assert!(all.contains("tool `broken` left out: its input schema is not valid JSON Schema"), "{all}");
    let tools = offered_tools(&server.requests()[0].body);
    assert!(
        tools.contains(&"mcp__odd__good".to_string()) && tools.contains(&"mcp__everything__echo".to_string())
    );
    assert!(!tools.contains(&"mcp__odd__broken".to_string()));
    let seen = tool_result_text(&server.requests()[1].body);
    assert!(seen.contains("good: still works"), "{seen}");
}

#[tokio::test]
async fn a_missing_mcp_config_file_is_a_usage_error() {
    let env = env();
    let out =
        output(lathe(&env, "http://127.0.0.1:9", &["-p", "hi", "--mcp-config", "/no/such/mcp.json"])).await;
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--mcp-config /no/such/mcp.json"), "{err}");
}

#[tokio::test]
async fn stdio_servers_end_with_the_session() {
    let env = env();
    let pid_file = env.root.join("server.pid");
    let script = format!("echo $$ > {}; exec {} stdio", pid_file.display(), npm_bin("mcp-server-everything"));
    let config = mcp_file(&env, json!({"everything": {"command": "sh", "args": ["-c", script]}}));
    let server = scripted(json!([{"text": "bye"}])).await;
    let out = output(lathe(&env, &server.url(), &["-p", "hi", "--mcp-config", &config])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let pid = std::fs::read_to_string(&pid_file).expect("pid").trim().to_string();
    for _ in 0..250 {
        if process_gone(&pid) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(process_gone(&pid), "MCP server {pid} outlived the session");
    let log = std::fs::read_to_string(env.home.join("mcp-logs/everything.log")).expect("stderr log");
    assert!(log.contains("Starting default (STDIO) server"), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_during_an_mcp_call_cancels_it_and_exits() {
    let env = env();
    let config = mcp_file(&env, json!({"everything": everything_stdio()}));
    let server = scripted(json!([
        call("c1", "mcp__everything__trigger-long-running-operation", json!({"duration": 120, "steps": 120})),
        {"text": "never"}
    ]))
    .await;
    let mut command = lathe(
        &env,
        &server.url(),
        &["-p", "wait", "--mcp-config", &config, "--output-format", "stream-json"],
    );
    command.stdout(std::process::Stdio::piped());
    let mut child = command.spawn().expect("spawn");
    let sessions = env.home.join("sessions");
    // Wait until the call is under way: the session file records the assistant's tool call.
    let mut waited = 0;
    loop {
        let text = std::fs::read_dir(&sessions)
            .ok()
            .and_then(|mut dirs| dirs.next())
            .and_then(|dir| dir.ok())
            .and_then(|dir| std::fs::read_dir(dir.path()).ok()?.next()?.ok())
            .and_then(|file| std::fs::read_to_string(file.path()).ok())
            .unwrap_or_default();
        if text.contains("trigger-long-running-operation") {
            break;
        }
        waited += 1;
        assert!(waited < 1000, "the call never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let status =
        std::process::Command::new("kill").arg("-INT").arg(child.id().to_string()).status().expect("kill");
    assert!(status.success());
    let mut code = None;
    for _ in 0..250 {
        if let Some(status) = child.try_wait().expect("wait") {
            code = status.code();
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    if code.is_none() {
        let _ = child.kill();
    }
    assert_eq!(code, Some(130), "lathe did not exit within 5 s of SIGINT");
    let mut stdout = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut().expect("stdout"), &mut stdout).expect("read");
    let result = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|l| l["type"] == "tool_result");
    assert_eq!(result.expect("tool_result")["status"], "interrupted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_mcp_in_the_terminal_ui_shows_what_lathe_mcp_list_shows() {
    let env = env();
    let config = mcp_file(
        &env,
        json!({"everything": everything_stdio(), "gone": {"command": env.root.join("no-such-server").display().to_string()}}),
    );
    let server = scripted(json!([])).await;
    let listed = output({
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_lathe"));
        command
            .args(["mcp", "list", "--mcp-config", &config, "-C"])
            .arg(&env.workspace)
            .env("LATHE_HOME", &env.home)
            .env("HOME", &env.root)
            .stderr(std::process::Stdio::null());
        command
    })
    .await;
    assert_eq!(listed.status.code(), Some(0));
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    let everything = listed.lines().find(|line| line.starts_with("everything")).expect("listed").to_string();
    assert!(everything.contains("connected · ") && everything.ends_with(" tools"), "{listed}");
    assert!(listed.lines().any(|line| line.starts_with("gone") && line.contains("failed")), "{listed}");

    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let script = env.root.join("pane.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nexport LATHE_HOME={home}\nexport HOME={root}\nunset ANTHROPIC_API_KEY OPENAI_API_KEY \
             LATHE_PROVIDER LATHE_MODEL LATHE_PERMISSION_MODE CLAUDE_CONFIG_DIR MCP_TIMEOUT MCP_TOOL_TIMEOUT\n\
             cd {ws}\n{lathe} --provider anthropic --base-url {url} --mcp-config {config}\n\
             echo \"lathe exited with status $?\"\nexec sleep 600\n",
            home = quote(&env.home.display().to_string()),
            root = quote(&env.root.display().to_string()),
            ws = quote(&env.workspace.display().to_string()),
            lathe = quote(env!("CARGO_BIN_EXE_lathe")),
            url = quote(&server.url()),
            config = quote(&config),
        ),
    )
    .expect("script");
    assert!(std::process::Command::new("chmod").arg("+x").arg(&script).status().expect("chmod").success());
    let dir = env.root.clone();
    tokio::task::spawn_blocking(move || {
        let wait = Duration::from_secs(30);
        let pane = super::tmux::Tmux::start(&dir, 140, 30, &script);
        pane.wait_for("claude-sonnet-4-5 · default", wait);
        pane.type_text("/mcp");
        pane.wait_for("/mcp  MCP servers", wait);
        pane.keys(&["Enter"]);
        // The completion popup also says "MCP servers": wait for the listing itself.
        let shown = pane.wait_for(&everything, wait);
        assert!(shown.contains(&everything), "{shown}");
        assert!(shown.lines().any(|line| line.contains("gone") && line.contains("failed")), "{shown}");
        pane.type_text("/quit");
        pane.keys(&["Enter"]);
        let after = pane.wait_for("lathe exited with status", wait);
        assert!(after.contains("lathe exited with status 0"), "{after}");
    })
    .await
    .expect("scenario");
}

#[tokio::test]
async fn an_http_server_that_went_away_is_said_to_be_gone_once_in_words_then_never_called_again() {
    let env = env();
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
    let child = std::process::Command::new(npm_bin("mcp-server-everything"))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let pid = child.id();
    let _guard = KillOnDrop(child);
    for _ in 0..400 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let config =
        mcp_file(&env, json!({"remote": {"type": "http", "url": format!("http://127.0.0.1:{port}/mcp")}}));
    let sum = |id: &str| call(id, "mcp__remote__get-sum", json!({"a": 20, "b": 22}));
    let server = scripted(json!([
        sum("c1"),
        call("c2", "shell", json!({"command": format!("kill {pid}; sleep 1")})),
        sum("c3"),
        sum("c4"),
        {"text": "done"}
    ]))
    .await;
    let out = output(lathe(&env, &server.url(), &["-p", "add", "--yolo", "--mcp-config", &config])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    let third = tool_result_text(&requests[3].body);
    let fourth = tool_result_text(&requests[4].body);
    assert!(!third.contains("::") && !fourth.contains("::"), "no Rust type names: {third}\n{fourth}");
    assert!(third.contains("unavailable for the rest of this session"), "{third}");
    // Said to be gone once: the next call is answered without sending anything.
    assert!(fourth.contains("stopped answering earlier in this session"), "{fourth}");
}
