//! The routes. Without a token (the page shell: static, no secret, no side effect): `GET /`,
//! `GET /app.js`, `GET /app.css`, embedded in the binary, and an empty `GET /favicon.ico`. With one: `GET /api/sessions` (the
//! workspace's sessions, JSON) and `GET /acp` (the WebSocket). Every route is behind the guard
//! (Host, Origin, token); no route that changes anything answers `GET` outside the WebSocket, and
//! no response carries CORS headers.

use std::sync::Arc;

use axum::Router;
use axum::extract::{FromRef, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tokio::sync::oneshot;

use super::guard::{self, Guard};
use super::hub::{HubHandle, Inbound};
use super::socket;

const INDEX_HTML: &str = include_str!("assets/index.html");
const APP_JS: &str = include_str!("assets/app.js");
const APP_CSS: &str = include_str!("assets/app.css");

/// What the page may load and connect to: its own origin only, no inline script, no framing.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
                   img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The routes' shared state.
#[derive(Clone)]
pub struct AppState {
    /// The hub.
    pub hub: HubHandle,
    /// The guard.
    pub guard: Arc<Guard>,
}

impl FromRef<AppState> for HubHandle {
    fn from_ref(state: &AppState) -> HubHandle {
        state.hub.clone()
    }
}

impl FromRef<AppState> for Arc<Guard> {
    fn from_ref(state: &AppState) -> Arc<Guard> {
        state.guard.clone()
    }
}

/// The router, every route behind the guard.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/", get(|| async { asset(INDEX_HTML, "text/html; charset=utf-8") }))
        .route("/app.js", get(|| async { asset(APP_JS, "text/javascript; charset=utf-8") }))
        .route("/app.css", get(|| async { asset(APP_CSS, "text/css; charset=utf-8") }))
        .route("/favicon.ico", get(|| async { StatusCode::NO_CONTENT }))
        .route("/api/sessions", get(sessions))
        .route("/acp", get(socket::upgrade))
        .fallback(|| async { (StatusCode::NOT_FOUND, "not found\n") })
        .layer(axum::middleware::from_fn_with_state(state.guard.clone(), guard::check))
        .with_state(state)
}

fn asset(body: &'static str, kind: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, kind),
            (header::CONTENT_SECURITY_POLICY, CSP),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response()
}

/// `GET /api/sessions`: as the `_lathe/sessions` method.
async fn sessions(State(hub): State<HubHandle>) -> Response {
    let (reply, answer) = oneshot::channel();
    if hub.inbound.send(Inbound::Sessions(reply)).is_err() {
        return (StatusCode::SERVICE_UNAVAILABLE, "shutting down\n").into_response();
    }
    match answer.await {
        Ok(sessions) => ([(header::CACHE_CONTROL, "no-store")], axum::Json(sessions)).into_response(),
        Err(_) => (StatusCode::SERVICE_UNAVAILABLE, "shutting down\n").into_response(),
    }
}
