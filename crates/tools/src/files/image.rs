//! Checking an image before it goes to a model provider.
//!
//! A provider that cannot decode an image rejects the whole request — and, since the image stays
//! in the conversation, every later request of the session too. So an image is only sent when it
//! passes [`check`]: its signature names a format every provider accepts (PNG, JPEG, GIF, WebP),
//! it decodes completely with the `image` crate (a truncated or corrupt file does not), and its
//! size is within [`MAX_IMAGE_BYTES`] and [`MAX_IMAGE_SIDE`] (Anthropic's documented limits, the
//! strictest of the three APIs). Anything else is described in text instead.

use std::io::Cursor;

use image::{ImageFormat, ImageReader, Limits};

/// Largest image sent, in bytes (Anthropic: 5 MB per image).
pub const MAX_IMAGE_BYTES: u64 = 5 * 1024 * 1024;
/// Largest width or height sent, in pixels (Anthropic: 8000 px).
pub const MAX_IMAGE_SIDE: u32 = 8_000;
/// Memory the decoder may use for one image.
const MAX_DECODE_ALLOC: u64 = 512 * 1024 * 1024;

/// An image that may be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckedImage {
    /// IANA media type, e.g. `image/png`.
    pub media_type: &'static str,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

/// The media type from the file signature (PNG, JPEG, GIF, WebP), or `None`.
pub fn sniff(bytes: &[u8]) -> Option<&'static str> {
    match bytes {
        [0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, ..] => Some("image/png"),
        [0xff, 0xd8, 0xff, ..] => Some("image/jpeg"),
        [b'G', b'I', b'F', b'8', b'7' | b'9', b'a', ..] => Some("image/gif"),
        [b'R', b'I', b'F', b'F', _, _, _, _, b'W', b'E', b'B', b'P', ..] => Some("image/webp"),
        _ => None,
    }
}

/// Checks `bytes` as an image to send. `Err` says why it may not be sent.
pub fn check(bytes: &[u8]) -> Result<CheckedImage, String> {
    let media_type = sniff(bytes).ok_or("it is not a PNG, JPEG, GIF or WebP image")?;
    let format = match media_type {
        "image/png" => ImageFormat::Png,
        "image/jpeg" => ImageFormat::Jpeg,
        "image/gif" => ImageFormat::Gif,
        _ => ImageFormat::WebP,
    };
    let name = &media_type["image/".len()..];
    if bytes.len() as u64 > MAX_IMAGE_BYTES {
        return Err(format!(
            "it has {} bytes, more than the {MAX_IMAGE_BYTES} bytes a model accepts",
            bytes.len()
        ));
    }
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_IMAGE_SIDE);
    limits.max_image_height = Some(MAX_IMAGE_SIDE);
    limits.max_alloc = Some(MAX_DECODE_ALLOC);
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    reader.limits(limits);
    let decoded = reader.decode().map_err(|error| match error {
        image::ImageError::Limits(_) => {
            format!("it is larger than {MAX_IMAGE_SIDE}×{MAX_IMAGE_SIDE} pixels, the most a model accepts")
        }
        other => {
            let detail = other.to_string();
            let detail =
                detail.lines().map(str::trim).filter(|line| !line.is_empty()).collect::<Vec<_>>().join(" ");
            format!("it does not decode as a {name} image ({detail})")
        }
    })?;
    Ok(CheckedImage { media_type, width: decoded.width(), height: decoded.height() })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::test_support::PIXEL_PNG;

    #[test]
    fn a_real_image_passes_with_its_size() {
        assert_eq!(check(PIXEL_PNG), Ok(CheckedImage { media_type: "image/png", width: 1, height: 1 }));
    }

    #[test]
    fn a_header_without_pixels_is_refused() {
        // The signature and the IHDR chunk of the pixel above, and nothing after them.
        let header_only = &PIXEL_PNG[..33];
        let reason = check(header_only).unwrap_err();
        assert!(reason.contains("does not decode as a png image"), "{reason}");
        let reason = check(b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR").unwrap_err();
        assert!(reason.contains("does not decode"), "{reason}");
    }

    #[test]
    fn oversized_and_unknown_images_are_refused() {
        let mut wide = Vec::new();
        image::RgbaImage::new(MAX_IMAGE_SIDE + 1, 1)
            .write_to(&mut Cursor::new(&mut wide), ImageFormat::Png)
            .unwrap();
        let reason = check(&wide).unwrap_err();
        assert!(reason.contains("larger than 8000×8000 pixels"), "{reason}");
        assert!(check(b"BM\0\0 a bitmap").unwrap_err().contains("not a PNG"));
    }
}
