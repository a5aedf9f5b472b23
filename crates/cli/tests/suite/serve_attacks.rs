//! `lathe serve` refuses what it must, and changes nothing when it does: other hosts (DNS
//! rebinding), other origins, missing or wrong tokens, a watch token steering, a client answering
//! a prompt it was not sent, a non-loopback address without TLS. No response allows other origins,
//! and no token reaches the log.

use std::path::Path;
use std::time::Duration;

use serde_json::json;

use super::serve::{last_user_text, serve};
use super::serve_client::{Rpc, http, upgrade};
use super::support;

/// One request: method, path, headers, the status it must get.
type Case<'a> = (&'a str, &'a str, Vec<(&'a str, &'a str)>, u16);

/// The session files under the test's home, with their bytes.
fn ledger(home: &Path) -> Vec<(String, Vec<u8>)> {
    let files = support::session_files(home).into_iter();
    files.map(|path| (path.display().to_string(), std::fs::read(&path).unwrap_or_default())).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hosts_origins_tokens_and_watchers_are_refused_and_change_nothing() {
    let env = support::env();
    let mock = support::scripted(json!([
        {"tool_calls": [{"id": "w1", "name": "write_file", "arguments": {"path": "secret.txt", "content": "x\n"}}]},
        {"text": "Understood, not writing it."},
    ]))
    .await;
    let log = env.root.join("serve.log");
    let level = Path::new("trace");
    let mut served = serve(&env, &mock.url(), &[], &[("LATHE_LOG", &log), ("LATHE_LOG_LEVEL", level)]);
    let port = served.port;
    let (steer, watch) = (served.steer.clone(), served.watch.clone());
    let bearer = format!("Bearer {steer}");
    let own = format!("http://127.0.0.1:{port}");

    // The token file: the user's only.
    let file = env.home.join(format!("serve/{port}.json"));
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&file).expect("token file").permissions().mode() & 0o777, 0o600);

    // A steering client starts a session; the model's write waits for permission.
    let workspace = env.workspace.display().to_string();
    let mut a = Rpc::connect(port, &steer).await;
    let init = a.call("initialize", json!({"protocolVersion": 1, "clientCapabilities": {}})).await;
    assert_eq!(init["result"]["_meta"]["lathe"]["role"], "steer", "{init}");
    let new = a.call("session/new", json!({"cwd": workspace, "mcpServers": []})).await;
    let session = new["result"]["sessionId"].as_str().expect("session").to_string();
    a.send(json!({"jsonrpc": "2.0", "id": 100, "method": "session/prompt",
                  "params": {"sessionId": session, "prompt": [{"type": "text", "text": "write it"}]}}))
        .await;
    let ask = a.until(|m| m["method"] == "session/request_permission").await;
    let ask_id = ask["id"].clone();
    let before = ledger(&env.home);
    assert!(!before.is_empty());

    // A watcher sees the session but cannot steer it or answer for it.
    let mut w = Rpc::connect(port, &watch).await;
    let init = w.call("initialize", json!({"protocolVersion": 1, "clientCapabilities": {}})).await;
    assert_eq!(init["result"]["_meta"]["lathe"]["role"], "watch");
    let load =
        w.call("session/load", json!({"sessionId": session, "cwd": workspace, "mcpServers": []})).await;
    assert!(load.get("result").is_some(), "{load}");
    assert!(w.seen.iter().all(|m| m["method"] != "session/request_permission"), "a watcher is not asked");
    let refused = [
        ("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "evil"}]})),
        ("session/new", json!({"cwd": workspace, "mcpServers": []})),
        ("session/set_mode", json!({"sessionId": session, "modeId": "bypass"})),
    ];
    for (method, params) in refused {
        let answer = w.call(method, params).await;
        assert_eq!(answer["error"]["code"], -32001, "{method}: {answer}");
    }
    let allow = json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}});
    w.send(json!({"jsonrpc": "2.0", "id": ask_id, "result": allow})).await;
    w.send(json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}})).await;
    // A steering client that was not sent the prompt cannot answer it either.
    let mut c = Rpc::connect(port, &steer).await;
    c.send(json!({"jsonrpc": "2.0", "id": ask_id, "result": allow})).await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(!env.workspace.join("secret.txt").exists(), "no answer but the asked client's counts");
    assert_eq!(mock.requests().len(), 1);
    assert_eq!(ledger(&env.home), before, "the refused watcher and client changed nothing");

    // HTTP: the static shell needs no token; everything else does; other hosts and origins get 403.
    let (status, head, body) = http(port, "GET", "/", &[]).await;
    assert_eq!(status, 200);
    assert!(body.contains("<title>Lathe</title>") && !body.contains(&steer) && !body.contains(&watch));
    assert!(head.contains("content-security-policy: default-src 'none'"), "{head}");
    let cases: Vec<Case> = vec![
        ("GET", "/api/sessions", vec![], 401),
        ("GET", "/api/sessions", vec![("Authorization", "Bearer wrong")], 401),
        ("GET", "/api/sessions", vec![("Authorization", &bearer)], 200),
        ("GET", "/api/sessions", vec![("Authorization", &bearer), ("Host", "evil.test")], 403),
        ("GET", "/", vec![("Host", "evil.test")], 403),
        ("GET", "/", vec![("Host", "evil.test:80")], 403),
        ("GET", "/api/sessions", vec![("Authorization", &bearer), ("Origin", "http://127.0.0.1:1")], 403),
        ("GET", "/api/sessions", vec![("Authorization", &bearer), ("Origin", &own)], 200),
        (
            "OPTIONS",
            "/api/sessions",
            vec![("Origin", "http://127.0.0.1:1"), ("Access-Control-Request-Method", "GET")],
            403,
        ),
        ("POST", "/", vec![], 405),
        ("GET", "/acp", upgrade(&[]), 401),
        ("GET", "/acp", upgrade(&[("Sec-WebSocket-Protocol", "lathe.acp, bearer.wrong")]), 401),
        ("GET", "/acp", upgrade(&[("Authorization", &bearer), ("Host", "evil.test")]), 403),
        ("GET", "/acp", upgrade(&[("Authorization", &bearer), ("Origin", "http://localhost:1")]), 403),
        ("GET", "/acp", upgrade(&[("Authorization", &bearer), ("Origin", &own)]), 101),
    ];
    for (method, path, headers, expected) in cases {
        let (status, head, _) = http(port, method, path, &headers).await;
        assert_eq!(status, expected, "{method} {path} {headers:?}: {head}");
        assert!(!head.contains("access-control-allow-origin"), "{method} {path}: {head}");
    }
    assert_eq!(ledger(&env.home), before, "no refused request changed the ledger");

    // The asked client denies with feedback: the model gets it; the ledger names the client.
    let feedback = "not this file";
    let deny = json!({"outcome": {"outcome": "selected", "optionId": "reject_once"}, "_meta": {"lathe": {"feedback": feedback}}});
    a.send(json!({"jsonrpc": "2.0", "id": ask_id, "result": deny})).await;
    let done = a.until(|m| m["id"] == 100).await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    assert!(!env.workspace.join("secret.txt").exists());
    assert!(support::tool_result_text(&mock.requests()[1].body).contains(feedback));
    assert_eq!(last_user_text(&mock.requests()[0].body), "write it");
    let ledger_text: String =
        ledger(&env.home).iter().map(|(_, bytes)| String::from_utf8_lossy(bytes).into_owned()).collect();
    assert!(ledger_text.contains("from serve client c1"), "{ledger_text}");

    assert_eq!(served.stop(), Some(0));
    assert!(!file.exists(), "the token file is removed at exit");
    let logged = std::fs::read_to_string(&log).expect("log");
    assert!(logged.contains("serve: refused"), "the log has the refusals");
    assert!(!logged.contains(&steer) && !logged.contains(&watch), "no token in the log");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_loopback_address_needs_tls_or_insecure_remote() {
    let env = support::env();
    let command = support::lathe(&env, "http://127.0.0.1:9", &["serve", "--listen", "0.0.0.0:0"]);
    let output = support::output(command).await;
    assert_eq!(output.status.code(), Some(2));
    let stderr = support::stderr(&output);
    assert!(stderr.contains("not a loopback address") && stderr.contains("--tls-cert"), "{stderr}");
    assert!(output.stdout.is_empty(), "no URL, no token");
    assert!(!env.home.join("serve").exists());
    let served = serve(&env, "http://127.0.0.1:9", &["--listen", "0.0.0.0:0", "--insecure-remote"], &[]);
    let (status, _, _) = http(served.port, "GET", "/", &[]).await;
    assert_eq!(status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_certificate_it_serves_https_and_still_wants_the_token() {
    let env = support::env();
    let (cert, key) = (env.root.join("cert.pem"), env.root.join("key.pem"));
    let made = std::process::Command::new("openssl")
        .args(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("openssl");
    assert!(made.status.success(), "{}", support::stderr(&made));
    let (cert_arg, key_arg) = (cert.display().to_string(), key.display().to_string());
    let served = serve(&env, "http://127.0.0.1:9", &["--tls-cert", &cert_arg, "--tls-key", &key_arg], &[]);
    assert!(served.base.starts_with("https://127.0.0.1:"), "{}", served.base);
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder().danger_accept_invalid_certs(true).build().expect("client");
    let url = format!("{}/api/sessions", served.base);
    let anonymous = client.get(&url).send().await.expect("https");
    assert_eq!(anonymous.status(), 401);
    let answer = client.get(&url).bearer_auth(&served.watch).send().await.expect("https");
    assert_eq!(answer.status(), 200);
    let plain = http(served.port, "GET", "/", &[]).await;
    assert_ne!(plain.0, 200, "no plain HTTP on the TLS port");
}
