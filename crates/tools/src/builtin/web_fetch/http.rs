//! The HTTP side of `web_fetch`: each hop's checks, a client pinned to the addresses checked, the
//! GET itself and its body read with a byte limit.
//!
//! Every hop, the first and each redirect, is checked before it connects ([`check_hop`]): the
//! scheme (http or https), the host against the permission policy when a redirect leaves the host
//! the call was approved for, and every address the host resolves to ([`super::address`]). The
//! connection then goes to exactly those addresses (reqwest's `resolve_to_addrs`), so a DNS answer
//! that changes between the check and the connect (DNS rebinding) cannot send it elsewhere.
//! Redirects are followed by hand, at most [`MAX_REDIRECTS`]; no proxy is used, no cookies are
//! kept, and the body is not decompressed (none is asked for).

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use lathe_policy::{Access, Policy, Verdict};
use reqwest::header::{ACCEPT, CONTENT_LENGTH, CONTENT_TYPE, LOCATION};
use url::{Host, Url};

use super::address;
use super::content::{ContentType, Kind, kind, parse_content_type};
use crate::tool::ToolError;

/// Redirects followed before the call gives up.
pub const MAX_REDIRECTS: usize = 5;
/// Time allowed to open one connection (TCP and TLS).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The `User-Agent` sent.
pub const USER_AGENT: &str = concat!("lathe/", env!("CARGO_PKG_VERSION"));
/// What the request accepts: HTML and text first.
const ACCEPTED: &str = "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.5";

/// One fetch's response, after the redirects.
#[derive(Debug)]
pub struct Fetched {
    /// The URL that answered (the last hop).
    pub url: Url,
    /// The HTTP status.
    pub status: reqwest::StatusCode,
    /// The parsed `Content-Type`, when there was one.
    pub content_type: Option<ContentType>,
    /// How the body is to be handled.
    pub kind: Kind,
    /// The body, at most the download limit of it; empty for [`Kind::Binary`], which is not read.
    pub body: Vec<u8>,
    /// The `Content-Length` header, when given.
    pub length: Option<u64>,
    /// Whether the body was longer than the download limit (the rest was not read).
    pub truncated: bool,
}

/// Fetches `url` for a call approved for `url`'s host: follows redirects (each hop checked, see
/// the module docs) and reads at most `download_limit` bytes of a body that is text.
pub async fn fetch(url: Url, policy: &Policy, download_limit: usize) -> Result<Fetched, ToolError> {
    let approved = url.host_str().unwrap_or_default().to_string();
    let mut url = url;
    let mut from: Option<Url> = None;
    for hop in 0..=MAX_REDIRECTS {
        let pinned = check_hop(&url, from.as_ref(), &approved, policy).await?;
        let client = client(url.host_str().zip(pinned.as_deref()))?;
        let response = client
            .get(url.clone())
            .header(ACCEPT, ACCEPTED)
            .send()
            .await
            .map_err(|e| ToolError::Failed(format!("web_fetch: {url}: {}", describe(&e))))?;
        let status = response.status();
        let location = response.headers().get(LOCATION).and_then(|v| v.to_str().ok());
        if status.is_redirection()
            && status != reqwest::StatusCode::NOT_MODIFIED
            && let Some(location) = location
        {
            let next = url.join(location).map_err(|e| {
                ToolError::Failed(format!("web_fetch: {url} redirects to `{location}`, not a URL: {e}"))
            })?;
            if hop == MAX_REDIRECTS {
                return Err(ToolError::Failed(format!(
                    "web_fetch: stopped after {MAX_REDIRECTS} redirects ({url} redirects to {next})"
                )));
            }
            from = Some(url);
            url = next;
            continue;
        }
        return read(url, response, download_limit).await;
    }
    Err(ToolError::Failed(format!("web_fetch: stopped after {MAX_REDIRECTS} redirects at {url}")))
}

/// Reads the response of `url`: nothing of a binary body, at most `limit` bytes of any other.
async fn read(url: Url, mut response: reqwest::Response, limit: usize) -> Result<Fetched, ToolError> {
    let header =
        |name| response.headers().get(name).and_then(|v: &reqwest::header::HeaderValue| v.to_str().ok());
    let content_type = header(CONTENT_TYPE).and_then(parse_content_type);
    let length = header(CONTENT_LENGTH).and_then(|v| v.trim().parse().ok());
    let kind = kind(content_type.as_ref());
    let status = response.status();
    let mut fetched = Fetched { url, status, content_type, kind, body: Vec::new(), length, truncated: false };
    if kind == Kind::Binary {
        return Ok(fetched);
    }
    while let Some(chunk) = response.chunk().await.map_err(|e| {
        ToolError::Failed(format!("web_fetch: {}: the body broke off: {}", fetched.url, describe(&e)))
    })? {
        let room = limit - fetched.body.len();
        if chunk.len() > room {
            fetched.body.extend_from_slice(&chunk[..room]);
            fetched.truncated = true;
            break;
        }
        fetched.body.extend_from_slice(&chunk);
    }
    Ok(fetched)
}

