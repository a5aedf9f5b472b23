#![allow(clippy::unwrap_used, clippy::expect_used)]

//! `web_fetch` against a real HTTP server on loopback (axum), with a real policy.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, Response, StatusCode, header};
use axum::routing::get;
use lathe_policy::{PermissionMode, Policy};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::*;
use crate::tool::DynTool;

const PAGE: &str = "<html><head><title>Test page</title></head><body><h1>Title</h1>\
    <p>Read the <a href=\"/guide\">guide</a>.</p><script>steal()</script></body></html>";

/// A server on 127.0.0.1 with the pages the tests fetch; `localhost:PORT` reaches it too.
async fn server() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = Router::new()
        .route("/page", get(|| async { ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], PAGE) }))
        .route("/big", get(|| async { big_text() }))
        .route("/json", get(|| async { ([(header::CONTENT_TYPE, "application/json")], r#"{"a": [1, 2]}"#) }))
        .route(
            "/latin1",
            get(|| async {
                ([(header::CONTENT_TYPE, "text/plain; charset=ISO-8859-1")], b"caf\xe9".to_vec())
            }),
        )
        .route("/image", get(|| async { ([(header::CONTENT_TYPE, "image/png")], vec![0x89u8; 12_345]) }))
        .route("/untyped", get(|| async { Response::new(Body::from(b"\x00\x01binary".to_vec())) }))
        .route(
            "/missing",
            get(|| async {
                (StatusCode::NOT_FOUND, [(header::CONTENT_TYPE, "text/html")], "<p>no such page</p>")
            }),
        )
        .route(
            "/agent",
            get(|headers: HeaderMap| async move { format!("{:?}", headers.get(header::USER_AGENT)) }),
        )
        .route("/same", get(|| async { redirect("/page".into()) }))
        .route(
            "/other",
            get(|State(port): State<u16>| async move { redirect(format!("http://localhost:{port}/page")) }),
        )
        .route("/metadata", get(|| async { redirect("http://169.254.169.254/latest/meta-data/".into()) }))
        .route("/ftp", get(|| async { redirect("ftp://127.0.0.1/file".into()) }))
        .route("/loop", get(|| async { redirect("/loop".into()) }))
        .with_state(addr.port());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

fn redirect(to: String) -> Response<Body> {
    Response::builder().status(StatusCode::FOUND).header(header::LOCATION, to).body(Body::empty()).unwrap()
}

/// 1 500 numbered lines of 100 bytes: 150 000 bytes.
fn big_text() -> String {
    (0..1500).map(|i| format!("{i:06} {}\n", "x".repeat(92))).collect()
}

struct Setup {
    _dir: tempfile::TempDir,
    ctx: ToolContext,
}

/// A context whose policy is in `mode` with `allow` rules.
fn with_policy(mode: PermissionMode, allow: &[&str]) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = ToolContext::new(dir.path().join("ws"));
    ctx.spill_dir = dir.path().join("spill");
    let policy = Policy::with_mode(mode, &ctx.workspace);
    let rules: Vec<String> = allow.iter().map(|rule| rule.to_string()).collect();
    assert!(policy.add_allow_rules(&rules, "test").is_empty());
    ctx.policy = Some(Arc::new(policy));
    Setup { _dir: dir, ctx }
}

fn local() -> Setup {
    with_policy(PermissionMode::Default, &["WebFetch(domain:127.0.0.1)"])
}

async fn fetch(setup: &Setup, args: Value) -> Result<ToolOutput, ToolError> {
    WebFetch.call(args, &setup.ctx).await
}

fn refused(result: Result<ToolOutput, ToolError>) -> String {
    match result {
        Err(ToolError::Refused(why)) => why,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

fn failed(result: Result<ToolOutput, ToolError>) -> String {
    match result {
        Err(ToolError::Failed(why)) => why,
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[tokio::test]
async fn an_html_page_comes_back_as_markdown_under_a_header_line() {
    let addr = server().await;
    let setup = local();
    let output = fetch(&setup, json!({"url": format!("http://{addr}/page")})).await.unwrap();
    let markdown = format!("Title: Test page\n\n# Title\n\nRead the [guide](http://{addr}/guide).");
    let bytes = markdown.len();
    assert_eq!(
        output.text_content(),
        format!(
            "Fetched http://{addr}/page (HTTP 200, text/html converted to Markdown, {bytes} bytes)\n\n{markdown}"
        )
    );
    assert!(!output.is_error);
    assert_eq!(output.spill_path, None);
    assert_eq!(output.view, Some(ResultView::Line { text: format!("HTTP 200, {bytes} bytes of Markdown") }));
}

#[tokio::test]
async fn text_and_json_come_back_as_they_are_decoded_from_their_charset() {
    let addr = server().await;
    let setup = local();
    let json = fetch(&setup, json!({"url": format!("http://{addr}/json")})).await.unwrap().text_content();
    assert!(json.ends_with("\n\n{\"a\": [1, 2]}"), "{json}");
    assert!(json.contains("(HTTP 200, application/json, 13 bytes)"), "{json}");
    let latin1 = fetch(&setup, json!({"url": format!("http://{addr}/latin1")})).await.unwrap().text_content();
    assert!(latin1.ends_with("\n\ncafé"), "{latin1}");
    let agent = fetch(&setup, json!({"url": format!("http://{addr}/agent")})).await.unwrap().text_content();
    assert!(agent.ends_with(&format!("Some(\"lathe/{}\")", env!("CARGO_PKG_VERSION"))), "{agent}");
}

#[tokio::test]
async fn binary_content_is_refused_with_its_type_and_size() {
    let addr = server().await;
    let setup = local();
    let why = failed(fetch(&setup, json!({"url": format!("http://{addr}/image")})).await);
    assert!(why.contains("binary content (image/png, 12 345 bytes) not fetched"), "{why}");
    let why = failed(fetch(&setup, json!({"url": format!("http://{addr}/untyped")})).await);
    assert!(why.contains("binary content (no content type, 8 bytes) not fetched"), "{why}");
}

#[tokio::test]
async fn an_error_status_is_an_error_result_with_the_page() {
    let addr = server().await;
    let output = fetch(&local(), json!({"url": format!("http://{addr}/missing")})).await.unwrap();
    assert!(output.is_error);
    let text = output.text_content();
    assert!(text.contains("(HTTP 404, text/html converted to Markdown"), "{text}");
    assert!(text.ends_with("\n\nno such page"), "{text}");
}

#[tokio::test]
async fn text_past_max_bytes_is_cut_and_the_whole_is_spilled() {
    let addr = server().await;
    let setup = local();
    let output = fetch(&setup, json!({"url": format!("http://{addr}/big"), "max_bytes": 250})).await.unwrap();
    let text = output.text_content();
    let spill = output.spill_path.clone().expect("spilled");
    assert_eq!(std::fs::read_to_string(&spill).unwrap(), big_text());
    let body = text.split_once("\n\n").unwrap().1;
    // Two whole lines (200 bytes: a cut at a line end), then the note.
    assert!(body.starts_with("000000 x"), "{body}");
    assert!(body.contains("000001 x") && !body.contains("000002"), "{body}");
    assert!(
        body.ends_with(&format!(
            "[... 149 800 more bytes not shown; the whole text (150 000 bytes, 1500 lines) is saved to {}; \
             read it with read_file (offset/limit) or grep ...]",
            spill.display()
        )),
        "{body}"
    );
    // Without max_bytes, the default cap applies.
    let output = fetch(&setup, json!({"url": format!("http://{addr}/big")})).await.unwrap();
    let text = output.text_content();
    assert!(output.spill_path.is_some());
    assert!(text.contains("000999 x") && !text.contains("001000 x"), "cut after 100 000 bytes");
    assert!(text.contains("[... 50 000 more bytes not shown"), "{}", &text[text.len() - 300..]);
}

#[tokio::test]
async fn the_download_stops_at_its_limit() {
    let addr = server().await;
    let setup = local();
    let url = Url::parse(&format!("http://{addr}/big")).unwrap();
    let fetched = http::fetch(url, setup.ctx.policy.as_ref().unwrap(), 1000).await.unwrap();
    assert!(fetched.truncated);
    assert_eq!(fetched.body, big_text().as_bytes()[..1000]);
}

#[tokio::test]
async fn loopback_and_private_addresses_need_a_rule_naming_the_host() {
    let addr = server().await;
    let port = addr.port();
    // Bypass allows any public host, but not these.
    let setup = with_policy(PermissionMode::Bypass, &[]);
    for (url, shown) in [
        (format!("http://127.0.0.1:{port}/page"), "127.0.0.1 is a loopback address"),
        (format!("http://2130706433:{port}/page"), "127.0.0.1 is a loopback address"),
        (format!("http://0x7f.1:{port}/page"), "127.0.0.1 is a loopback address"),
        (format!("http://[::ffff:127.0.0.1]:{port}/page"), "::ffff:127.0.0.1 is a loopback address"),
        (format!("http://[::1]:{port}/page"), "::1 is a loopback address"),
        (format!("http://localhost:{port}/page"), "localhost is a loopback name"),
        ("http://169.254.169.254/latest/meta-data/".into(), "169.254.169.254 is a link-local address"),
        ("http://10.0.0.1/".into(), "10.0.0.1 is a private network address"),
    ] {
        let args = json!({"url": url});
        let before = DynTool::precheck(&WebFetch, &args, &setup.ctx).unwrap_err();
        let why = refused(fetch(&setup, args).await);
        assert_eq!(before.to_string(), why, "the precheck refuses as the run would");
        assert!(why.contains(shown), "{url}: {why}");
        assert!(why.contains("no mode allows it"), "{why}");
        assert!(why.contains("the sandbox's network policy is off"), "{why}");
    }
    let why = refused(fetch(&setup, json!({"url": format!("http://2130706433:{port}/page")})).await);
    assert!(why.contains("add `WebFetch(domain:127.0.0.1)` to permissions.allow"), "{why}");
    let why = refused(fetch(&setup, json!({"url": format!("http://[::ffff:127.0.0.1]:{port}/")})).await);
    assert!(why.contains("`WebFetch(domain:[::ffff:7f00:1])`"), "{why}");
    // With the rule, the same URL in its decimal form is fetched.
    let allowed = local();
    let args = json!({"url": format!("http://2130706433:{port}/page")});
    assert!(DynTool::precheck(&WebFetch, &args, &allowed.ctx).is_ok());
    let text = fetch(&allowed, args).await.unwrap().text_content();
    assert!(text.starts_with(&format!("Fetched http://127.0.0.1:{port}/page (HTTP 200")), "{text}");
    // A wildcard or a bare WebFetch rule opens no private address.
    let wide = with_policy(PermissionMode::Default, &["WebFetch", "WebFetch(domain:*.0.0.1)"]);
    refused(fetch(&wide, json!({"url": format!("http://127.0.0.1:{port}/page")})).await);
}

#[test]
fn resolved_addresses_are_screened_all_of_them() {
    let setup = with_policy(PermissionMode::Bypass, &["WebFetch(domain:intranet.example)"]);
    let policy = setup.ctx.policy.as_ref().unwrap();
    let public: SocketAddr = "93.184.215.14:443".parse().unwrap();
    let private: SocketAddr = "10.1.2.3:443".parse().unwrap();
    assert_eq!(http::screen("example.com", &[public], policy), Ok(()));
    let why = http::screen("example.com", &[public, private], policy).unwrap_err();
    assert!(why.starts_with("example.com resolves to 10.1.2.3, a private network address"), "{why}");
    assert!(why.contains("`WebFetch(domain:example.com)`"), "{why}");
    assert_eq!(http::screen("intranet.example", &[private], policy), Ok(()));
}

#[tokio::test]
async fn a_pinned_client_connects_to_the_checked_address_whatever_dns_says() {
    let addr = server().await;
    // `pinned.invalid` resolves nowhere: only the pin can take the request to the server.
    let client = http::client(Some(("pinned.invalid", &[addr]))).unwrap();
    let url = format!("http://pinned.invalid:{}/json", addr.port());
    let body = client.get(url).send().await.unwrap().text().await.unwrap();
    assert_eq!(body, r#"{"a": [1, 2]}"#);
}

#[tokio::test]
async fn redirects_are_followed_on_the_same_host_and_rechecked_elsewhere() {
    let addr = server().await;
    let port = addr.port();
    let setup = local();
    let text = fetch(&setup, json!({"url": format!("http://{addr}/same")})).await.unwrap().text_content();
    assert!(text.starts_with(&format!("Fetched http://{addr}/page (HTTP 200")), "{text}");
    assert!(text.contains(&format!("\nRedirected from http://{addr}/same\n")), "{text}");
    // To another host: refused, naming it and its rule.
    let why = refused(fetch(&setup, json!({"url": format!("http://{addr}/other")})).await);
    assert!(
        why.starts_with(&format!(
            "web_fetch: http://{addr}/other redirects to http://localhost:{port}/page, another host, which \
             this call was not approved for"
        )),
        "{why}"
    );
    assert!(why.contains("add `WebFetch(domain:localhost)` to permissions.allow"), "{why}");
    // Allowed by a rule, the redirect still meets the address check: localhost is loopback.
    let wider = with_policy(PermissionMode::Bypass, &["WebFetch(domain:127.0.0.1)"]);
    let why = refused(fetch(&wider, json!({"url": format!("http://{addr}/other")})).await);
    assert!(why.contains("localhost is a loopback name"), "{why}");
    let both =
        with_policy(PermissionMode::Default, &["WebFetch(domain:127.0.0.1)", "WebFetch(domain:localhost)"]);
    let text = fetch(&both, json!({"url": format!("http://{addr}/other")})).await.unwrap().text_content();
    assert!(text.starts_with(&format!("Fetched http://localhost:{port}/page (HTTP 200")), "{text}");
    // To the metadata service, or to another scheme: refused.
    let why = refused(fetch(&wider, json!({"url": format!("http://{addr}/metadata")})).await);
    assert!(
        why.contains(
            "redirects to http://169.254.169.254/latest/meta-data/, 169.254.169.254 is a link-local"
        )
    );
    let why = refused(fetch(&setup, json!({"url": format!("http://{addr}/ftp")})).await);
    assert!(why.contains("web_fetch fetches only http and https URLs, not ftp:"), "{why}");
    let why = failed(fetch(&setup, json!({"url": format!("http://{addr}/loop")})).await);
    assert!(why.starts_with(&format!("web_fetch: stopped after {MAX_REDIRECTS} redirects")), "{why}");
}

#[tokio::test]
async fn only_http_urls_are_fetched() {
    let setup = local();
    for (url, shown) in [
        ("file:///etc/passwd", "not file:"),
        ("data:text/plain,hello", "not data:"),
        ("ftp://example.com/x", "not ftp:"),
        ("not a url", "is not a valid URL"),
    ] {
        let args = json!({"url": url});
        let why = DynTool::precheck(&WebFetch, &args, &setup.ctx).unwrap_err().to_string();
        assert!(why.contains(shown), "{url}: {why}");
        assert!(failed(fetch(&setup, args).await).contains(shown));
    }
}

#[tokio::test]
async fn a_refused_connection_is_a_clear_failure() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let why = failed(fetch(&local(), json!({"url": format!("http://127.0.0.1:{port}/")})).await);
    assert!(why.starts_with(&format!("web_fetch: http://127.0.0.1:{port}/: ")), "{why}");
    assert!(why.to_lowercase().contains("connection refused"), "{why}");
}

#[test]
fn the_call_declares_its_normalised_url_and_a_url_preview() {
    let setup = local();
    let access = DynTool::access(&WebFetch, &json!({"url": "HTTP://2130706433/x"}), &setup.ctx).unwrap();
    assert_eq!(access, Access::Fetch { url: "http://127.0.0.1/x".into() });
    let preview = DynTool::preview(&WebFetch, &json!({"url": "https://docs.rs/"}), &setup.ctx);
    assert_eq!(preview, Some(ToolPreview::Url { url: "https://docs.rs/".into() }));
}
