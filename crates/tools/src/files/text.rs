//! Decoding file bytes to text and encoding edited text back *in the file's own encoding*.
//!
//! The guarantee `edit_file` builds on: for every [`Decoded::Text`] with `lossy == false`,
//! `encode(decode(bytes).text, encoding) == bytes`. Non-UTF-8 files without a BOM are decoded as
//! Windows-1252, which maps every byte to a distinct character (WHATWG index, including the five
//! C1 positions), so Latin-1 files round-trip byte-exactly; new text that Windows-1252 cannot
//! represent is refused rather than replaced.

use encoding_rs::{UTF_16BE, UTF_16LE, WINDOWS_1252};

/// How a text file is stored on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextEncoding {
    /// UTF-8 without a byte-order mark.
    Utf8,
    /// UTF-8 with a leading `EF BB BF`.
    Utf8Bom,
    /// UTF-16 little-endian with a leading `FF FE`.
    Utf16LeBom,
    /// UTF-16 big-endian with a leading `FE FF`.
    Utf16BeBom,
    /// Not valid UTF-8: decoded as Windows-1252 (a superset of printable Latin-1).
    Windows1252,
}

impl TextEncoding {
    /// A short human name (`UTF-16LE with BOM`).
    pub fn label(self) -> &'static str {
        match self {
            TextEncoding::Utf8 => "UTF-8",
            TextEncoding::Utf8Bom => "UTF-8 with BOM",
            TextEncoding::Utf16LeBom => "UTF-16LE with BOM",
            TextEncoding::Utf16BeBom => "UTF-16BE with BOM",
            TextEncoding::Windows1252 => "not UTF-8; shown as Windows-1252/Latin-1",
        }
    }

    /// The encoding's name (`UTF-8 with BOM`, `Windows-1252 (Latin-1)`).
    pub fn name(self) -> &'static str {
        match self {
            TextEncoding::Windows1252 => "Windows-1252 (Latin-1)",
            TextEncoding::Utf8
            | TextEncoding::Utf8Bom
            | TextEncoding::Utf16LeBom
            | TextEncoding::Utf16BeBom => self.label(),
        }
    }
}

/// A file's content as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedText {
    /// The text, without any BOM.
    pub text: String,
    /// How to write it back.
    pub encoding: TextEncoding,
    /// True when decoding replaced invalid sequences (malformed UTF-16); such text cannot be written
    /// back byte-exactly, so `edit_file` refuses it.
    pub lossy: bool,
}

/// The result of [`decode`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decoded {
    /// Text in a known encoding.
    Text(DecodedText),
    /// Not text; `reason` says why (e.g. "contains NUL bytes").
    Binary {
        /// Why the bytes were judged binary.
        reason: String,
    },
}

/// Why text could not be encoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the text contains characters that {encoding} cannot represent (first: {first:?})")]
pub struct EncodeError {
    /// The target encoding's label.
    pub encoding: &'static str,
    /// The first unrepresentable character.
    pub first: char,
}

/// Decodes file bytes: BOM-marked UTF-8/UTF-16 first, then binary detection (NUL bytes, or mostly
/// control characters), then strict UTF-8, then Windows-1252.
pub fn decode(bytes: &[u8]) -> Decoded {
    if let Some(rest) = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        return match std::str::from_utf8(rest) {
            Ok(text) => text_of(text.to_string(), TextEncoding::Utf8Bom, false),
            Err(_) => {
                let (text, lossy) = lossy_utf8(rest);
                text_of(text, TextEncoding::Utf8Bom, lossy)
            }
        };
    }
    if bytes.starts_with(&[0xFF, 0xFE]) {
        let (text, had_errors) = UTF_16LE.decode_with_bom_removal(bytes);
        return text_of(text.into_owned(), TextEncoding::Utf16LeBom, had_errors);
    }
    if bytes.starts_with(&[0xFE, 0xFF]) {
        let (text, had_errors) = UTF_16BE.decode_with_bom_removal(bytes);
        return text_of(text.into_owned(), TextEncoding::Utf16BeBom, had_errors);
    }
    if let Some(reason) = binary_reason(bytes) {
        return Decoded::Binary { reason };
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => text_of(text.to_string(), TextEncoding::Utf8, false),
        Err(_) => {
            let (text, had_errors) = WINDOWS_1252.decode_without_bom_handling(bytes);
            text_of(text.into_owned(), TextEncoding::Windows1252, had_errors)
        }
    }
}

fn text_of(text: String, encoding: TextEncoding, lossy: bool) -> Decoded {
    Decoded::Text(DecodedText { text, encoding, lossy })
}

fn lossy_utf8(bytes: &[u8]) -> (String, bool) {
    (String::from_utf8_lossy(bytes).into_owned(), true)
}

fn binary_reason(bytes: &[u8]) -> Option<String> {
    if let Some(at) = bytes.iter().position(|&b| b == 0) {
        return Some(format!("it contains NUL bytes (first at byte {at})"));
    }
    let sample = &bytes[..bytes.len().min(8192)];
    let controls =
        sample.iter().filter(|&&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0C | 0x1B)).count();
    if !sample.is_empty() && controls * 10 > sample.len() * 3 {
        return Some("more than 30% of its first bytes are control characters".to_string());
    }
    None
}

/// Encodes `text` in `encoding` (re-adding the BOM). Fails, rather than substituting, when a
/// character cannot be represented (only possible for [`TextEncoding::Windows1252`]).
pub fn encode(text: &str, encoding: TextEncoding) -> Result<Vec<u8>, EncodeError> {
    match encoding {
        TextEncoding::Utf8 => Ok(text.as_bytes().to_vec()),
        TextEncoding::Utf8Bom => {
            let mut out = vec![0xEF, 0xBB, 0xBF];
            out.extend_from_slice(text.as_bytes());
            Ok(out)
        }
        TextEncoding::Utf16LeBom => {
            let mut out = vec![0xFF, 0xFE];
            text.encode_utf16().for_each(|u| out.extend_from_slice(&u.to_le_bytes()));
            Ok(out)
        }
        TextEncoding::Utf16BeBom => {
            let mut out = vec![0xFE, 0xFF];
            text.encode_utf16().for_each(|u| out.extend_from_slice(&u.to_be_bytes()));
            Ok(out)
        }
        TextEncoding::Windows1252 => {
            let (bytes, _, unmappable) = WINDOWS_1252.encode(text);
            if unmappable {
                let first = text
                    .chars()
                    .find(|c| {
                        let mut buf = [0u8; 4];
                        WINDOWS_1252.encode(c.encode_utf8(&mut buf)).2
                    })
                    .unwrap_or('\u{FFFD}');
                return Err(EncodeError { encoding: "Windows-1252/Latin-1", first });
            }
            Ok(bytes.into_owned())
        }
    }
}

/// The line ending a text mostly uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineEnding {
    /// `\n`
    Lf,
    /// `\r\n`
    Crlf,
}

/// Which line ending `text` mostly uses (CRLF when at least half of its newlines are CRLF).
pub fn line_ending(text: &str) -> LineEnding {
    let newlines = text.matches('\n').count();
    let crlf = text.matches("\r\n").count();
    if crlf > 0 && crlf * 2 >= newlines { LineEnding::Crlf } else { LineEnding::Lf }
}

/// Converts every bare `\n` in `text` to `\r\n` (existing `\r\n` pairs are kept).
pub fn to_crlf(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\n', "\r\n")
}

#[cfg(test)]
#[path = "text_tests.rs"]
mod tests;
