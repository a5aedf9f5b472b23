//! Finding value-shaped secrets in text, so memory never stores one.
//!
//! Two kinds of rule: known token formats (AWS key ids, GitHub, GitLab, OpenAI/Anthropic-style
//! `sk-`, Stripe `sk_live_`, Slack, PEM private keys, JWTs, `Bearer` tokens), credentials by name
//! (`password=`-style assignments, the password of a URL, "the password is …" in prose) whose
//! value is not a placeholder; and an entropy check for long random-looking tokens (32+ characters of
//! `[A-Za-z0-9+/=_-]`, at least 4.0 bits of Shannon entropy per character, letters and digits
//! both present, not hex: git SHAs, digests and UUIDs are never flagged; a token holding `/` must
//! mix upper and lower case, so paths are not flagged either). Hits that overlap an earlier, more specific hit are dropped.

use std::sync::{LazyLock, OnceLock};

use regex::Regex;

/// One secret found: its kind and its byte range in the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretHit {
    /// What it looks like: `aws-access-key`, `github-token`, `gitlab-token`, `api-key`, `slack-token`,
    /// `private-key`, `jwt`, `bearer-token`, `credential`, `high-entropy-token`.
    pub kind: &'static str,
    /// Byte offset of its first byte.
    pub start: usize,
    /// Byte offset just past its last byte.
    pub end: usize,
}

/// Shortest token the entropy check looks at, in characters.
const ENTROPY_MIN_CHARS: usize = 32;
/// Least Shannon entropy, in bits per character, of a token flagged by the entropy check.
const ENTROPY_MIN_BITS: f64 = 4.0;

/// One rule: its kind, the words its pattern needs (lowercase; text holding none of them cannot
/// match, and the rule is neither compiled nor run on it), the pattern, the capture group holding
/// the secret (0: the whole match) and an extra check on the secret's text.
struct Spec {
    kind: &'static str,
    words: &'static [&'static str],
    pattern: &'static str,
    group: usize,
    accept: fn(&str) -> bool,
}

const fn rule(
    kind: &'static str,
    words: &'static [&'static str],
    pattern: &'static str,
    group: usize,
    accept: fn(&str) -> bool,
) -> Spec {
    Spec { kind, words, pattern, group, accept }
}

fn always(_: &str) -> bool {
    true
}

