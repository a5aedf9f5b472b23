//! Retry delays a server states somewhere other than `retry-after`: in the error message, in a
//! structured error detail, or in rate-limit reset headers.
//!
//! [`crate::error::error_from_status`] asks, in order: `retry-after-ms` / `retry-after`
//! ([`crate::retry::retry_after_ms`]) → the body ([`body_hint_ms`]) → the rate-limit reset headers
//! ([`reset_header_ms`]). The first answer wins; the retry loop then waits that long (capped by
//! `RetryConfig::max_retry_after_ms`) instead of its own backoff.
//!
//! Sources, as the providers document or send them:
//! - messages such as OpenAI's "… Please try again in 1.5s." / "in 20ms" / "in 6m0s", Gemini's
//!   "Please retry in 16.45s", and "retry after 2 seconds";
//! - Google's `error.details[].retryDelay` (`google.rpc.RetryInfo`, e.g. `"16s"`);
//! - OpenAI-style `x-ratelimit-reset-requests` / `x-ratelimit-reset-tokens` (a Go-style duration
//!   such as `1s`, `6m0s`, `20ms`, or plain seconds), plain `x-ratelimit-reset` (seconds, or a Unix
//!   time in seconds or milliseconds), and Anthropic's `anthropic-ratelimit-*-reset` (RFC 3339
//!   times). When the matching `…-remaining-…` header says a limit is exhausted, that limit's reset
//!   is used; otherwise the latest reset.

use std::time::{Duration, SystemTime};

use serde_json::Value;

/// Phrases after which a message states how long to wait.
const PHRASES: [&str; 5] = ["try again in", "retry in", "retry after", "try again after", "wait"];

/// The delay a response body asks for, in milliseconds: a structured `retryDelay`, else a phrase
/// such as "try again in 1.5s" in the error message. `None` when the body states none.
pub fn body_hint_ms(body: &[u8], message: &str) -> Option<u64> {
    serde_json::from_slice::<Value>(body)
        .ok()
        .as_ref()
        .and_then(retry_delay_detail)
        .or_else(|| message_hint_ms(message))
}

/// The delay a message asks for ("Please try again in 1.5s." → 1500), in milliseconds.
pub fn message_hint_ms(message: &str) -> Option<u64> {
    let lower = message.to_ascii_lowercase();
    PHRASES.iter().find_map(|phrase| {
        lower
            .match_indices(phrase)
            .find_map(|(at, _)| parse_duration_ms(lower[at + phrase.len()..].trim_start()))
    })
}

/// `error.details[].retryDelay` (Google's `google.rpc.RetryInfo`).
fn retry_delay_detail(json: &Value) -> Option<u64> {
    let details = json.get("error").and_then(|error| error.get("details")).and_then(Value::as_array)?;
    details
        .iter()
        .filter_map(|detail| detail.get("retryDelay").and_then(Value::as_str))
        .find_map(parse_duration_ms)
}

/// Parses the duration at the start of `text`: a Go-style duration (`1h2m3.5s`, `6m0s`, `20ms`,
/// `1.5s`), or a number followed by a unit word (`2 seconds`, `500 milliseconds`, `1 minute`).
/// Trailing text is ignored. `None` when `text` does not start with a duration.
pub fn parse_duration_ms(text: &str) -> Option<u64> {
    let mut rest = text;
    let mut total = 0.0f64;
    let mut parts = 0;
    loop {
        let digits = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        if digits == 0 {
            break;
        }
        let Ok(value) = rest[..digits].parse::<f64>() else { break };
        let after = &rest[digits..];
        let spaced = after.trim_start();
        let (unit_ms, unit_len) = unit(after)
            .or_else(|| unit_word(spaced).map(|(ms, len)| (ms, len + after.len() - spaced.len())))?;
        total += value * unit_ms;
        parts += 1;
        rest = &after[unit_len..];
    }
    (parts > 0 && total.is_finite() && total >= 0.0).then(|| total.round() as u64)
}

/// A Go-style unit right after the number: `ms`, `s`, `m`, `h` (`m` not followed by `s`).
fn unit(text: &str) -> Option<(f64, usize)> {
    let next_is_letter = |len: usize| text[len..].chars().next().is_some_and(|c| c.is_ascii_alphabetic());
    if text.starts_with("ms") && !next_is_letter(2) {
        Some((1.0, 2))
    } else if text.starts_with('s') && !next_is_letter(1) {
        Some((1_000.0, 1))
    } else if text.starts_with('m') && !next_is_letter(1) {
        Some((60_000.0, 1))
    } else if text.starts_with('h') && !next_is_letter(1) {
        Some((3_600_000.0, 1))
    } else {
        None
    }
}

