#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use pretty_assertions::assert_eq;

fn text(bytes: &[u8]) -> DecodedText {
    match decode(bytes) {
        Decoded::Text(t) => t,
        Decoded::Binary { reason } => panic!("judged binary: {reason}"),
    }
}

#[test]
fn every_supported_encoding_round_trips_byte_exactly() {
    let mut utf16le = vec![0xFF, 0xFE];
    "héllo\r\nwörld".encode_utf16().for_each(|u| utf16le.extend_from_slice(&u.to_le_bytes()));
    let mut utf16be = vec![0xFE, 0xFF];
    "日本\n".encode_utf16().for_each(|u| utf16be.extend_from_slice(&u.to_be_bytes()));
    let all_high: Vec<u8> = (0x80u8..=0xFF).chain(b"\nabc".iter().copied()).collect();
    let cases: Vec<(Vec<u8>, TextEncoding)> = vec![
        (b"plain\n".to_vec(), TextEncoding::Utf8),
        (b"\xEF\xBB\xBFbom\r\n".to_vec(), TextEncoding::Utf8Bom),
        (utf16le, TextEncoding::Utf16LeBom),
        (utf16be, TextEncoding::Utf16BeBom),
        (b"caf\xE9 cr\xE8me\n".to_vec(), TextEncoding::Windows1252),
        (all_high, TextEncoding::Windows1252),
    ];
    for (bytes, encoding) in cases {
        let decoded = text(&bytes);
        assert_eq!(decoded.encoding, encoding);
        assert!(!decoded.lossy);
        assert_eq!(encode(&decoded.text, encoding).unwrap(), bytes);
    }
}

#[test]
fn utf16le_with_bom_decodes_to_text() {
    let mut bytes = vec![0xFF, 0xFE];
    "line one\nline two\n".encode_utf16().for_each(|u| bytes.extend_from_slice(&u.to_le_bytes()));
    assert_eq!(text(&bytes).text, "line one\nline two\n");
}

#[test]
fn nul_bytes_mean_binary() {
    assert!(matches!(decode(b"\x89PNG\r\n\x1a\n\0\0\0"), Decoded::Binary { .. }));
}

#[test]
fn latin1_refuses_characters_it_cannot_hold() {
    let err = encode("caf\u{e9} 日本", TextEncoding::Windows1252).unwrap_err();
    assert_eq!(err.first, '日');
    assert_eq!(encode("caf\u{e9}", TextEncoding::Windows1252).unwrap(), b"caf\xE9");
}

#[test]
fn line_endings_are_detected_and_converted() {
    assert_eq!(line_ending("a\r\nb\r\nc\n"), LineEnding::Crlf);
    assert_eq!(line_ending("a\nb\nc\r\n"), LineEnding::Lf);
    assert_eq!(to_crlf("a\nb\r\nc"), "a\r\nb\r\nc");
}