// A token format may follow `_` (`AWS_KEY_AKIA…`, `TOKEN_ghp_…`), which `\b` does not see as a
// boundary; group 1 is the token itself.
const SPECS: &[Spec] = &[
    rule(
        "private-key",
        &["-----begin"],
        r"(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)",
        0,
        always,
    ),
    // An AWS key id in base64 (`AKIA` encodes as `QUtJQ`).
    rule("aws-access-key", &["qutjq"], r"(QUtJQ[A-Za-z0-9+/]{20,}={0,2})", 1, always),
    rule("basic-auth", &["basic"], r"(?i)\bbasic\s+([A-Za-z0-9+/]{8,}={0,2})", 1, letters_and_digits),
    rule(
        "aws-access-key",
        &["akia", "asia", "abia", "acca"],
        r"((?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})",
        1,
        always,
    ),
    rule(
        "github-token",
        &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        r"(?:\b|_)((?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,})",
        1,
        always,
    ),
    rule("github-token", &["github_pat_"], r"(?:\b|_)(github_pat_[A-Za-z0-9_]{22,})", 1, always),
    rule(
        "gitlab-token",
        &["glpat-", "glptt-", "gldt-", "glrt-", "glcbt-", "gloas-", "glsoat-"],
        r"(?:\b|_)(gl(?:pat|ptt|dt|rt|cbt|oas|soat)-[A-Za-z0-9_-]{20,})",
        1,
        always,
    ),
    rule("api-key", &["sk-"], r"(?:\b|_)(sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,})", 1, letters_and_digits),
    rule(
        "api-key",
        &["sk_live_", "sk_test_", "rk_live_", "rk_test_"],
        r"(?:\b|_)((?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,})",
        1,
        always,
    ),
    rule("slack-token", &["xox"], r"(?:\b|_)(xox[baprs]-[A-Za-z0-9-]{10,})", 1, always),
    rule("jwt", &["eyj"], r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}", 0, always),
    rule("bearer-token", &["bearer"], r"(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{20,})", 1, not_a_word),
    // `postgres://user:pass@host`: the password of a URL.
    rule(
        "credential",
        &["://"],
        r"(?i)\b[a-z][a-z0-9+.-]*://[^\s:/@'\x22`]*:([^\s@/'\x22`]+)@",
        1,
        url_password,
    ),
    // `password=…`, `DB_PASSWORD_PROD: …`, `PGPASSWORD=…`, `db_pass: …`, `api_key: …`.
    rule(
        "credential",
        &["pass", "pwd", "secret", "key", "token", "credential"],
        r#"(?i)(?:(?:password|passwd|passphrase|pwd)(?:[_-][a-z0-9]+)?|(?:\b|_)(?:pass|secret|client[_-]?secret|secret[_-]?key|private[_-]?key|api[_-]?key|apikey|access[_-]?key|auth[_-]?token|token|credentials?))["']?\s*[:=]\s*("[^"\n]*"|'[^'\n]*'|`[^`\n]*`|[^\s"'`,;()\[\]{}<>]+)"#,
        1,
        non_trivial_value,
    ),
    // A quoted passphrase: `password: "correct horse battery staple"`.
    rule(
        "credential",
        &["pass", "pwd"],
        r#"(?i)(?:password|passwd|passphrase|pwd)["']?\s*[:=]\s*("[^"\n]{4,}"|'[^'\n]{4,}')"#,
        1,
        quoted_passphrase,
    ),
    // A password-family key with a value of letters: `password=CorrectHorseBatteryStaple`.
    rule(
        "credential",
        &["pass", "pwd"],
        r#"(?i)(?:password|passwd|passphrase|pwd)["']?\s*[:=]\s*([A-Za-z]{8,})\b"#,
        1,
        letters_password,
    ),
    // On a command line: `--password S3cr3t`, `curl -u admin:S3cr3t`, `mysql -pS3cr3t`,
    // `sshpass -p 'S3cr3t'`.
    rule(
        "credential",
        &["--pass"],
        r#"(?:--password|--passwd|--pass)(?:=|\s+)("[^"\n]+"|'[^'\n]+'|[^\s"'`]+)"#,
        1,
        flag_value,
    ),
    rule("credential", &["curl"], r#"\bcurl\b[^\n]*?\s(?:-u|--user)\s+[^\s:]+:([^\s"'`]+)"#, 1, flag_value),
    rule(
        "credential",
        &["mysql", "mariadb"],
        r#"\b(?:mysql|mysqldump|mariadb)\b[^\n]*?\s-p([^\s"'`]+)"#,
        1,
        flag_value,
    ),
    rule("credential", &["sshpass"], r#"\bsshpass\s+-p\s*("[^"\n]+"|'[^'\n]+'|[^\s"'`]+)"#, 1, flag_value),
    // Prose: "the db password is hunter2", "the API key is `k3y-value`".
    rule(
        "credential",
        &["pass", "pwd", "secret", "token", "key"],
        r#"(?i)\b(?:password|passwd|passphrase|pwd|secret|token|api[ _-]?key|access[ _-]?key)(?:\s+[A-Za-z0-9_-]+){0,3}?\s+(?:is|was)\s+(?:set\s+to\s+|now\s+)?("[^"\n]*"|'[^'\n]*'|`[^`\n]*`|[^\s"'`,;()\[\]{}<>]+)"#,
        1,
        prose_value,
    ),
];

/// Each rule's regex, compiled the first time text holds one of its words.
static COMPILED: LazyLock<Vec<OnceLock<Option<Regex>>>> =
    LazyLock::new(|| SPECS.iter().map(|_| OnceLock::new()).collect());

fn regex(at: usize) -> Option<&'static Regex> {
    COMPILED.get(at)?.get_or_init(|| Regex::new(SPECS[at].pattern).ok()).as_ref()
}

const TOKEN_PATTERN: &str = r"[A-Za-z0-9+/=_-]{32,}";

static TOKENS: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(TOKEN_PATTERN).ok());

