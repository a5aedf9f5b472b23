//! What every HTTP request and WebSocket handshake must pass, in this order, before a handler
//! runs: the `Host` header names this server (the bound address, `localhost`, `127.0.0.1`,
//! `[::1]` or a configured name, with the bound port: a DNS-rebinding page names its own host),
//! else 403; the `Origin`, when present, is this server's own (scheme, an allowed host, the port),
//! else 403 (a page of another origin, including another port of this machine); then, except for
//! the static page shell, a token: `Authorization: Bearer TOKEN`, or on the WebSocket handshake
//! the subprotocol `bearer.TOKEN` (browsers cannot set headers on a WebSocket; RFC 6455 §4.1),
//! else 401. The role the token grants goes to the handler as a request extension. No response
//! carries CORS headers, so no other origin may read one.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::token::{Role, Tokens};

/// The subprotocol prefix that carries a token on the WebSocket handshake.
pub const BEARER_PROTOCOL: &str = "bearer.";

/// Who may talk to the server.
#[derive(Debug)]
pub struct Guard {
    /// The tokens.
    pub tokens: Tokens,
    /// Host names accepted in `Host` and `Origin`, lower case, IPv6 in brackets.
    pub hosts: Vec<String>,
    /// The bound port.
    pub port: u16,
    /// `https` when serving TLS, else `http`.
    pub scheme: &'static str,
}

/// Paths served without a token: the page shell, which holds no secret and changes nothing.
pub const PUBLIC: &[&str] = &["/", "/app.js", "/app.css", "/favicon.ico"];

impl Guard {
    /// Whether `host` (a `Host` header value, `name[:port]`) is this server.
    pub fn host_allowed(&self, host: &str) -> bool {
        let host = host.trim().to_ascii_lowercase();
        let (name, port) = split_port(&host);
        let port_ok = match port {
            Some(port) => port == Some(self.port),
            None => self.port == if self.scheme == "https" { 443 } else { 80 },
        };
        port_ok && self.hosts.iter().any(|allowed| allowed == name)
    }

    /// Whether `origin` (an `Origin` header value) is this server's own.
    pub fn origin_allowed(&self, origin: &str) -> bool {
        let Some(rest) = origin.strip_prefix(self.scheme).and_then(|rest| rest.strip_prefix("://")) else {
            return false;
        };
        !rest.contains('/') && self.host_allowed(rest)
    }

    /// The role of the token the request presents: the bearer header, or (`websocket`) the
    /// `bearer.TOKEN` subprotocol.
    pub fn role(&self, headers: &HeaderMap, websocket: bool) -> Option<Role> {
        let bearer = headers
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Bearer "))
            .and_then(|token| self.tokens.role(token.trim()));
        bearer.or_else(|| {
            websocket
                .then(|| headers.get_all(header::SEC_WEBSOCKET_PROTOCOL))
                .into_iter()
                .flatten()
                .filter_map(|value| value.to_str().ok())
                .flat_map(|value| value.split(','))
                .filter_map(|protocol| protocol.trim().strip_prefix(BEARER_PROTOCOL))
                .find_map(|token| self.tokens.role(token))
        })
    }
}

/// `name` and its port: `None` when there is none, `Some(None)` when it is not a number.
fn split_port(host: &str) -> (&str, Option<Option<u16>>) {
    let (name, port) = if host.starts_with('[') {
        match host.find(']') {
            Some(end) => (&host[..=end], &host[end + 1..]),
            None => return (host, Some(None)),
        }
    } else {
        match host.rfind(':') {
            Some(colon) => (&host[..colon], &host[colon..]),
            None => (host, ""),
        }
    };
    if port.is_empty() {
        (name, None)
    } else {
        (name, Some(port.strip_prefix(':').and_then(|port| port.parse().ok())))
    }
}

/// The middleware: Host, Origin, then the token (see the module's story).
pub async fn check(State(guard): State<Arc<Guard>>, mut request: Request, next: Next) -> Response {
    let headers = request.headers();
    let host = headers.get(header::HOST).and_then(|value| value.to_str().ok()).unwrap_or("");
    if !guard.host_allowed(host) {
        tracing::info!(path = %request.uri().path(), "serve: refused a request for another host");
        return (StatusCode::FORBIDDEN, "forbidden: unknown Host\n").into_response();
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let own = origin.to_str().is_ok_and(|origin| guard.origin_allowed(origin));
        if !own {
            tracing::info!(path = %request.uri().path(), "serve: refused a request from another origin");
            return (StatusCode::FORBIDDEN, "forbidden: cross-origin request\n").into_response();
        }
    }
    if PUBLIC.contains(&request.uri().path()) {
        return next.run(request).await;
    }
    let websocket = headers.contains_key(header::SEC_WEBSOCKET_KEY);
    let Some(role) = guard.role(headers, websocket) else {
        tracing::info!(path = %request.uri().path(), "serve: refused a request without a valid token");
        return (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, "Bearer")], "unauthorized\n")
            .into_response();
    };
    request.extensions_mut().insert(role);
    next.run(request).await
}

#[cfg(test)]
#[path = "guard_tests.rs"]
mod tests;
