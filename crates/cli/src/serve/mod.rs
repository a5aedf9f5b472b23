//! `lathe serve`: the Agent Client Protocol over WebSocket (`/acp`, one JSON-RPC message per text
//! message; schema v1, <https://agentclientprotocol.com>; RFC 6455) and a single-page web UI
//! (`/`, plain HTML, CSS and JavaScript embedded in the binary). The same sessions and messages as
//! `lathe acp` (its live state, mapping and replay are reused), but sessions belong to the server:
//! several clients may watch one, a reconnecting client gets what it missed (`rpc.rs`, `room.rs`).
//!
//! Start-up, in order: check where to listen (a non-loopback address needs `--tls-cert` and
//! `--tls-key`, or `--insecure-remote`), bind, make the two tokens (steer and watch, see
//! `token.rs`) and save them under `~/.lathe/serve/<port>.json` (mode 0600), print the URLs once on
//! stdout (`http://HOST:PORT/#token=TOKEN`: the fragment never reaches a server), then serve until
//! SIGINT, SIGTERM or SIGHUP; every session then ends as `Quit` ends it and the token file is
//! removed. Security checks are in `guard.rs`; the page shell is the only thing served without a
//! token. Diagnostics go to `LATHE_LOG`, never a token.

mod guard;
mod http;
mod hub;
mod opening;
mod room;
mod rpc;
mod socket;
mod tls;
mod token;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;

use lathe_core::host::Flags;

use crate::args::{EXIT_FAILED, EXIT_OK, EXIT_USAGE};

/// `lathe serve`'s options.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// Where to listen, IP:PORT (`localhost:PORT` too; port 0 picks a free one). An address that
    /// is not loopback needs --tls-cert and --tls-key, or --insecure-remote.
    #[arg(long, default_value = "127.0.0.1:0", value_name = "ADDR")]
    pub listen: String,
    /// PEM certificate chain: serve HTTPS and WSS (with --tls-key).
    #[arg(long, requires = "tls_key", value_name = "FILE")]
    pub tls_cert: Option<PathBuf>,
    /// PEM private key of --tls-cert.
    #[arg(long, requires = "tls_cert", value_name = "FILE")]
    pub tls_key: Option<PathBuf>,
    /// Listen on a non-loopback address without TLS: the token then crosses the network in the
    /// clear.
    #[arg(long)]
    pub insecure_remote: bool,
    /// Another host name clients may reach the server by (checked in Host and Origin); repeatable.
    #[arg(long = "allow-host", value_name = "NAME")]
    pub allow_hosts: Vec<String>,
}

/// Why `lathe serve` cannot start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// `--listen` is not an address.
    #[error("--listen {0}: expected IP:PORT, e.g. 127.0.0.1:8080 or [::1]:0")]
    Address(String),
    /// A non-loopback address without TLS or `--insecure-remote`.
    #[error(
        "--listen {0} is not a loopback address: serve it over TLS (--tls-cert FILE --tls-key FILE) or accept a token in \
         the clear with --insecure-remote"
    )]
    Remote(SocketAddr),
    /// The certificate or key could not be used.
    #[error("TLS: {0}")]
    Tls(String),
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The tokens could not be made or saved.
    #[error("the access token: {0}")]
    Token(std::io::Error),
    /// The workspace is not usable.
    #[error("{0}")]
    Workspace(String),
}

/// Parses `--listen` (`localhost` stands for 127.0.0.1).
pub fn listen_address(listen: &str) -> Result<SocketAddr, ServeError> {
    if let Some(port) = listen.strip_prefix("localhost:") {
        let port = port.parse().map_err(|_| ServeError::Address(listen.to_string()))?;
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    listen.parse().map_err(|_| ServeError::Address(listen.to_string()))
}

/// A non-loopback address is served only over TLS or with `--insecure-remote`.
pub fn check_remote(addr: SocketAddr, tls: bool, insecure_remote: bool) -> Result<(), ServeError> {
    if addr.ip().is_loopback() || tls || insecure_remote { Ok(()) } else { Err(ServeError::Remote(addr)) }
}

/// The host names a request may name: the bound address, the loopback names, the configured ones.
fn allowed_hosts(bound: SocketAddr, extra: &[String]) -> Vec<String> {
    let own = match bound.ip() {
        IpAddr::V6(ip) => format!("[{ip}]"),
        IpAddr::V4(ip) => ip.to_string(),
    };
    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "[::1]"].map(String::from).to_vec();
    hosts.push(own);
    hosts.extend(extra.iter().map(|name| name.trim().to_ascii_lowercase()));
    hosts.sort();
    hosts.dedup();
    hosts
}

