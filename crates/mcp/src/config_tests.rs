#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use pretty_assertions::assert_eq;

use super::*;

fn env(name: &str) -> Option<String> {
    (name == "API_TOKEN").then(|| "t0ken".to_string())
}

struct Files {
    dir: tempfile::TempDir,
}

impl Files {
    fn new() -> Files {
        Files { dir: tempfile::tempdir().unwrap() }
    }
    fn user(&self, text: &str) -> &Self {
        std::fs::write(self.dir.path().join("user.json"), text).unwrap();
        self
    }
    fn project(&self, text: &str) -> &Self {
        std::fs::write(self.dir.path().join("project.json"), text).unwrap();
        self
    }
    fn sources(&self) -> Sources {
        Sources {
            user_file: self.dir.path().join("user.json"),
            project_file: self.dir.path().join("project.json"),
            flags: Vec::new(),
            trust_project: false,
            approved: Vec::new(),
        }
    }
}

#[test]
fn claude_code_format_with_both_transports_and_expansion() {
    let files = Files::new();
    files.user(
        r#"{"mcpServers": {
            "everything": {"command": "mcp-server-everything", "args": ["stdio", "${MODE:-fast}"],
                           "env": {"TOKEN": "${API_TOKEN}"}},
            "remote": {"type": "http", "url": "http://127.0.0.1:9/mcp",
                       "headers": {"Authorization": "Bearer ${API_TOKEN}"}}
        }}"#,
    );
    let config = McpConfig::load(&files.sources(), &env).unwrap();
    assert_eq!(config.warnings, Vec::<String>::new());
    assert_eq!(config.servers.len(), 2);
    assert_eq!(
        config.servers[0].transport,
        Transport::Stdio {
            command: "mcp-server-everything".into(),
            args: vec!["stdio".into(), "fast".into()],
            env: BTreeMap::from([("TOKEN".to_string(), "t0ken".to_string())]),
        }
    );
    assert_eq!(
        config.servers[1].transport,
        Transport::Http {
            url: "http://127.0.0.1:9/mcp".into(),
            headers: BTreeMap::from([("Authorization".to_string(), "Bearer t0ken".to_string())]),
        }
    );
    assert_eq!(config.servers[1].scope, Scope::User);
}

#[test]
fn project_servers_need_approval_or_trust() {
    let files = Files::new();
    files.project(r#"{"mcpServers": {"fs": {"command": "fs-server"}, "db": {"command": "db-server"}}}"#);
    let config = McpConfig::load(&files.sources(), &env).unwrap();
    assert!(config.servers.is_empty());
    assert_eq!(config.skipped.len(), 2);
    assert!(config.skipped.iter().all(|s| s.reason == SkipReason::NeedsApproval));
    assert_eq!(config.warnings.len(), 1);
    assert!(config.warnings[0].contains("not approved: fs, db"), "{:?}", config.warnings);

    let approved =
        McpConfig::load(&Sources { approved: vec!["db".into()], ..files.sources() }, &env).unwrap();
    assert_eq!(approved.servers.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), vec!["db"]);
    assert_eq!(approved.servers[0].scope, Scope::Project);

    let trusted = McpConfig::load(&Sources { trust_project: true, ..files.sources() }, &env).unwrap();
    assert_eq!(trusted.servers.len(), 2);
    assert!(trusted.warnings.is_empty());
}

#[test]
fn later_sources_replace_a_server_of_the_same_name() {
    let files = Files::new();
    files.user(r#"{"mcpServers": {"x": {"command": "from-user"}}}"#);
    let flag = r#"{"mcpServers": {"x": {"command": "from-flag"}}}"#.to_string();
    let config = McpConfig::load(&Sources { flags: vec![flag], ..files.sources() }, &env).unwrap();
    assert_eq!(config.servers.len(), 1);
    assert_eq!(config.servers[0].scope, Scope::Flag);
    assert!(
        matches!(&config.servers[0].transport, Transport::Stdio { command, .. } if command == "from-flag")
    );
}

#[test]
fn bad_entries_are_warnings_and_the_rest_is_used() {
    let files = Files::new();
    files.user(
        r#"{"mcpServers": {
            "good": {"command": "ok"},
            "carrier-pigeon": {"type": "pigeon", "url": "coo://"},
            "legacy": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
            "nocommand": {"args": ["x"]},
            "secret": {"type": "http", "url": "http://h/mcp", "headers": {"Authorization": "Bearer ${UNSET_TOKEN}"}},
            "weird": 7
        }}"#,
    );
    files.project("{ this is not json");
    let config = McpConfig::load(&Sources { trust_project: true, ..files.sources() }, &env).unwrap();
    assert_eq!(config.servers.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), vec!["good"]);
    let all = config.warnings.join("\n");
    for expected in [
        "unknown transport \"type\": \"pigeon\"",
        "legacy SSE transport is not supported",
        "needs a \"command\"",
        "${UNSET_TOKEN} is not set",
        "`weird`",
        "project.json: not valid JSON",
    ] {
        assert!(all.contains(expected), "missing {expected:?} in:\n{all}");
    }
    assert_eq!(config.warnings.len(), 6, "{all}");
}

#[test]
fn a_missing_flag_file_is_an_error_and_missing_default_files_are_not() {
    let files = Files::new();
    let config = McpConfig::load(&files.sources(), &env).unwrap();
    assert!(config.is_empty());
    let error =
        McpConfig::load(&Sources { flags: vec!["/no/such/mcp.json".into()], ..files.sources() }, &env)
            .unwrap_err()
            .to_string();
    assert!(error.contains("/no/such/mcp.json"), "{error}");
}
