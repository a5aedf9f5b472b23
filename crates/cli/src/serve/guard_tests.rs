#![allow(clippy::expect_used)]

use axum::http::{HeaderMap, HeaderValue, header};

use super::{Guard, Tokens};
use crate::serve::token::Role;

fn guard() -> Guard {
    let hosts = ["127.0.0.1", "localhost", "[::1]", "lathe.example"].map(String::from).to_vec();
    Guard { tokens: Tokens::generate().expect("random"), hosts, port: 8123, scheme: "http" }
}

#[test]
fn hosts_are_checked_by_name_and_port() {
    let guard = guard();
    let cases = [
        ("127.0.0.1:8123", true),
        ("localhost:8123", true),
        ("LOCALHOST:8123", true),
        ("[::1]:8123", true),
        ("lathe.example:8123", true),
        ("evil.test:8123", false),
        ("evil.test", false),
        ("127.0.0.1:8124", false),
        ("127.0.0.1", false),
        ("127.0.0.1:x", false),
        ("[::1", false),
        ("", false),
    ];
    for (host, allowed) in cases {
        assert_eq!(guard.host_allowed(host), allowed, "{host}");
    }
}

#[test]
fn only_the_servers_own_origin_passes() {
    let guard = guard();
    let cases = [
        ("http://127.0.0.1:8123", true),
        ("http://localhost:8123", true),
        ("http://127.0.0.1:9999", false),
        ("https://127.0.0.1:8123", false),
        ("http://evil.test:8123", false),
        ("null", false),
        ("http://127.0.0.1:8123/x", false),
    ];
    for (origin, allowed) in cases {
        assert_eq!(guard.origin_allowed(origin), allowed, "{origin}");
    }
}

#[test]
fn a_token_comes_in_the_bearer_header_or_the_websocket_subprotocol() {
    let guard = guard();
    let steer = guard.tokens.steer().to_string();
    let watch = guard.tokens.watch().to_string();
    let headers = |name, value: String| {
        let mut headers = HeaderMap::new();
        headers.insert(name, HeaderValue::from_str(&value).expect("header"));
        headers
    };
    assert_eq!(
        guard.role(&headers(header::AUTHORIZATION, format!("Bearer {steer}")), false),
        Some(Role::Steer)
    );
    assert_eq!(
        guard.role(&headers(header::AUTHORIZATION, format!("Bearer {watch}")), false),
        Some(Role::Watch)
    );
    assert_eq!(guard.role(&headers(header::AUTHORIZATION, "Bearer nope".into()), false), None);
    assert_eq!(guard.role(&headers(header::AUTHORIZATION, steer.clone()), false), None);
    let protocol = headers(header::SEC_WEBSOCKET_PROTOCOL, format!("lathe.acp, bearer.{watch}"));
    assert_eq!(guard.role(&protocol, true), Some(Role::Watch));
    assert_eq!(guard.role(&protocol, false), None, "the subprotocol counts on a handshake only");
    assert_eq!(guard.role(&HeaderMap::new(), true), None);
}