/// Runs `lathe serve` until a signal; the exit code.
pub async fn run(flags: Flags, args: &ServeArgs) -> u8 {
    match serve(flags, args).await {
        Ok(()) => EXIT_OK,
        Err(error) => {
            eprintln!("lathe serve: {error}");
            match error {
                ServeError::Address(_) | ServeError::Remote(_) => EXIT_USAGE,
                _ => EXIT_FAILED,
            }
        }
    }
}

async fn serve(flags: Flags, args: &ServeArgs) -> Result<(), ServeError> {
    let addr = listen_address(&args.listen)?;
    check_remote(addr, args.tls_cert.is_some(), args.insecure_remote)?;
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(tls::config(cert, key)?),
        _ => None,
    };
    let workspace = lathe_core::host::workspace(flags.dir.as_deref())
        .map_err(|error| ServeError::Workspace(error.to_string()))?;
    let tcp =
        tokio::net::TcpListener::bind(addr).await.map_err(|source| ServeError::Bind { addr, source })?;
    let bound = tcp.local_addr().map_err(|source| ServeError::Bind { addr, source })?;
    let tokens = token::Tokens::generate().map_err(ServeError::Token)?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    let shown = match bound.ip() {
        IpAddr::V6(ip) => format!("[{ip}]"),
        IpAddr::V4(ip) => ip.to_string(),
    };
    let base = format!("{scheme}://{shown}:{}/", bound.port());
    let token_file = tokens
        .save(&lathe_core::paths::lathe_home().join("serve"), bound.port(), &base)
        .map_err(ServeError::Token)?;
    // The one place a token is shown: the user's terminal, once.
    println!("{base}#token={}", tokens.steer());
    println!("watch (read-only): {base}#token={}", tokens.watch());
    use std::io::Write;
    let _ = std::io::stdout().flush();
    tracing::info!(%bound, tls = tls.is_some(), "serve: listening");

    let guard = Arc::new(guard::Guard {
        tokens,
        hosts: allowed_hosts(bound, &args.allow_hosts),
        port: bound.port(),
        scheme,
    });
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut hub_stop = stop_rx.clone();
    let (hub, hub_task) = hub::start(flags, workspace, async move {
        let _ = hub_stop.wait_for(|stopped| *stopped).await;
    });
    let app = http::router(http::AppState { hub, guard });
    let shutdown = async move {
        crate::acp::server::signalled().await;
        let _ = stop_tx.send(true);
    };
    let served = match tls {
        Some(config) => {
            let listener =
                tls::TlsListener::new(tcp, config).map_err(|source| ServeError::Bind { addr, source })?;
            axum::serve(listener, app).with_graceful_shutdown(shutdown).await
        }
        None => axum::serve(tcp, app).with_graceful_shutdown(shutdown).await,
    };
    drop(stop_rx);
    let _ = hub_task.await;
    let _ = std::fs::remove_file(&token_file);
    served.map_err(|source| ServeError::Bind { addr, source })
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::{ServeError, check_remote, listen_address};

    #[test]
    fn only_loopback_is_served_without_tls_or_an_explicit_insecure_flag() {
        let cases = [
            ("127.0.0.1:0", false, false, true),
            ("[::1]:8080", false, false, true),
            ("localhost:8080", false, false, true),
            ("0.0.0.0:8080", false, false, false),
            ("192.168.1.5:8080", false, false, false),
            ("0.0.0.0:8080", true, false, true),
            ("0.0.0.0:8080", false, true, true),
        ];
        for (listen, tls, insecure, ok) in cases {
            let addr = listen_address(listen).expect("address");
            assert_eq!(check_remote(addr, tls, insecure).is_ok(), ok, "{listen}");
        }
        assert!(matches!(listen_address("example.com:80"), Err(ServeError::Address(_))));
    }
}
