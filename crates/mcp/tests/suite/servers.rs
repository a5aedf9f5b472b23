//! Connections, tool lists, calls, failures and shutdown against real MCP servers.

use std::time::Duration;

use lathe_mcp::{McpCallError, McpConfig, McpStartup, McpTool, ServerStatus, Transport};
use lathe_protocol::Content;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::support::*;

fn tool<'a>(tools: &'a [McpTool], name: &str) -> &'a McpTool {
    tools.iter().find(|t| t.name == name).unwrap_or_else(|| {
        panic!("no tool {name} in {:?}", tools.iter().map(|t| &t.name).collect::<Vec<_>>())
    })
}

#[tokio::test]
async fn stdio_server_everything_lists_and_calls_tools() {
    let dir = tempfile::tempdir().expect("tempdir");
    let servers = start(
        vec![server("everything", stdio(&npm_bin("mcp-server-everything"), &["stdio"]))],
        settings(dir.path()),
    )
    .await;
    assert_eq!(servers.warnings(), &[] as &[String]);
    let echo = tool(servers.tools(), "mcp__everything__echo");
    assert!(echo.read_only);
    assert_eq!(echo.input_schema["properties"]["message"]["type"], "string");
    assert!(echo.input_schema.get("$schema").is_none());
    assert!(matches!(servers.reports()[0].status, ServerStatus::Connected { tools } if tools >= 10));

    let cancel = CancellationToken::new();
    let out = echo.call(json!({"message": "hi there"}), &cancel).await.expect("echo");
    assert_eq!(out.content, vec![Content::text("Echo: hi there")]);
    assert!(!out.is_error);

    let image = tool(servers.tools(), "mcp__everything__get-tiny-image")
        .call(json!({}), &cancel)
        .await
        .expect("image");
    assert!(
        image
            .content
            .iter()
            .any(|c| matches!(c, Content::Image { media_type, .. } if media_type == "image/png"))
    );

    let sum = tool(servers.tools(), "mcp__everything__get-sum")
        .call(json!({"a": 2, "b": 3}), &cancel)
        .await
        .expect("sum");
    assert!(format!("{:?}", sum.content).contains('5'), "{:?}", sum.content);

    let bad = echo.call(json!({"message": 7}), &cancel).await.unwrap_err();
    assert!(matches!(&bad, McpCallError::InvalidArguments(m) if m.contains("/message")), "{bad:?}");

    // The server's stderr went to its log.
    let log = std::fs::read_to_string(dir.path().join("logs/everything.log")).expect("log");
    assert!(log.contains("Starting default (STDIO) server"), "{log}");
    servers.shutdown().await;
}

#[tokio::test]
async fn streamable_http_server_everything_lists_and_calls_tools() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_guard, url) = everything_http().await;
    let transport = Transport::Http {
        url,
        headers: [("Authorization".to_string(), "Bearer t0ken".to_string())].into_iter().collect(),
    };
    let servers = start(vec![server("remote", transport)], settings(dir.path())).await;
    assert_eq!(servers.warnings(), &[] as &[String]);
    let out = tool(servers.tools(), "mcp__remote__echo")
        .call(json!({"message": "over http"}), &CancellationToken::new())
        .await
        .expect("echo");
    assert_eq!(out.content, vec![Content::text("Echo: over http")]);
    servers.shutdown().await;
}

#[tokio::test]
async fn servers_that_are_missing_exit_or_hang_are_reported_and_the_rest_work() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut settings = settings(dir.path());
    settings.startup_timeout = Duration::from_secs(10);
    let servers = start(
        vec![
            server("missing", stdio("/no/such/mcp-server", &[])),
            server("quits", stdio("sh", &["-c", "echo 'fatal: no config' >&2; exit 3"])),
            server("hangs", stdio("sleep", &["60"])),
            server("everything", stdio(&npm_bin("mcp-server-everything"), &["stdio"])),
        ],
        settings,
    )
    .await;
    let warnings = servers.warnings().join("\n");
    assert_eq!(servers.warnings().len(), 3, "{warnings}");
    assert!(
        warnings.contains("`missing` failed to start: cannot run `/no/such/mcp-server`: no such program"),
        "{warnings}"
    );
    assert!(
        warnings.contains("`quits` failed to start") && warnings.contains("fatal: no config"),
        "{warnings}"
    );
    assert!(
        warnings.contains("`hangs` failed to start: did not finish starting within 10000 ms"),
        "{warnings}"
    );
    let echo = tool(servers.tools(), "mcp__everything__echo");
    let out = echo.call(json!({"message": "still here"}), &CancellationToken::new()).await.expect("echo");
    assert_eq!(out.content, vec![Content::text("Echo: still here")]);
    servers.shutdown().await;
}

