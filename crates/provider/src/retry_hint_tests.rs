use super::*;
use pretty_assertions::assert_eq;

fn headers(pairs: &[(&'static str, &'static str)]) -> http::HeaderMap {
    let mut map = http::HeaderMap::new();
    for (name, value) in pairs {
        map.insert(*name, http::HeaderValue::from_static(value));
    }
    map
}

#[test]
fn durations_in_go_style_and_in_words() {
    for (text, ms) in [
        ("1.5s.", 1_500),
        ("20ms", 20),
        ("6m0s", 360_000),
        ("1m30.5s and more", 90_500),
        ("1h2m3s", 3_723_000),
        ("2 seconds", 2_000),
        ("500 milliseconds", 500),
        ("1 minute", 60_000),
        ("16.45s", 16_450),
    ] {
        assert_eq!(parse_duration_ms(text), Some(ms), "{text}");
    }
    for text in ["a few minutes", "soon", "", "5 apples"] {
        assert_eq!(parse_duration_ms(text), None, "{text}");
    }
}

#[test]
fn messages_that_say_when_to_come_back() {
    let openai = "Rate limit reached for gpt-4.1 in organization org-x on tokens per min (TPM): Limit 30000, \
                  Used 29000, Requested 1500. Please try again in 1.5s. Visit https://platform.openai.com";
    assert_eq!(message_hint_ms(openai), Some(1_500));
    assert_eq!(message_hint_ms("Please try again in 20ms."), Some(20));
    assert_eq!(message_hint_ms("Quota exceeded. Please retry in 16.451s."), Some(16_451));
    assert_eq!(message_hint_ms("Too many requests, retry after 2 seconds"), Some(2_000));
    assert_eq!(message_hint_ms("rate limited"), None);
    assert_eq!(message_hint_ms("the request waited 30s in a queue"), None);
}

#[test]
fn google_retry_info_detail_wins_over_the_message() {
    let body = br#"{"error":{"code":429,"message":"Resource exhausted. Please retry in 3s.",
        "details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"16s"}]}}"#;
    assert_eq!(body_hint_ms(body, "Resource exhausted. Please retry in 3s."), Some(16_000));
    assert_eq!(body_hint_ms(b"not json", "please try again in 2s"), Some(2_000));
}

#[test]
fn reset_headers_prefer_the_exhausted_limit() {
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    let openai = headers(&[
        ("x-ratelimit-remaining-requests", "99"),
        ("x-ratelimit-reset-requests", "120ms"),
        ("x-ratelimit-remaining-tokens", "0"),
        ("x-ratelimit-reset-tokens", "6.5s"),
    ]);
    assert_eq!(reset_header_ms(&openai, now), Some(6_500));
    let no_remaining = headers(&[("x-ratelimit-reset-requests", "1s"), ("x-ratelimit-reset-tokens", "2m0s")]);
    assert_eq!(reset_header_ms(&no_remaining, now), Some(120_000), "the latest reset when none is exhausted");
    let requests_exhausted = headers(&[
        ("x-ratelimit-remaining-requests", "0"),
        ("x-ratelimit-reset-requests", "1s"),
        ("x-ratelimit-remaining-tokens", "5000"),
        ("x-ratelimit-reset-tokens", "2m0s"),
    ]);
    assert_eq!(reset_header_ms(&requests_exhausted, now), Some(1_000));
    let anthropic = headers(&[
        ("anthropic-ratelimit-requests-remaining", "0"),
        ("anthropic-ratelimit-requests-reset", "2023-11-14T22:13:23Z"),
    ]);
    assert_eq!(reset_header_ms(&anthropic, now), Some(3_000));
    assert_eq!(reset_header_ms(&headers(&[("x-ratelimit-reset", "1700000004")]), now), Some(4_000));
    assert_eq!(reset_header_ms(&headers(&[("x-ratelimit-reset", "1700000000500")]), now), Some(500));
    assert_eq!(reset_header_ms(&headers(&[("x-ratelimit-reset", "7")]), now), Some(7_000));
    assert_eq!(reset_header_ms(&headers(&[]), now), None);
}