/// What the rules are, as a SHA-256 hex digest of Lathe's version, every pattern, kind and group
/// and the entropy limits: a record of lines found clean ([`super::clean_lines`]) is valid only for
/// the rules that checked them.
pub fn fingerprint() -> String {
    use sha2::{Digest, Sha256};
    let mut hash = Sha256::new();
    hash.update(env!("CARGO_PKG_VERSION"));
    for spec in SPECS {
        hash.update(format!("\0{}\0{}\0{}\0{}", spec.kind, spec.words.join(" "), spec.pattern, spec.group));
    }
    hash.update(format!("\0{TOKEN_PATTERN}\0{ENTROPY_MIN_CHARS}\0{ENTROPY_MIN_BITS}"));
    hex::encode(hash.finalize())
}

/// Every secret-looking span in `text`, sorted by position, none overlapping.
///
/// Invisible characters (zero-width spaces and joiners, bidi marks, soft hyphens, control
/// characters other than line breaks and tabs) are looked through: `AKIA\u{200b}IOSF…` is found,
/// and its span covers the invisible characters inside it.
pub fn find_secrets(text: &str) -> Vec<SecretHit> {
    if !text.chars().any(super::sanitize::is_invisible) {
        return find_visible(text);
    }
    // `visible` without the invisible characters, and for each of its bytes the offset of the
    // same byte in `text`.
    let mut visible = String::with_capacity(text.len());
    let mut offsets = Vec::with_capacity(text.len() + 1);
    for (at, c) in text.char_indices() {
        if !super::sanitize::is_invisible(c) {
            visible.push(c);
            offsets.extend(at..at + c.len_utf8());
        }
    }
    find_visible(&visible)
        .into_iter()
        .map(|hit| SecretHit { kind: hit.kind, start: offsets[hit.start], end: offsets[hit.end - 1] + 1 })
        .collect()
}

/// `text` lowercased as the rules' `(?i)` sees it (simple case folding: the Kelvin sign is `k`,
/// the long s is `s`), for the word checks.
fn fold(text: &str) -> String {
    if text.is_ascii() {
        return text.to_ascii_lowercase();
    }
    text.chars()
        .flat_map(char::to_lowercase)
        .map(|c| match c {
            '\u{17f}' => 's',
            other => other,
        })
        .collect()
}

fn find_visible(text: &str) -> Vec<SecretHit> {
    let mut hits = Vec::new();
    let words = fold(text);
    for (at, spec) in SPECS.iter().enumerate() {
        if !spec.words.iter().any(|word| words.contains(word)) {
            continue;
        }
        let Some(regex) = regex(at) else { continue };
        for captures in regex.captures_iter(text) {
            let Some(found) = captures.get(spec.group) else { continue };
            if (spec.accept)(found.as_str()) {
                push(&mut hits, SecretHit { kind: spec.kind, start: found.start(), end: found.end() });
            }
        }
    }
    if let Some(tokens) = TOKENS.as_ref() {
        for found in tokens.find_iter(text) {
            if looks_random(found.as_str()) {
                push(
                    &mut hits,
                    SecretHit { kind: "high-entropy-token", start: found.start(), end: found.end() },
                );
            }
        }
    }
    hits.sort_by_key(|hit| hit.start);
    hits
}

/// `text` with each secret replaced by `[REDACTED:<kind>]`, and the kinds found (each once, in
/// order of first appearance).
pub fn redact(text: &str) -> (String, Vec<&'static str>) {
    let hits = find_secrets(text);
    if hits.is_empty() {
        return (text.to_string(), Vec::new());
    }
    let mut out = String::with_capacity(text.len());
    let mut kinds = Vec::new();
    let mut at = 0;
    for hit in &hits {
        out.push_str(&text[at..hit.start]);
        out.push_str("[REDACTED:");
        out.push_str(hit.kind);
        out.push(']');
        at = hit.end;
        if !kinds.contains(&hit.kind) {
            kinds.push(hit.kind);
        }
    }
    out.push_str(&text[at..]);
    (out, kinds)
}