#[tokio::test]
async fn garbage_on_stdout_and_an_invalid_schema_leave_the_rest_working() {
    let dir = tempfile::tempdir().expect("tempdir");
    let servers = start(vec![server("odd", odd_server(&[("ODD_GARBAGE", "1")]))], settings(dir.path())).await;
    let names: Vec<&str> = servers.tools().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, vec!["mcp__odd__good", "mcp__odd__fails"]);
    let warnings = servers.warnings().join("\n");
    assert!(
        warnings.contains("tool `broken` left out: its input schema is not valid JSON Schema"),
        "{warnings}"
    );
    let cancel = CancellationToken::new();
    let out =
        tool(servers.tools(), "mcp__odd__good").call(json!({"text": "ok"}), &cancel).await.expect("good");
    assert_eq!(out.content, vec![Content::text("good: ok")]);
    let failed = tool(servers.tools(), "mcp__odd__fails").call(json!({}), &cancel).await.expect("fails");
    assert!(failed.is_error);
    servers.shutdown().await;
}

#[tokio::test]
async fn a_hanging_call_is_cancelled_at_its_timeout_and_on_cancel() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut settings = settings(dir.path());
    settings.tool_timeout = Duration::from_millis(700);
    let servers =
        start(vec![server("everything", stdio(&npm_bin("mcp-server-everything"), &["stdio"]))], settings)
            .await;
    let long = tool(servers.tools(), "mcp__everything__trigger-long-running-operation");
    let args = json!({"duration": 60, "steps": 60});
    let error = long.call(args.clone(), &CancellationToken::new()).await.unwrap_err();
    assert!(
        matches!(&error, McpCallError::TimedOut { timeout, .. } if *timeout == Duration::from_millis(700))
    );
    assert!(
        error.to_string().contains("did not answer trigger-long-running-operation within 700 ms"),
        "{error}"
    );

    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    assert_eq!(long.call(args, &cancel).await.unwrap_err(), McpCallError::Cancelled);
    // The server is still usable after both.
    let echo = tool(servers.tools(), "mcp__everything__echo");
    assert!(echo.call(json!({"message": "x"}), &CancellationToken::new()).await.is_ok());
    servers.shutdown().await;
}

#[tokio::test]
async fn a_server_that_dies_mid_session_is_reported_once_per_call_site() {
    let dir = tempfile::tempdir().expect("tempdir");
    let servers =
        start(vec![server("odd", odd_server(&[("ODD_EXIT_AFTER", "1")]))], settings(dir.path())).await;
    let good = tool(servers.tools(), "mcp__odd__good");
    let cancel = CancellationToken::new();
    assert!(good.call(json!({"text": "1"}), &cancel).await.is_ok());
    let first = good.call(json!({"text": "2"}), &cancel).await.unwrap_err();
    assert!(matches!(first, McpCallError::ServerGone { first: true, .. }), "{first:?}");
    assert!(first.to_string().contains("MCP server `odd` is not running"), "{first}");
    let second = good.call(json!({"text": "3"}), &cancel).await.unwrap_err();
    assert!(matches!(second, McpCallError::ServerGone { first: false, .. }), "{second:?}");
}

#[tokio::test]
async fn shutdown_kills_the_stdio_server() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pid_file = dir.path().join("server.pid");
    let script = format!("echo $$ > {}; exec {} stdio", pid_file.display(), npm_bin("mcp-server-everything"));
    let servers =
        start(vec![server("everything", stdio("sh", &["-c", &script]))], settings(dir.path())).await;
    assert_eq!(servers.warnings(), &[] as &[String]);
    let pid = std::fs::read_to_string(&pid_file).expect("pid").trim().to_string();
    assert!(std::path::Path::new(&format!("/proc/{pid}")).exists());
    servers.shutdown().await;
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if stat.is_empty() || stat.split_whitespace().nth(2) == Some("Z") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "server {pid} still running after shutdown: {stat}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_restarted_http_server_answers_the_next_call_in_a_new_session() {
    // server-everything (the TypeScript SDK) refuses the old session with 400, not 404.
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_port();
    let mut first = everything_http_on(port).await;
    let transport =
        Transport::Http { url: format!("http://127.0.0.1:{port}/mcp"), headers: Default::default() };
    let mut settings = settings(dir.path());
    settings.tool_timeout = Duration::from_secs(30);
    let servers = start(vec![server("remote", transport)], settings).await;
    let echo = tool(servers.tools(), "mcp__remote__echo");
    let cancel = CancellationToken::new();
    echo.call(json!({"message": "one"}), &cancel).await.expect("first call");
    let _ = first.0.kill();
    let _ = first.0.wait();
    let _second = everything_http_on(port).await;
    let started = std::time::Instant::now();
    let answer = echo.call(json!({"message": "two"}), &cancel).await.expect("the call after the restart");
    assert_eq!(answer.content, vec![Content::text("Echo: two")]);
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    servers.shutdown().await;
}

/// The odd server, started a second late.
fn slow_odd_server() -> Transport {
    let Transport::Stdio { command, args, env } = odd_server(&[]) else { unreachable!("stdio") };
    Transport::Stdio {
        command: "sh".into(),
        args: vec!["-c".into(), format!("sleep 1; exec {command} {}", args.join(" "))],
        env,
    }
}