/// A unit word after a space: `milliseconds`, `seconds`, `secs`, `minutes`, `hours`.
fn unit_word(text: &str) -> Option<(f64, usize)> {
    let word_len = text.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(text.len());
    let ms = match &text[..word_len] {
        "ms" | "millisecond" | "milliseconds" => 1.0,
        "s" | "sec" | "secs" | "second" | "seconds" => 1_000.0,
        "min" | "mins" | "minute" | "minutes" => 60_000.0,
        "h" | "hour" | "hours" => 3_600_000.0,
        _ => return None,
    };
    Some((ms, word_len))
}

/// The delay the rate-limit reset headers imply, in milliseconds (see the module docs).
pub fn reset_header_ms(headers: &http::HeaderMap, now: SystemTime) -> Option<u64> {
    let get = |name: &str| headers.get(name).and_then(|value| value.to_str().ok()).map(str::trim);
    // (reset header, remaining header, how the reset is written)
    let limits: [(&str, &str, Format); 7] = [
        ("x-ratelimit-reset-requests", "x-ratelimit-remaining-requests", Format::Duration),
        ("x-ratelimit-reset-tokens", "x-ratelimit-remaining-tokens", Format::Duration),
        ("x-ratelimit-reset", "x-ratelimit-remaining", Format::SecondsOrEpoch),
        ("anthropic-ratelimit-requests-reset", "anthropic-ratelimit-requests-remaining", Format::Rfc3339),
        ("anthropic-ratelimit-tokens-reset", "anthropic-ratelimit-tokens-remaining", Format::Rfc3339),
        (
            "anthropic-ratelimit-input-tokens-reset",
            "anthropic-ratelimit-input-tokens-remaining",
            Format::Rfc3339,
        ),
        (
            "anthropic-ratelimit-output-tokens-reset",
            "anthropic-ratelimit-output-tokens-remaining",
            Format::Rfc3339,
        ),
    ];
    let mut exhausted = None::<u64>;
    let mut latest = None::<u64>;
    for (reset, remaining, format) in limits {
        let Some(delay) = get(reset).and_then(|value| format.delay_ms(value, now)) else { continue };
        latest = latest.max(Some(delay));
        if get(remaining).and_then(|value| value.parse::<f64>().ok()).is_some_and(|left| left <= 0.0) {
            exhausted = exhausted.max(Some(delay));
        }
    }
    exhausted.or(latest)
}

/// How a reset header writes its time.
#[derive(Clone, Copy)]
enum Format {
    /// A Go-style duration (`6m0s`) or plain seconds.
    Duration,
    /// Plain seconds, or a Unix time in seconds or milliseconds.
    SecondsOrEpoch,
    /// An RFC 3339 time.
    Rfc3339,
}

impl Format {
    fn delay_ms(self, value: &str, now: SystemTime) -> Option<u64> {
        let until =
            |target: SystemTime| target.duration_since(now).map_or(0, |delay| delay.as_millis() as u64);
        match self {
            Format::Duration => match value.parse::<f64>() {
                Ok(seconds) if seconds.is_finite() && seconds >= 0.0 => {
                    Some((seconds * 1000.0).round() as u64)
                }
                Ok(_) => None,
                Err(_) => parse_duration_ms(value),
            },
            Format::SecondsOrEpoch => {
                let number = value.parse::<f64>().ok().filter(|n| n.is_finite() && *n >= 0.0)?;
                if number >= 1e11 {
                    Some(until(SystemTime::UNIX_EPOCH + Duration::from_millis(number as u64)))
                } else if number >= 1e9 {
                    Some(until(SystemTime::UNIX_EPOCH + Duration::from_secs_f64(number)))
                } else {
                    Some((number * 1000.0).round() as u64)
                }
            }
            Format::Rfc3339 => {
                let time = chrono::DateTime::parse_from_rfc3339(value).ok()?;
                let millis = u64::try_from(time.timestamp_millis()).ok()?;
                Some(until(SystemTime::UNIX_EPOCH + Duration::from_millis(millis)))
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "retry_hint_tests.rs"]
mod tests;