/// The kinds named by the `[REDACTED:<kind>]` marks in `text` (left by [`redact`] when a call's
/// arguments were recorded), each once; a mark naming no known kind counts as `credential`.
pub fn redaction_marks(text: &str) -> Vec<&'static str> {
    let mut kinds = Vec::new();
    for (at, _) in text.match_indices("[REDACTED:") {
        let rest = &text[at + "[REDACTED:".len()..];
        let named = rest.split(']').next().unwrap_or("");
        let kind = SPECS
            .iter()
            .map(|spec| spec.kind)
            .chain(["high-entropy-token"])
            .find(|kind| *kind == named)
            .unwrap_or("credential");
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    kinds
}

/// [`redact`] line by line: for long text shown to the model (an index, recalled entries), where
/// a secret never spans lines (a private key's lines are each redacted), and the rules run only
/// on the lines that hold one of their words.
pub fn redact_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        out.push_str(&redact(line).0);
    }
    out
}

/// Redacts every string inside `value` (object keys are kept); returns the kinds found, each once.
pub fn redact_value(value: &mut serde_json::Value) -> Vec<&'static str> {
    let mut kinds = Vec::new();
    redact_into(value, &mut kinds);
    kinds
}

fn redact_into(value: &mut serde_json::Value, kinds: &mut Vec<&'static str>) {
    match value {
        serde_json::Value::String(text) => {
            let (redacted, found) = redact(text);
            if !found.is_empty() {
                *text = redacted;
                for kind in found {
                    if !kinds.contains(&kind) {
                        kinds.push(kind);
                    }
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(|item| redact_into(item, kinds)),
        serde_json::Value::Object(map) => map.values_mut().for_each(|item| redact_into(item, kinds)),
        serde_json::Value::Null | serde_json::Value::Bool(_) | serde_json::Value::Number(_) => {}
    }
}

/// Adds `hit` unless it overlaps one already found.
fn push(hits: &mut Vec<SecretHit>, hit: SecretHit) {
    if !hits.iter().any(|old| hit.start < old.end && old.start < hit.end) {
        hits.push(hit);
    }
}

fn letters_and_digits(text: &str) -> bool {
    text.bytes().any(|b| b.is_ascii_alphabetic()) && text.bytes().any(|b| b.is_ascii_digit())
}

/// A bearer token, not an English word run (`Bearer authentication_is_described_here`).
fn not_a_word(text: &str) -> bool {
    !text.bytes().all(|b| b.is_ascii_lowercase() || b == b'_' || b == b'-')
}

/// An assignment's value that is a real value, not a placeholder (`<redacted>`, `${PASSWORD}`,
/// `$TOKEN`, `***`, `xxxx`), a reference (`env.TOKEN`, a path), a type (`String`, `&str`), a
/// number or a short word.
fn non_trivial_value(raw: &str) -> bool {
    let (quoted, value) = unquote(raw);
    let value = value.trim();
    if value.chars().count() < 4 || value.contains("REDACTED") || value.chars().any(char::is_whitespace) {
        return false;
    }
    let first = value.chars().next().unwrap_or(' ');
    if matches!(first, '<' | '$' | '{' | '%' | '[' | '*' | '&' | '/' | '~' | '.' | '(') {
        return false;
    }
    if value.bytes().all(|b| b.is_ascii_digit()) || value.chars().all(|c| c == first) {
        return false;
    }
    let lower = value.to_ascii_lowercase();
    if PLACEHOLDERS.contains(&lower.as_str()) || lower.starts_with("xxx") || lower.starts_with("your") {
        return false;
    }
    // `env.TOKEN`, `config.api_key`, `self.password`: a reference, not a value.
    if !quoted && value.contains('.') && value.split('.').all(|part| part.bytes().all(is_ident)) {
        return false;
    }
    // Unquoted words without digits: a type (`String`), an identifier (`get_token`) or prose
    // (`password: see the vault`); a path in code (`std::env::var`).
    if !quoted
        && (value.contains("::") || value.bytes().all(|b| b.is_ascii_alphabetic() || b == b'_' || b == b'-'))
    {
        return false;
    }
    true
}

/// Words that stand for a value without being one (`password: required`).
const PLACEHOLDERS: [&str; 15] = [
    "redacted",
    "none",
    "null",
    "true",
    "false",
    "required",
    "optional",
    "string",
    "secret",
    "password",
    "hidden",
    "empty",
    "changeme",
    "example",
    "placeholder",
];

/// Whether `raw` is quoted (`"…"`, `'…'`, `` `…` ``), and the text inside the quotes (all of
/// `raw` when it is not).
fn unquote(raw: &str) -> (bool, &str) {
    let quoted = raw.len() >= 2 && raw.starts_with(['"', '\'', '`']);
    (quoted, if quoted { &raw[1..raw.len() - 1] } else { raw })
}

/// A variable or placeholder where a value would be (`$PASS`, `<password>`, `{pw}`, `***`,
/// `xxx`, a redaction mark).
fn stands_for_a_value(value: &str) -> bool {
    value.starts_with(['$', '<', '{', '%', '*', '['])
        || value.to_ascii_lowercase().starts_with("xxx")
        || value.contains("REDACTED")
}

/// A URL's password that is a value, not a placeholder.
fn url_password(value: &str) -> bool {
    !value.is_empty() && !stands_for_a_value(value)
}

/// A value named in prose ("the password is …"): quoted, or holding a digit or a symbol, as a
/// real password does; a plain word ("the password is in the vault") is prose.
fn prose_value(raw: &str) -> bool {
    let (quoted, value) = unquote(raw);
    let value = if quoted { value } else { value.trim_end_matches(['.', '!', '?', ':']) };
    let varied = value.bytes().any(|b| !b.is_ascii_alphabetic());
    (quoted || varied) && non_trivial_value(&format!("\"{value}\""))
}

/// A quoted passphrase (spaces allowed), unless a placeholder.
fn quoted_passphrase(raw: &str) -> bool {
    let value = unquote(raw).1.trim();
    let squeezed: String = value.split_whitespace().collect();
    value.contains(' ') && non_trivial_value(&format!("\"{squeezed}\""))
}

/// A password of letters only, long enough not to be a type or a word of prose.
fn letters_password(value: &str) -> bool {
    !PLACEHOLDERS.contains(&value.to_ascii_lowercase().as_str())
        && value.bytes().any(|b| b.is_ascii_uppercase())
        && value.bytes().any(|b| b.is_ascii_lowercase())
}

/// The value of a password flag, unless a variable or placeholder (`$PASS`, `<password>`).
fn flag_value(raw: &str) -> bool {
    let value = unquote(raw).1;
    value.len() >= 4 && !stands_for_a_value(value)
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The entropy rule: long, mixed letters and digits, at least [`ENTROPY_MIN_BITS`] per char.
/// Hex with separators (digests, UUIDs) is never random-looking here, and a token with `/` must
/// mix upper and lower case as base64 does (`target/x86_64-unknown-linux-gnu` is a path).
fn looks_random(token: &str) -> bool {
    let non_hex_letter = token.bytes().any(|b| b.is_ascii_alphabetic() && !b.is_ascii_hexdigit());
    let mixed_case =
        token.bytes().any(|b| b.is_ascii_uppercase()) && token.bytes().any(|b| b.is_ascii_lowercase());
    token.len() >= ENTROPY_MIN_CHARS
        && letters_and_digits(token)
        && non_hex_letter
        && (mixed_case || !token.contains('/'))
        && entropy_bits(token) >= ENTROPY_MIN_BITS
}

/// Shannon entropy of `text`'s bytes, in bits per byte.
pub fn entropy_bits(text: &str) -> f64 {
    let mut counts = [0u32; 256];
    for b in text.bytes() {
        counts[b as usize] += 1;
    }
    let len = text.len() as f64;
    counts.iter().filter(|&&n| n > 0).map(|&n| f64::from(n) / len).map(|p| -p * p.log2()).sum()
}

#[cfg(test)]
#[path = "secrets_tests.rs"]
mod tests;