#[tokio::test]
async fn a_server_with_a_remembered_tool_list_starts_in_the_background_and_calls_wait_for_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut settings = settings(dir.path());
    settings.cache_dir = Some(dir.path().join("cache"));
    let config = || McpConfig { servers: vec![server("odd", slow_odd_server())], ..McpConfig::default() };

    // Never started before: waited for, and its list remembered.
    let first = McpStartup::start(config(), settings.clone()).session().await;
    assert!(matches!(first.reports()[0].status, ServerStatus::Connected { tools: 2 }), "{first:?}");
    first.shutdown().await;
    let saved: Vec<_> = std::fs::read_dir(dir.path().join("cache")).expect("cache").flatten().collect();
    assert_eq!(saved.len(), 1);

    // Remembered, with a tool the server no longer has: offered at once while the server starts.
    let path = saved[0].path();
    let mut listing: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).expect("read")).expect("json");
    listing["tools"]
        .as_array_mut()
        .expect("tools")
        .push(json!({"name": "vanished", "inputSchema": {"type": "object"}}));
    std::fs::write(&path, listing.to_string()).expect("write");
    let servers = McpStartup::start(config(), settings.clone()).session().await;
    assert!(matches!(servers.reports()[0].status, ServerStatus::Starting { tools: 3 }), "{servers:?}");
    assert!(servers.warnings().iter().all(|w| w.contains("`broken` left out")), "{:?}", servers.warnings());
    assert_eq!(servers.late_warnings(), Vec::<String>::new(), "nothing to say while it starts");
    let cancel = CancellationToken::new();
    let out =
        tool(servers.tools(), "mcp__odd__good").call(json!({"text": "waited"}), &cancel).await.expect("good");
    assert_eq!(out.content, vec![Content::text("good: waited")]);
    assert!(matches!(servers.reports()[0].status, ServerStatus::Connected { tools: 3 }));
    let gone = tool(servers.tools(), "mcp__odd__vanished").call(json!({}), &cancel).await.unwrap_err();
    assert!(gone.to_string().contains("does not offer this tool any more"), "{gone}");
    let late = servers.late_warnings();
    assert_eq!(late.len(), 1, "{late:?}");
    assert!(late[0].contains("`odd` changed its tools") && late[0].contains("gone: vanished"), "{late:?}");
    assert_eq!(servers.late_warnings(), Vec::<String>::new(), "said once");
    servers.shutdown().await;

    // Remembered, but it never comes up: a call fails once the start-up limit has passed.
    settings.startup_timeout = Duration::from_millis(300);
    let servers = McpStartup::start(config(), settings).session().await;
    let error =
        tool(servers.tools(), "mcp__odd__good").call(json!({"text": "x"}), &cancel).await.unwrap_err();
    assert!(
        matches!(&error, McpCallError::NotStarted { detail, .. } if detail.contains("did not finish starting within 300 ms")),
        "{error:?}"
    );
    assert!(servers.late_warnings()[0].contains("`odd` failed to start"));
    servers.shutdown().await;
}

/// The odd server, noting each start in `marker` first.
fn marking_odd_server(marker: &std::path::Path) -> Transport {
    let Transport::Stdio { command, args, env } = odd_server(&[]) else { unreachable!("stdio") };
    let note = format!("echo start >> '{}'", marker.display());
    Transport::Stdio {
        command: "sh".into(),
        args: vec!["-c".into(), format!("{note}; exec {command} {}", args.join(" "))],
        env,
    }
}

/// Polls `servers` until its one server is connected (at most 20 s).
async fn until_connected(servers: &lathe_mcp::McpServers) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !matches!(servers.reports()[0].status, ServerStatus::Connected { .. }) {
        assert!(std::time::Instant::now() < deadline, "{servers:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_remembered_server_is_not_started_before_the_session_launches_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("starts");
    let starts = || std::fs::read_to_string(&marker).unwrap_or_default().lines().count();
    let mut settings = settings(dir.path());
    settings.cache_dir = Some(dir.path().join("cache"));
    let config =
        || McpConfig { servers: vec![server("odd", marking_odd_server(&marker))], ..McpConfig::default() };

    // Never started before: started at once and waited for.
    let first = McpStartup::start(config(), settings.clone()).session().await;
    assert!(matches!(first.reports()[0].status, ServerStatus::Connected { .. }), "{first:?}");
    first.shutdown().await;
    assert_eq!(starts(), 1);

    // Remembered: its tools are offered, but nothing runs until the session launches it.
    let servers = McpStartup::start(config(), settings.clone()).session().await;
    assert!(matches!(servers.reports()[0].status, ServerStatus::Starting { tools: 2 }), "{servers:?}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(starts(), 1, "started before it was launched");
    servers.launch();
    until_connected(&servers).await;
    servers.launch();
    assert_eq!(starts(), 2, "launched once");
    servers.shutdown().await;

    // Launched after a delay (print mode's first request).
    let servers = McpStartup::start(config(), settings).session().await;
    servers.launch_after(Duration::from_millis(10));
    until_connected(&servers).await;
    assert_eq!(starts(), 3);
    servers.shutdown().await;
}
