//! `web_fetch` end to end: the real `lathe -p` against `lathe-mock`, fetching from a real HTTP
//! server on 127.0.0.1 (axum) with rules from a real `.lathe/settings.json`; what the model's next
//! request carries is what is asserted, with the spill files on disk and the requests the page
//! server saw.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, header};
use axum::routing::get;
use serde_json::{Value, json};

use super::support::{self, Env, call, json_lines, tool_result_text};

const PAGE: &str = "<!doctype html><html><head><title>Lathe test page</title></head><body>\
    <h1>Title</h1><p>Read the <a href=\"/guide\">guide</a> first.</p><script>steal()</script></body></html>";

/// The page server: what it served, and the `User-Agent` of the last request.
#[derive(Default)]
struct Seen {
    hits: AtomicUsize,
    agent: std::sync::Mutex<String>,
}

/// 3 000 numbered lines of 100 bytes: 300 000 bytes of text.
fn big_text() -> String {
    (0..3000).map(|i| format!("line {i:05} {}\n", "x".repeat(88))).collect()
}

async fn page_server() -> (SocketAddr, Arc<Seen>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let seen = Arc::new(Seen::default());
    let count = |seen: &Seen, headers: &HeaderMap| {
        seen.hits.fetch_add(1, Ordering::SeqCst);
        let agent = headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok()).unwrap_or_default();
        *seen.agent.lock().expect("lock") = agent.to_string();
    };
    let app = Router::new()
        .route(
            "/page",
            get(move |State(seen): State<Arc<Seen>>, headers: HeaderMap| async move {
                count(&seen, &headers);
                ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], PAGE)
            }),
        )
        .route(
            "/big",
            get(move |State(seen): State<Arc<Seen>>, headers: HeaderMap| async move {
                count(&seen, &headers);
                big_text()
            }),
        )
        .with_state(seen.clone());
    tokio::spawn(async move { axum::serve(listener, app).await.expect("serve") });
    (addr, seen)
}

fn fetch(id: &str, url: &str, max_bytes: Option<u64>) -> Value {
    let mut args = json!({"url": url});
    if let Some(max) = max_bytes {
        args["max_bytes"] = json!(max);
    }
    call(id, "web_fetch", args)
}

fn allow(env: &Env, rules: &[&str]) {
    env.write_json("ws/.lathe/settings.json", &json!({"permissions": {"allow": rules}}));
}

/// Runs `lathe -p` (stream-json) with `args` against a script of `turns` then `done`; returns the
/// output lines and the model requests.
async fn run(env: &Env, turns: Vec<Value>, args: &[&str]) -> (Vec<Value>, Vec<lathe_mock::LoggedRequest>) {
    let mut script = turns;
    script.push(json!({"text": "done"}));
    let server = support::scripted(Value::Array(script)).await;
    let mut all = vec!["-p", "fetch it", "--output-format", "stream-json"];
    all.extend_from_slice(args);
    let out = support::output(support::lathe(env, &server.url(), &all)).await;
    assert_eq!(out.status.code(), Some(0), "{}", support::stderr(&out));
    (json_lines(&out), server.requests())
}

fn result<'a>(lines: &'a [Value], id: &str) -> &'a Value {
    lines
        .iter()
        .find(|line| line["type"] == "tool_result" && line["id"] == id)
        .unwrap_or_else(|| panic!("no result {id}"))
}

/// The path a result names as `saved to PATH;`.
fn spill_path(text: &str) -> std::path::PathBuf {
    let after = text.split("saved to ").nth(1).unwrap_or_else(|| panic!("no spill path in {text}"));
    std::path::PathBuf::from(after.split(';').next().expect("path"))
}

#[tokio::test]
async fn an_html_page_reaches_the_model_as_markdown() {
    let env = support::env();
    let (addr, seen) = page_server().await;
    allow(&env, &["WebFetch(domain:127.0.0.1)"]);
    let url = format!("http://{addr}/page");
    let (lines, requests) = run(&env, vec![fetch("f1", &url, None)], &[]).await;
    assert_eq!(result(&lines, "f1")["status"], "completed");
    let sent = tool_result_text(&requests[1].body);
    assert!(sent.contains(&format!("Fetched {url} (HTTP 200, text/html converted to Markdown")), "{sent}");
    assert!(sent.contains("Title: Lathe test page"), "{sent}");
    assert!(sent.contains("# Title"), "{sent}");
    assert!(sent.contains(&format!("[guide](http://{addr}/guide)")), "a link made absolute: {sent}");
    assert!(!sent.contains("steal()") && !sent.contains("<p>"), "no script, no tags: {sent}");
    assert_eq!(seen.hits.load(Ordering::SeqCst), 1);
    assert_eq!(*seen.agent.lock().expect("lock"), format!("lathe/{}", env!("CARGO_PKG_VERSION")));
}

