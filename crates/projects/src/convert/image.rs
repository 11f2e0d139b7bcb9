//! Images, described without decoding a pixel: the dimensions come from the header
//! (PNG `IHDR`, the JPEG frame header, GIF's logical screen, WebP's `VP8`/`VP8L`/
//! `VP8X` chunk, BMP's info header), read with bounds checks on every access.

use super::Draft;
use super::error::Result;
use super::format::SourceFormat;
use super::xml::malformed;

/// An image's dimensions and media type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageInfo {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `image/png`, `image/jpeg`, `image/gif`, `image/webp` or `image/bmp`.
    pub media_type: &'static str,
}

/// Describes an image in one line: `Image: name.png, 1200×800 px, image/png`.
pub(super) fn describe(bytes: &[u8], name: Option<&str>) -> Result<Draft> {
    let info = image_info(bytes)?;
    let size = format!("{}×{} px, {}", info.width, info.height, info.media_type);
    let markdown = match name {
        Some(name) => format!("Image: {name}, {size}"),
        None => format!("Image: {size}"),
    };
    Ok(Draft {
        title: None,
        markdown,
        image: Some(info),
    })
}

/// Reads the dimensions from the header of a PNG, JPEG, GIF, WebP or BMP image.
pub(super) fn image_info(bytes: &[u8]) -> Result<ImageInfo> {
    let (media_type, dimensions) = if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        ("image/png", png(bytes))
    } else if bytes.starts_with(&[0xff, 0xd8]) {
        ("image/jpeg", jpeg(bytes))
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        ("image/gif", gif(bytes))
    } else if bytes.starts_with(b"RIFF") && bytes.get(8..12) == Some(b"WEBP") {
        ("image/webp", webp(bytes))
    } else if bytes.starts_with(b"BM") {
        ("image/bmp", bmp(bytes))
    } else {
        return Err(malformed(
            SourceFormat::Image,
            "it is not a PNG, JPEG, GIF, WebP or BMP image",
        ));
    };
    let (width, height) = dimensions
        .filter(|(width, height)| *width > 0 && *height > 0)
        .ok_or_else(|| {
            malformed(
                SourceFormat::Image,
                format!("the {media_type} header is truncated or damaged"),
            )
        })?;
    Ok(ImageInfo {
        width,
        height,
        media_type,
    })
}

fn u16_be(bytes: &[u8], at: usize) -> Option<u32> {
    let pair = bytes.get(at..at + 2)?;
    Some(u32::from(u16::from_be_bytes([pair[0], pair[1]])))
}

fn u16_le(bytes: &[u8], at: usize) -> Option<u32> {
    let pair = bytes.get(at..at + 2)?;
    Some(u32::from(u16::from_le_bytes([pair[0], pair[1]])))
}

fn u24_le(bytes: &[u8], at: usize) -> Option<u32> {
    let triple = bytes.get(at..at + 3)?;
    Some(u32::from_le_bytes([triple[0], triple[1], triple[2], 0]))
}

fn u32_be(bytes: &[u8], at: usize) -> Option<u32> {
    let quad: [u8; 4] = bytes.get(at..at + 4)?.try_into().ok()?;
    Some(u32::from_be_bytes(quad))
}

fn i32_le(bytes: &[u8], at: usize) -> Option<i32> {
    let quad: [u8; 4] = bytes.get(at..at + 4)?.try_into().ok()?;
    Some(i32::from_le_bytes(quad))
}

/// Signature, then the `IHDR` chunk: length, type, width, height (big-endian).
fn png(bytes: &[u8]) -> Option<(u32, u32)> {
    (bytes.get(12..16)? == b"IHDR").then_some(())?;
    Some((u32_be(bytes, 16)?, u32_be(bytes, 20)?))
}

/// Walks the marker segments up to the first start-of-frame (SOF0–SOF15 but DHT,
/// JPG and DAC), whose header holds height then width.
fn jpeg(bytes: &[u8]) -> Option<(u32, u32)> {
    let mut at = 2;
    loop {
        // Markers may be padded with any number of 0xFF fill bytes.
        while *bytes.get(at)? == 0xff && *bytes.get(at + 1)? == 0xff {
            at += 1;
        }
        if *bytes.get(at)? != 0xff {
            return None;
        }
        let marker = *bytes.get(at + 1)?;
        at += 2;
        match marker {
            // Standalone markers: no length.
            0x01 | 0xd0..=0xd7 => continue,
            // End of image or start of scan before any frame header.
            0xd9 | 0xda => return None,
            0xc0..=0xcf if !matches!(marker, 0xc4 | 0xc8 | 0xcc) => {
                return Some((u16_be(bytes, at + 5)?, u16_be(bytes, at + 3)?));
            }
            _ => {
                let length = usize::try_from(u16_be(bytes, at)?).ok()?;
                if length < 2 {
                    return None;
                }
                at += length;
            }
        }
    }
}

