//! Finding the MCP test servers installed by scripts/install-test-deps.sh.

use std::path::PathBuf;
use std::time::Duration;

use lathe_mcp::{McpConfig, McpServers, McpSettings, McpStartup, Scope, ServerConfig, Transport};

/// `.test-deps/npm` of the repository, or `$LATHE_TEST_DEPS/npm`.
pub fn npm_prefix() -> PathBuf {
    let base = std::env::var_os("LATHE_TEST_DEPS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.test-deps"));
    base.join("npm")
}

/// The installed executable `name` (`mcp-server-everything`); panics with the fix when missing.
pub fn npm_bin(name: &str) -> String {
    let path = npm_prefix().join("node_modules/.bin").join(name);
    assert!(
        path.is_file(),
        "the MCP test server {name} is not installed at {}: run scripts/install-test-deps.sh",
        path.display()
    );
    path.display().to_string()
}

/// The odd fixture server (run by node with the installed SDK).
pub fn odd_server(env: &[(&str, &str)]) -> Transport {
    let _ = npm_bin("mcp-server-everything");
    let mut vars: std::collections::BTreeMap<String, String> =
        env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    vars.insert("NODE_PATH".into(), npm_prefix().join("node_modules").display().to_string());
    Transport::Stdio {
        command: "node".into(),
        args: vec![format!("{}/tests/fixtures/odd-server.cjs", env!("CARGO_MANIFEST_DIR"))],
        env: vars,
    }
}

pub fn stdio(command: &str, args: &[&str]) -> Transport {
    Transport::Stdio {
        command: command.into(),
        args: args.iter().map(|a| a.to_string()).collect(),
        env: Default::default(),
    }
}

pub fn server(name: &str, transport: Transport) -> ServerConfig {
    ServerConfig { name: name.into(), transport, scope: Scope::Flag, source: "test".into() }
}

pub fn settings(dir: &std::path::Path) -> McpSettings {
    McpSettings {
        startup_timeout: Duration::from_secs(20),
        tool_timeout: Duration::from_secs(20),
        log_dir: dir.join("logs"),
        cwd: dir.to_path_buf(),
        cache_dir: None,
    }
}

pub async fn start(servers: Vec<ServerConfig>, settings: McpSettings) -> McpServers {
    McpStartup::start(McpConfig { servers, ..McpConfig::default() }, settings).finish().await
}

/// A free loopback port.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port()
}

/// Polls until `port` accepts connections (at most `limit`).
pub async fn wait_for_port(port: u16, limit: Duration) {
    let deadline = std::time::Instant::now() + limit;
    while std::time::Instant::now() < deadline {
        if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("nothing listens on 127.0.0.1:{port} after {limit:?}");
}

/// Kills a child started by a test when dropped.
pub struct KillOnDrop(pub std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts server-everything over streamable HTTP on a free port; returns the guard and its URL.
pub async fn everything_http() -> (KillOnDrop, String) {
    let port = free_port();
    let guard = everything_http_on(port).await;
    (guard, format!("http://127.0.0.1:{port}/mcp"))
}

/// Starts server-everything over streamable HTTP on `port` and waits until it listens.
pub async fn everything_http_on(port: u16) -> KillOnDrop {
    let child = std::process::Command::new(npm_bin("mcp-server-everything"))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn server-everything");
    let guard = KillOnDrop(child);
    wait_for_port(port, Duration::from_secs(20)).await;
    guard
}