#[tokio::test]
async fn text_past_the_cap_is_spilled_to_a_file_the_result_names() {
    let env = support::env();
    let (addr, _) = page_server().await;
    allow(&env, &["WebFetch(domain:127.0.0.1)"]);
    let url = format!("http://{addr}/big");
    // Both calls in one response: fetches run side by side, like reads.
    let both = json!({"tool_calls": [fetch("small", &url, Some(1000))["tool_calls"][0], fetch("default", &url, None)["tool_calls"][0]]});
    let (lines, requests) = run(&env, vec![both], &[]).await;
    let full = big_text();
    for (id, shown, hidden, left) in
        [("small", "line 00009", "line 00010", "299 000"), ("default", "line 00999", "line 01000", "200 000")]
    {
        let answer = result(&lines, id);
        assert_eq!(answer["status"], "completed", "{answer}");
        let output = answer["output"].as_str().expect("output");
        assert!(output.contains(shown) && !output.contains(hidden), "{id}: cut after {shown}");
        assert!(output.contains(&format!("[... {left} more bytes not shown; the whole text (300 000 bytes")));
        let path = spill_path(output);
        assert!(path.starts_with(env.home.join("tool-results")), "{}", path.display());
        assert_eq!(
            std::fs::read_to_string(&path).expect("spill file"),
            full,
            "the whole text is in the file"
        );
    }
    let sent = tool_result_text(&requests.last().expect("request").body);
    assert!(sent.contains("line 00999") && !sent.contains("line 02999"), "the model got the head only");
}

#[tokio::test]
async fn a_domain_without_a_rule_is_refused_headless_naming_the_rule() {
    let env = support::env();
    let (lines, requests) = run(&env, vec![fetch("f1", "https://docs.example.com/guide", None)], &[]).await;
    let first = result(&lines, "f1");
    assert_eq!(first["status"], "denied", "{first}");
    let sent = tool_result_text(&requests[1].body);
    assert!(sent.contains("Lathe runs headless"), "{sent}");
    assert!(sent.contains("add `WebFetch(domain:docs.example.com)` to permissions.allow"), "{sent}");
    assert!(sent.contains("the sandbox's network policy is off"), "{sent}");
    // A deny rule binds in every mode, --yolo included.
    env.write_json(
        "ws/.lathe/settings.json",
        &json!({"permissions": {"deny": ["WebFetch(domain:docs.example.com)"]}}),
    );
    let (lines, requests) =
        run(&env, vec![fetch("f2", "https://docs.example.com/guide", None)], &["--yolo"]).await;
    assert_eq!(result(&lines, "f2")["status"], "denied");
    let sent = tool_result_text(&requests[1].body);
    assert!(sent.contains("denied by the deny rule `WebFetch(domain:docs.example.com)`"), "{sent}");
}

#[tokio::test]
async fn loopback_is_refused_without_a_rule_naming_it_and_fetched_with_one() {
    let env = support::env();
    let (addr, seen) = page_server().await;
    let port = addr.port();
    let plain = format!("http://127.0.0.1:{port}/page");
    let decimal = format!("http://2130706433:{port}/page");
    // Bypass mode allows public hosts, not loopback.
    let turns = vec![fetch("plain", &plain, None), fetch("decimal", &decimal, None)];
    let (lines, requests) = run(&env, turns, &["--yolo"]).await;
    let sent = tool_result_text(&requests.last().expect("request").body);
    for id in ["plain", "decimal"] {
        assert_eq!(result(&lines, id)["status"], "denied", "{id}");
    }
    assert_eq!(sent.matches("127.0.0.1 is a loopback address").count(), 2, "{sent}");
    assert!(sent.contains("add `WebFetch(domain:127.0.0.1)` to permissions.allow"), "{sent}");
    assert!(sent.contains("no mode allows it, --yolo included"), "{sent}");
    assert_eq!(seen.hits.load(Ordering::SeqCst), 0, "nothing reached the server");

    allow(&env, &["WebFetch(domain:127.0.0.1)"]);
    let (lines, requests) = run(&env, vec![fetch("decimal", &decimal, None)], &[]).await;
    assert_eq!(result(&lines, "decimal")["status"], "completed");
    let sent = tool_result_text(&requests[1].body);
    assert!(sent.contains(&format!("Fetched http://127.0.0.1:{port}/page (HTTP 200")), "{sent}");
    assert!(sent.contains("# Title"), "{sent}");
    assert_eq!(seen.hits.load(Ordering::SeqCst), 1);
}
