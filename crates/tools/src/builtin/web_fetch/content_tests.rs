use pretty_assertions::assert_eq;

use super::*;

fn kind_of(header: &str) -> Kind {
    kind(parse_content_type(header).as_ref())
}

#[test]
fn content_types_parse_with_their_charset() {
    assert_eq!(
        parse_content_type("Text/HTML; charset=\"ISO-8859-1\""),
        Some(ContentType { mime: "text/html".into(), charset: Some("ISO-8859-1".into()) })
    );
    assert_eq!(
        parse_content_type("application/json"),
        Some(ContentType { mime: "application/json".into(), charset: None })
    );
    assert_eq!(parse_content_type(" ; charset=utf-8"), None);
}

#[test]
fn html_text_and_binary_types_are_told_apart() {
    assert_eq!(kind_of("text/html; charset=utf-8"), Kind::Html);
    assert_eq!(kind_of("application/xhtml+xml"), Kind::Html);
    for text in [
        "text/plain",
        "text/markdown",
        "text/css",
        "application/json",
        "application/problem+json",
        "application/rss+xml",
        "image/svg+xml",
        "application/javascript",
        "application/x-yaml",
    ] {
        assert_eq!(kind_of(text), Kind::Text, "{text}");
    }
    for binary in ["image/png", "application/pdf", "application/octet-stream", "application/zip", "video/mp4"]
    {
        assert_eq!(kind_of(binary), Kind::Binary, "{binary}");
    }
    assert_eq!(kind(None), Kind::Unknown);
    assert!(looks_binary(b"PK\x03\x04\x00\x00"));
    assert!(!looks_binary("plain text, ünïcode".as_bytes()));
}

#[test]
fn bodies_decode_from_their_charset_lossily() {
    assert_eq!(decode(b"caf\xe9", Some("ISO-8859-1")), "café");
    assert_eq!(decode("café".as_bytes(), None), "café");
    assert_eq!(decode("café".as_bytes(), Some("no-such-charset")), "café");
    assert_eq!(decode(b"bad \xff byte", Some("utf-8")), "bad \u{fffd} byte");
    // A byte-order mark wins over the header.
    assert_eq!(decode(b"\xef\xbb\xbfhi", Some("ISO-8859-1")), "hi");
}

#[test]
fn numbers_are_grouped_by_thousands() {
    assert_eq!(grouped(0), "0");
    assert_eq!(grouped(999), "999");
    assert_eq!(grouped(12_345), "12 345");
    assert_eq!(grouped(10_485_760), "10 485 760");
}
