//! `web_fetch{url, max_bytes?}`: an HTTP(S) GET whose page comes back as Markdown (HTML) or as it
//! is (text, JSON); binary content is refused with its type.
//!
//! Order: parse the URL (http and https only) → the permission decision on its host
//! (`WebFetch(domain:…)` rules and the mode; the policy's, before the call runs) → before anyone
//! is asked, a literal address or `localhost` in a restricted range ([`address`]) is refused
//! unless an allow rule names the host ([`Tool::precheck`]) → each hop checked and pinned to the
//! addresses it resolved to, redirects followed by hand and re-checked (a redirect to another host
//! needs that host allowed without asking; [`http`]) → the body read up to
//! [`MAX_DOWNLOAD_BYTES`] → converted ([`content`], [`html`]) → the text cut at `max_bytes` (default
//! [`DEFAULT_MAX_BYTES`]), the whole of it spilled to a file the result names.
//!
//! The whole call has [`TIME_LIMIT`]; the session's cancellation ends it at once.

mod address;
mod content;
mod html;
mod http;

use lathe_protocol::{ResultView, ToolPreview};
use schemars::JsonSchema;
use serde::Deserialize;
use url::Url;

use self::content::{Kind, grouped};
use crate::context::ToolContext;
use crate::tool::{Access, Effect, Tool, ToolError, ToolOutput};

pub use address::{restricted, restricted_name};
pub use http::{MAX_REDIRECTS, USER_AGENT};

/// Bytes of text returned when the call gives no `max_bytes`.
pub const DEFAULT_MAX_BYTES: usize = 100_000;
/// The largest `max_bytes` honoured (read_file's output cap).
pub const MAX_MAX_BYTES: usize = 256 * 1024;
/// Bytes of a body downloaded at most; the rest is not fetched.
pub const MAX_DOWNLOAD_BYTES: usize = 10 * 1024 * 1024;
/// Time allowed for the whole call: every hop, and reading the body.
pub const TIME_LIMIT: std::time::Duration = std::time::Duration::from_secs(30);

/// The `web_fetch` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct WebFetch;

/// Arguments of `web_fetch`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WebFetchArgs {
    /// The http(s) URL.
    pub url: String,
    /// Bytes of text to return (default 100000); the rest goes to a file.
    #[schemars(range(min = 1))]
    pub max_bytes: Option<u64>,
}

impl Tool for WebFetch {
    type Args = WebFetchArgs;

    fn name(&self) -> &'static str {
        "web_fetch"
    }

    fn description(&self) -> &'static str {
        "HTTP GET a URL: HTML comes back as Markdown, text and JSON as they are; binary is refused. \
         Needs permission per domain."
    }

    /// Network: it changes nothing locally, so it may run with a response's read-only calls.
    fn effect(&self) -> Effect {
        Effect::Network
    }

    /// The URL as the parser normalises it (`HTTP://2130706433` → `http://127.0.0.1/`), so the
    /// policy judges the host that will be reached; as written when it does not parse (the
    /// precheck refuses it).
    fn access(&self, args: &WebFetchArgs, _ctx: &ToolContext) -> Access {
        let url = Url::parse(args.url.trim()).map(String::from).unwrap_or_else(|_| args.url.clone());
        Access::Fetch { url }
    }

    fn preview(&self, args: &WebFetchArgs, _ctx: &ToolContext) -> Option<ToolPreview> {
        Some(ToolPreview::Url { url: args.url.clone() })
    }

    /// A URL that does not parse, is not http(s), or names a restricted address or `localhost`
    /// without an allow rule naming its host, is refused before anyone is asked.
    fn precheck(&self, args: &WebFetchArgs, ctx: &ToolContext) -> Result<(), ToolError> {
        let url = parse(&args.url)?;
        if let Some(why) = http::restricted_literal(&url) {
            let host = url.host_str().unwrap_or_default();
            let policy = policy(ctx);
            if policy.fetch_host_rule(host).is_none() {
                return Err(ToolError::Refused(format!(
                    "web_fetch: {url}: {}",
                    http::refusal(host, &why, &policy)
                )));
            }
        }
        Ok(())
    }

    async fn run(&self, args: WebFetchArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let url = parse(&args.url)?;
        let max_bytes = args.max_bytes.map_or(DEFAULT_MAX_BYTES, |n| n.min(MAX_MAX_BYTES as u64) as usize);
        let policy = policy(ctx);
        let fetched = tokio::select! {
            biased;
            _ = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
            fetched = tokio::time::timeout(TIME_LIMIT, http::fetch(url.clone(), &policy, MAX_DOWNLOAD_BYTES)) => {
                fetched.map_err(|_| ToolError::TimedOut(TIME_LIMIT.as_millis() as u64))??
            }
        };
        render(&url, fetched, max_bytes, ctx).await
    }
}