/// Checks one hop before it connects; returns the addresses to pin a host name to (`None` for a
/// literal IP address). `from` is the URL that redirected here (`None` for the first hop);
/// `approved` the host the call was approved for.
pub async fn check_hop(
    url: &Url,
    from: Option<&Url>,
    approved: &str,
    policy: &Policy,
) -> Result<Option<Vec<SocketAddr>>, ToolError> {
    let redirected = |what: String| match from {
        Some(from) => format!("web_fetch: {from} redirects to {url}, {what}"),
        None => format!("web_fetch: {url}: {what}"),
    };
    check_scheme(url).map_err(|why| ToolError::Refused(redirected(why)))?;
    let host = url.host_str().unwrap_or_default();
    if from.is_some() && host != approved {
        let decision = policy.decide("web_fetch", &Access::Fetch { url: url.to_string() });
        if decision.verdict != Verdict::Allow {
            let rule = format!("WebFetch(domain:{host})");
            return Err(ToolError::Refused(redirected(format!(
                "another host, which this call was not approved for ({}). To follow it, fetch that URL \
                 with web_fetch (it is asked about on its own) or add `{rule}` to permissions.allow in \
                 .lathe/settings.json",
                decision.reason
            ))));
        }
    }
    if let Some(why) = restricted_literal(url) {
        return match policy.fetch_host_rule(host) {
            Some(_) => Ok(None),
            None => Err(ToolError::Refused(redirected(refusal(host, &why, policy)))),
        };
    }
    let Some(Host::Domain(name)) = url.host() else { return Ok(None) };
    let port = url.port_or_known_default().unwrap_or(80);
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((name, port))
        .await
        .map_err(|e| ToolError::Failed(redirected(format!("cannot resolve {name}: {e}"))))?
        .collect();
    if addrs.is_empty() {
        return Err(ToolError::Failed(redirected(format!("{name} resolves to no address"))));
    }
    screen(name, &addrs, policy).map_err(|why| ToolError::Refused(redirected(why)))?;
    Ok(Some(addrs))
}

/// `Err` with the refusal when any of the addresses `name` resolved to is restricted and no allow
/// rule names the host (one bad address is enough: the connection may go to any of them).
pub fn screen(name: &str, addrs: &[SocketAddr], policy: &Policy) -> Result<(), String> {
    let Some((ip, why)) =
        addrs.iter().find_map(|addr| address::restricted(addr.ip()).map(|why| (addr.ip(), why)))
    else {
        return Ok(());
    };
    match policy.fetch_host_rule(name) {
        Some(_) => Ok(()),
        None => Err(refusal(name, &format!("{name} resolves to {ip}, {why}"), policy)),
    }
}

/// `Err` with why, for a URL that is not http or https or has no host.
pub fn check_scheme(url: &Url) -> Result<(), String> {
    match url.scheme() {
        "http" | "https" if url.host_str().is_some_and(|host| !host.is_empty()) => Ok(()),
        "http" | "https" => Err("the URL has no host".into()),
        other => Err(format!(
            "web_fetch fetches only http and https URLs, not {other}: (read local files with read_file)"
        )),
    }
}

/// Why `url`'s host is restricted without resolving it: a literal address in a restricted range
/// (`127.0.0.1`, `2130706433`, `[::ffff:127.0.0.1]`, normalised by the URL parser) or `localhost`.
pub fn restricted_literal(url: &Url) -> Option<String> {
    let (ip, why): (IpAddr, _) = match url.host()? {
        Host::Ipv4(ip) => (ip.into(), address::restricted(ip.into())?),
        Host::Ipv6(ip) => (ip.into(), address::restricted(ip.into())?),
        Host::Domain(name) => return address::restricted_name(name).map(|why| format!("{name} is {why}")),
    };
    Some(format!("{ip} is {why}"))
}

/// The refusal of a restricted address: what it is, the rule that would allow it, and the
/// sandbox's network policy.
pub fn refusal(host: &str, why: &str, policy: &Policy) -> String {
    format!(
        "{why}, which web_fetch reaches only when an allow rule names the host: add \
         `WebFetch(domain:{host})` to permissions.allow in .lathe/settings.json (no mode allows it, \
         --yolo included; {})",
        policy.network_note()
    )
}

/// A client that follows no redirect, uses no proxy and, for a host name, connects only to
/// `pinned`'s addresses.
pub(super) fn client(pinned: Option<(&str, &[SocketAddr])>) -> Result<reqwest::Client, ToolError> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut builder = reqwest::Client::builder()
        .tls_backend_preconfigured(tls_config()?)
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .connect_timeout(CONNECT_TIMEOUT)
        .user_agent(USER_AGENT);
    if let Some((host, addrs)) = pinned {
        builder = builder.resolve_to_addrs(host, addrs);
    }
    builder.build().map_err(|e| ToolError::Failed(format!("web_fetch: cannot build the HTTP client: {e}")))
}

/// rustls on ring with Mozilla's roots compiled in (webpki-roots), as the providers' client.
fn tls_config() -> Result<rustls::ClientConfig, ToolError> {
    let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| ToolError::Failed(format!("web_fetch: cannot set up TLS: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

/// An error and its causes in one line (`error sending request: … : Connection refused`).
fn describe(error: &reqwest::Error) -> String {
    let mut message = if error.is_timeout() { "timed out".to_string() } else { error.to_string() };
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    message
}