/// The logical screen: width and height, little-endian, after the signature.
fn gif(bytes: &[u8]) -> Option<(u32, u32)> {
    Some((u16_le(bytes, 6)?, u16_le(bytes, 8)?))
}

/// The first chunk after `RIFF….WEBP`: lossy `VP8 `, lossless `VP8L` or extended `VP8X`.
fn webp(bytes: &[u8]) -> Option<(u32, u32)> {
    match bytes.get(12..16)? {
        b"VP8 " => {
            // Frame tag (3 bytes), start code 9D 01 2A, then 14-bit width and height.
            (bytes.get(23..26)? == [0x9d, 0x01, 0x2a]).then_some(())?;
            Some((u16_le(bytes, 26)? & 0x3fff, u16_le(bytes, 28)? & 0x3fff))
        }
        b"VP8L" => {
            // Signature 0x2F, then width-1 and height-1 in 14 bits each.
            (*bytes.get(20)? == 0x2f).then_some(())?;
            let bits: [u8; 4] = bytes.get(21..25)?.try_into().ok()?;
            let bits = u32::from_le_bytes(bits);
            Some(((bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1))
        }
        b"VP8X" => Some((u24_le(bytes, 24)? + 1, u24_le(bytes, 27)? + 1)),
        _ => None,
    }
}

/// The info header after the 14-byte file header: the old 12-byte core header holds
/// 16-bit sizes, later ones 32-bit (a negative height means top-down rows).
fn bmp(bytes: &[u8]) -> Option<(u32, u32)> {
    let header_size = i32_le(bytes, 14)?;
    if header_size == 12 {
        return Some((u16_le(bytes, 18)?, u16_le(bytes, 20)?));
    }
    let width = i32_le(bytes, 18)?;
    let height = i32_le(bytes, 22)?;
    Some((width.unsigned_abs(), height.unsigned_abs()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn info(width: u32, height: u32, media_type: &'static str) -> ImageInfo {
        ImageInfo {
            width,
            height,
            media_type,
        }
    }

    #[test]
    fn webp_variants() {
        let mut lossy = b"RIFF\0\0\0\0WEBPVP8 \0\0\0\0\0\0\0\x9d\x01\x2a".to_vec();
        lossy.extend_from_slice(&[0x80, 0x02, 0xe0, 0x01]);
        assert_eq!(image_info(&lossy).unwrap(), info(640, 480, "image/webp"));

        let mut lossless = b"RIFF\0\0\0\0WEBPVP8L\0\0\0\0\x2f".to_vec();
        let bits: u32 = (100 - 1) | ((50 - 1) << 14);
        lossless.extend_from_slice(&bits.to_le_bytes());
        assert_eq!(image_info(&lossless).unwrap(), info(100, 50, "image/webp"));

        let mut extended = b"RIFF\0\0\0\0WEBPVP8X\0\0\0\0\0\0\0\0".to_vec();
        extended.extend_from_slice(&[0x1f, 0x03, 0x00, 0x57, 0x02, 0x00]);
        assert_eq!(image_info(&extended).unwrap(), info(800, 600, "image/webp"));
    }

    #[test]
    fn bmp_headers() {
        let mut core = b"BM".to_vec();
        core.extend_from_slice(&[0; 12]);
        core.extend_from_slice(&12i32.to_le_bytes());
        core.extend_from_slice(&[3, 0, 2, 0]);
        assert_eq!(image_info(&core).unwrap(), info(3, 2, "image/bmp"));

        let mut top_down = b"BM".to_vec();
        top_down.extend_from_slice(&[0; 12]);
        top_down.extend_from_slice(&40i32.to_le_bytes());
        top_down.extend_from_slice(&1024i32.to_le_bytes());
        top_down.extend_from_slice(&(-768i32).to_le_bytes());
        assert_eq!(image_info(&top_down).unwrap(), info(1024, 768, "image/bmp"));
    }

    proptest::proptest! {
        #[test]
        fn any_bytes_give_dimensions_or_an_error(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..64), prefix in 0usize..6) {
            let signatures: [&[u8]; 6] = [b"\x89PNG\r\n\x1a\n", &[0xff, 0xd8], b"GIF89a", b"RIFF\0\0\0\0WEBPVP8X", b"BM", b""];
            let mut input = signatures[prefix].to_vec();
            input.extend_from_slice(&bytes);
            if let Ok(info) = image_info(&input) {
                proptest::prop_assert!(info.width > 0 && info.height > 0);
            }
        }
    }

    #[test]
    fn truncated_headers_are_errors() {
        for bytes in [
            &b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\0"[..],
            &[0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10][..],
            &b"GIF89a\x01"[..],
            &b"RIFF\0\0\0\0WEBPVP8X"[..],
            &b"BM\0\0"[..],
        ] {
            let error = image_info(bytes).unwrap_err();
            assert!(
                error.to_string().contains("truncated or damaged"),
                "{error}"
            );
        }
    }
}