/// The URL of a call, or why it is not one web_fetch fetches.
fn parse(raw: &str) -> Result<Url, ToolError> {
    let url = Url::parse(raw.trim())
        .map_err(|e| ToolError::Failed(format!("web_fetch: `{raw}` is not a valid URL: {e}")))?;
    http::check_scheme(&url).map_err(|why| ToolError::Failed(format!("web_fetch: {url}: {why}")))?;
    Ok(url)
}

/// The session's policy; outside a session, one with no rules in mode `default` (so a redirect to
/// another host and every restricted address are refused).
fn policy(ctx: &ToolContext) -> std::sync::Arc<lathe_policy::Policy> {
    ctx.policy.clone().unwrap_or_else(|| {
        std::sync::Arc::new(lathe_policy::Policy::with_mode(
            lathe_policy::PermissionMode::Default,
            &ctx.workspace,
        ))
    })
}

/// The result: a header line (final URL, status, type), the text cut at `max_bytes` with the whole
/// of it spilled, or the refusal of a binary body.
async fn render(
    asked: &Url,
    fetched: http::Fetched,
    max_bytes: usize,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    let mime = fetched.content_type.as_ref().map_or("no content type", |ct| ct.mime.as_str()).to_string();
    let binary = fetched.kind == Kind::Binary
        || (fetched.kind == Kind::Unknown && content::looks_binary(&fetched.body));
    if binary {
        let size = match (fetched.kind, fetched.length) {
            (Kind::Unknown, _) => format!("{} bytes", grouped(fetched.body.len() as u64)),
            (_, Some(length)) => format!("{} bytes", grouped(length)),
            (_, None) => "size not given".to_string(),
        };
        return Err(ToolError::Failed(format!(
            "web_fetch: {}: binary content ({mime}, {size}) not fetched; web_fetch returns HTML, text and JSON",
            fetched.url
        )));
    }
    let charset = fetched.content_type.as_ref().and_then(|ct| ct.charset.clone());
    let is_html = fetched.kind == Kind::Html;
    let body = fetched.body;
    let base = fetched.url.clone();
    let text = super::blocking(ctx, move || {
        let text = content::decode(&body, charset.as_deref());
        if is_html { html::to_markdown(&text, &base) } else { text }
    })
    .await?;

    let status = fetched.status;
    let what = if is_html { "Markdown" } else { "text" };
    let mut out = format!(
        "Fetched {} (HTTP {}, {mime}{}, {} bytes)\n",
        fetched.url,
        status.as_u16(),
        if is_html { " converted to Markdown" } else { "" },
        grouped(text.len() as u64)
    );
    if fetched.url != *asked {
        out.push_str(&format!("Redirected from {asked}\n"));
    }
    out.push('\n');
    let (shown, spill_path) = cap(&text, max_bytes, ctx);
    out.push_str(if text.is_empty() { "(empty body)" } else { &shown });
    if fetched.truncated {
        out.push_str(&format!(
            "\n\n[the download stopped at {} bytes; the rest of the body was not fetched]",
            grouped(MAX_DOWNLOAD_BYTES as u64)
        ));
    }
    let view = format!("HTTP {}, {} bytes of {what}", status.as_u16(), grouped(text.len() as u64));
    Ok(ToolOutput {
        is_error: status.is_client_error() || status.is_server_error(),
        spill_path,
        view: Some(ResultView::Line { text: view }),
        ..ToolOutput::text(out)
    })
}

/// `text` cut to at most `max_bytes` bytes (at a line end in the second half when there is one),
/// followed by a line saying how much was left out and where the whole text was saved.
fn cap(text: &str, max_bytes: usize, ctx: &ToolContext) -> (String, Option<std::path::PathBuf>) {
    if text.len() <= max_bytes {
        return (text.to_string(), None);
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    if let Some(newline) = text[..end].rfind('\n').filter(|&nl| nl >= end / 2) {
        end = newline + 1;
    }
    let left = grouped((text.len() - end) as u64);
    let total = grouped(text.len() as u64);
    let (note, path) = match crate::output::spill(text, &ctx.spill_dir, "web_fetch") {
        Ok(path) => (
            format!(
                "[... {left} more bytes not shown; the whole text ({total} bytes, {} lines) is saved to {}; \
                 read it with read_file (offset/limit) or grep ...]",
                text.lines().count(),
                path.display()
            ),
            Some(path),
        ),
        Err(e) => {
            (format!("[... {left} more bytes not shown; the whole text could not be saved: {e} ...]"), None)
        }
    };
    let head = text[..end].trim_end_matches('\n');
    (format!("{head}\n\n{note}"), path)
}

#[cfg(test)]
#[path = "web_fetch_tests.rs"]
mod tests;
