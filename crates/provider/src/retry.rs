//! When and how long to wait before retrying a failed request.
//!
//! Retried: 408/409/429/500/502/503/504/529 (as typed by [`ProviderError::is_retryable`]), reset
//! connections, timeouts, and streams that break or report an overload or server error — also
//! after content started, in which case the whole response is requested again and the partial one
//! discarded. Never: other client errors, a refused connection (nothing listens at the base URL),
//! or cancellation.
//!
//! Delay for retry `n` (1-based): the server's `retry-after-ms` / `retry-after` (seconds or an HTTP
//! date) when present — else a delay stated in the error body or the rate-limit reset headers
//! ([`crate::retry_hint`]) — capped at [`RetryConfig::max_retry_after_ms`]; otherwise exponential backoff
//! `initial_delay_ms * 2^(n-1)`, capped at [`RetryConfig::max_delay_ms`], with up to 25 % of
//! random jitter subtracted so that clients retrying together spread out.

use std::time::{Duration, SystemTime};

use lathe_protocol::ProviderError;
use rand::Rng;
use serde::{Deserialize, Serialize};

/// Retry policy of one provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetryConfig {
    /// Retries after the first attempt (0 disables retrying).
    pub max_retries: u32,
    /// Backoff before the first retry, in milliseconds (`initial_delay_ms`, as in Lathe's
    /// `[retry]` config; `initial_backoff_ms` is accepted too).
    #[serde(alias = "initial_backoff_ms")]
    pub initial_delay_ms: u64,
    /// Upper bound of the exponential backoff, in milliseconds (`max_delay_ms`; `max_backoff_ms` is
    /// accepted too).
    #[serde(alias = "max_backoff_ms")]
    pub max_delay_ms: u64,
    /// Upper bound for a server-requested delay (`retry-after`), in milliseconds.
    pub max_retry_after_ms: u64,
    /// Whether to subtract random jitter (up to 25 %) from the exponential backoff.
    pub jitter: bool,
}

impl Default for RetryConfig {
    fn default() -> Self {
        RetryConfig {
            max_retries: 4,
            initial_delay_ms: 1_000,
            max_delay_ms: 30_000,
            max_retry_after_ms: 60_000,
            jitter: true,
        }
    }
}

impl RetryConfig {
    /// The delay before retry number `attempt` (1-based) after `error`.
    pub fn delay(&self, attempt: u32, error: &ProviderError) -> Duration {
        if let Some(server_ms) = error.retry_after_ms() {
            return Duration::from_millis(server_ms.min(self.max_retry_after_ms));
        }
        let exponent = attempt.saturating_sub(1).min(32);
        let backoff = self.initial_delay_ms.saturating_mul(1u64 << exponent).min(self.max_delay_ms);
        let jitter = if self.jitter && backoff >= 4 { rand::rng().random_range(0..=backoff / 4) } else { 0 };
        Duration::from_millis(backoff - jitter)
    }
}

/// Reads `retry-after-ms` (milliseconds, possibly fractional) or `retry-after` (delta seconds or
/// an HTTP date, RFC 9110 §10.2.3) from response headers. A date in the past gives 0.
pub fn retry_after_ms(headers: &http::HeaderMap, now: SystemTime) -> Option<u64> {
    if let Some(ms) = header_str(headers, "retry-after-ms").and_then(|value| value.trim().parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(ms.round() as u64);
    }
    let value = header_str(headers, "retry-after")?.trim().to_string();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| (seconds * 1000.0).round() as u64);
    }
    let date = chrono::DateTime::parse_from_rfc2822(&value).ok()?;
    let target = SystemTime::UNIX_EPOCH + Duration::from_millis(u64::try_from(date.timestamp_millis()).ok()?);
    Some(target.duration_since(now).map(|delay| delay.as_millis() as u64).unwrap_or(0))
}

fn header_str<'a>(headers: &'a http::HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use lathe_protocol::ApiError;

    fn headers(pairs: &[(&'static str, &'static str)]) -> http::HeaderMap {
        let mut map = http::HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, http::HeaderValue::from_static(value));
        }
        map
    }

    #[test]
    fn retry_after_accepts_seconds_milliseconds_and_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_470); // 2015-10-21 07:27:50 GMT
        assert_eq!(retry_after_ms(&headers(&[("retry-after", "2")]), now), Some(2_000));
        assert_eq!(retry_after_ms(&headers(&[("retry-after-ms", "1500.4")]), now), Some(1_500));
        assert_eq!(
            retry_after_ms(&headers(&[("retry-after", "2"), ("retry-after-ms", "250")]), now),
            Some(250),
            "retry-after-ms is more precise and wins"
        );
        assert_eq!(
            retry_after_ms(&headers(&[("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")]), now),
            Some(10_000)
        );
        assert_eq!(
            retry_after_ms(&headers(&[("retry-after", "Wed, 21 Oct 2015 07:00:00 GMT")]), now),
            Some(0)
        );
        assert_eq!(retry_after_ms(&headers(&[("retry-after", "soon")]), now), None);
        assert_eq!(retry_after_ms(&headers(&[]), now), None);
    }

    #[test]
    fn backoff_doubles_is_capped_and_jitter_only_shortens() {
        let config = RetryConfig { jitter: false, ..RetryConfig::default() };
        let error = ProviderError::Network { message: "reset".into() };
        let delays: Vec<u64> = (1..=7).map(|n| config.delay(n, &error).as_millis() as u64).collect();
        assert_eq!(delays, vec![1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
        let jittery = RetryConfig::default();
        for attempt in 1..=5 {
            let delay = jittery.delay(attempt, &error).as_millis() as u64;
            let full = delays[attempt as usize - 1];
            assert!(delay <= full && delay >= full * 3 / 4, "attempt {attempt}: {delay} vs {full}");
        }
    }

    #[test]
    fn server_delay_wins_and_is_capped() {
        let config = RetryConfig::default();
        let limited = |ms| ProviderError::RateLimited { retry_after_ms: Some(ms), api: ApiError::default() };
        assert_eq!(config.delay(1, &limited(2_000)), Duration::from_secs(2));
        assert_eq!(config.delay(1, &limited(3_600_000)), Duration::from_secs(60));
    }
}
