use super::*;
use pretty_assertions::assert_eq;
use serde_json::json;

fn json_headers() -> http::HeaderMap {
    let mut map = http::HeaderMap::new();
    map.insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
    map
}

#[test]
fn anthropic_rate_limit_keeps_message_and_retry_after() {
    let mut headers = json_headers();
    headers.insert("retry-after", http::HeaderValue::from_static("7"));
    let body = br#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#;
    let error = error_from_status(429, &headers, body);
    assert_eq!(
        error,
        ProviderError::RateLimited {
            retry_after_ms: Some(7_000),
            api: ApiError {
                status: Some(429),
                error_type: Some("rate_limit_error".into()),
                message: "slow down".into()
            }
        }
    );
}

#[test]
fn statuses_map_to_variants() {
    let body =
        |message: &str| serde_json::to_vec(&json!({"error": {"message": message, "type": "x"}})).unwrap();
    let kind = |status, message: &str| error_from_status(status, &json_headers(), &body(message)).kind();
    assert_eq!(kind(401, "bad key"), "auth");
    assert_eq!(kind(403, "forbidden"), "auth");
    assert_eq!(kind(400, "bad"), "bad_request");
    assert_eq!(kind(404, "no model"), "bad_request");
    assert_eq!(kind(422, "bad"), "bad_request");
    assert_eq!(kind(400, "prompt is too long: 210000 tokens > 200000 maximum"), "context_window_exceeded");
    assert_eq!(
        kind(400, "This model's maximum context length is 128000 tokens. However, you requested 130000"),
        "context_window_exceeded"
    );
    assert_eq!(
        kind(
            400,
            "input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000, decrease input length or `max_tokens` and try again"
        ),
        "context_window_exceeded"
    );
    assert_eq!(kind(408, "timeout"), "server");
    assert_eq!(kind(409, "conflict"), "server");
    assert_eq!(kind(503, "unavailable"), "server");
    assert_eq!(kind(529, "Overloaded"), "overloaded");
    assert_eq!(kind(418, "teapot"), "bad_request");
}

#[test]
fn code_only_errors_use_the_code_as_type() {
    assert_eq!(
        parse_error_object(&json!({"error": {"code": "1305", "message": "busy"}})),
        Some((Some("1305".into()), "busy".into()))
    );
    assert_eq!(
        parse_error_object(&json!({"error": {"code": 400, "message": "Token limit reached"}})),
        Some((Some("400".into()), "Token limit reached".into()))
    );
    assert_eq!(parse_error_object(&json!({"choices": []})), None);
}

#[test]
fn html_from_a_proxy_is_described_with_an_excerpt() {
    let mut headers = http::HeaderMap::new();
    headers.insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("text/html"));
    let body = b"<html>\n<head><title>502 Bad Gateway</title></head>\n<body>nginx</body></html>";
    let error = error_from_status(502, &headers, body);
    let api = error.api().unwrap();
    assert_eq!(error.kind(), "server");
    assert!(api.message.contains("non-JSON body (text/html)"), "{}", api.message);
    assert!(api.message.contains("502 Bad Gateway"), "{}", api.message);
    let empty = error_from_status(500, &http::HeaderMap::new(), b"");
    assert_eq!(empty.api().unwrap().message, "HTTP 500 with an empty body");
}
