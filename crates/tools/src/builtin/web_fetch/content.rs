//! What `web_fetch` makes of a response body: HTML becomes Markdown, text and JSON stay as they are, decoded from the
//! charset the `Content-Type` header names (UTF-8 when it names none or one encoding_rs does not
//! know; a byte-order mark wins; invalid bytes become U+FFFD), and anything else is refused with its
//! type. A body without a `Content-Type` is taken for text unless its first 8 KiB hold a NUL byte.
//! The HTML itself is [`super::html`]'s.

/// A parsed `Content-Type` header: the media type without parameters, lower-cased, and the charset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContentType {
    /// `text/html`, `application/json`.
    pub mime: String,
    /// The `charset` parameter, as written (`utf-8`, `ISO-8859-1`).
    pub charset: Option<String>,
}

/// How a body is turned into text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// HTML (`text/html`, `application/xhtml+xml`): converted to Markdown.
    Html,
    /// Text, JSON, XML, scripts: returned as they are.
    Text,
    /// No `Content-Type`: text unless the body looks binary.
    Unknown,
    /// Anything else (images, archives, PDF): not fetched.
    Binary,
}

/// Parses a `Content-Type` header value (`text/html; charset=UTF-8`); `None` when it is empty.
pub fn parse_content_type(value: &str) -> Option<ContentType> {
    let mut parts = value.split(';');
    let mime = parts.next()?.trim().to_ascii_lowercase();
    if mime.is_empty() {
        return None;
    }
    let charset = parts.find_map(|param| {
        let (name, value) = param.split_once('=')?;
        name.trim().eq_ignore_ascii_case("charset").then(|| value.trim().trim_matches('"').to_string())
    });
    Some(ContentType { mime, charset })
}

/// Media types outside `text/*` that are text.
const TEXT_TYPES: &[&str] = &[
    "application/json",
    "application/xml",
    "application/javascript",
    "application/ecmascript",
    "application/x-javascript",
    "application/yaml",
    "application/x-yaml",
    "application/toml",
    "application/x-ndjson",
    "application/x-sh",
    "application/sql",
    "application/graphql",
];

/// How a body of `content_type` is handled.
pub fn kind(content_type: Option<&ContentType>) -> Kind {
    let Some(content_type) = content_type else { return Kind::Unknown };
    let mime = content_type.mime.as_str();
    if mime == "text/html" || mime == "application/xhtml+xml" {
        Kind::Html
    } else if mime.starts_with("text/")
        || TEXT_TYPES.contains(&mime)
        || mime.ends_with("+json")
        || mime.ends_with("+xml")
    {
        Kind::Text
    } else {
        Kind::Binary
    }
}

/// Whether a body with no `Content-Type` is binary: a NUL byte in its first 8 KiB.
pub fn looks_binary(bytes: &[u8]) -> bool {
    bytes.iter().take(8192).any(|&b| b == 0)
}

/// `bytes` decoded with `charset` (UTF-8 when `None` or unknown; a BOM wins), invalid sequences
/// replaced by U+FFFD.
pub fn decode(bytes: &[u8], charset: Option<&str>) -> String {
    let encoding = charset
        .and_then(|label| encoding_rs::Encoding::for_label(label.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    let (text, _, _) = encoding.decode(bytes);
    text.into_owned()
}

/// `n` with its digits grouped by thousands with spaces (`12 345`).
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
#[path = "content_tests.rs"]
mod tests;
