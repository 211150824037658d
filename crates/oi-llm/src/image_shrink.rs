//! `shrink_images`: an image whose data URL is over 5 MiB is scaled down until it fits, as
//! the original does (by `sqrt(4.9 MiB / size)` per step, at most 10 steps), since providers
//! refuse larger images. PNG stays PNG and JPEG stays JPEG; other formats, and images that
//! cannot be decoded, are sent as they are. Decoding is bounded (dimensions and memory), so
//! a hostile file cannot make it allocate gigabytes.

use std::io::Cursor;

use base64::Engine as _;
use image::{ImageFormat, ImageReader, Limits};

/// Data URLs longer than this are shrunk.
pub const MAX_DATA_URL_BYTES: usize = 5 * 1024 * 1024;

/// What each step aims for, as a share of [`MAX_DATA_URL_BYTES`] (4.9 of 5, as the original).
const TARGET_SHARE: f64 = 4.9 / 5.0;

/// Steps before giving up.
const MAX_STEPS: usize = 10;

/// The widest and tallest image decoded.
const MAX_SIDE: u32 = 20_000;

/// The most memory one decode may take.
const MAX_DECODE_BYTES: u64 = 512 * 1024 * 1024;

/// The image behind `data:image/{extension};base64,{data}`, re-encoded smaller when the URL
/// would be over [`MAX_DATA_URL_BYTES`]; `None` when it is small enough, or cannot be shrunk
/// (then it is sent as it is and the provider decides).
pub fn shrink_base64(extension: &str, data: &str) -> Option<String> {
    let url_len = |data_len: usize| data_len + extension.len() + "data:image/;base64,".len();
    if url_len(data.len()) <= MAX_DATA_URL_BYTES {
        return None;
    }
    let format = match extension {
        "png" => ImageFormat::Png,
        "jpeg" | "jpg" => ImageFormat::Jpeg,
        _ => {
            tracing::info!(
                extension,
                "an image over 5 MiB in a format oi does not resize is sent as it is"
            );
            return None;
        }
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .ok()?;
    let mut image = match decode(&bytes, format) {
        Ok(image) => image,
        Err(error) => {
            tracing::info!(%error, "an image over 5 MiB could not be decoded; sent as it is");
            return None;
        }
    };
    let mut encoded = data.len();
    for _ in 0..MAX_STEPS {
        let ratio = (MAX_DATA_URL_BYTES as f64 * TARGET_SHARE / url_len(encoded) as f64).sqrt();
        let width = scaled(image.width(), ratio);
        let height = scaled(image.height(), ratio);
        image = image.resize_exact(width, height, image::imageops::FilterType::Triangle);
        let mut out = Vec::new();
        if image.write_to(&mut Cursor::new(&mut out), format).is_err() {
            return None;
        }
        let text = base64::engine::general_purpose::STANDARD.encode(&out);
        encoded = text.len();
        if url_len(encoded) <= MAX_DATA_URL_BYTES {
            tracing::info!(
                width,
                height,
                bytes = out.len(),
                "an image over 5 MiB was shrunk"
            );
            return Some(text);
        }
    }
    None
}

/// `side` times `ratio`, at least 1.
fn scaled(side: u32, ratio: f64) -> u32 {
    ((f64::from(side) * ratio).floor() as u32).max(1)
}

/// Decodes `bytes` as `format`, within the limits.
fn decode(bytes: &[u8], format: ImageFormat) -> Result<image::DynamicImage, image::ImageError> {
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_SIDE);
    limits.max_image_height = Some(MAX_SIDE);
    limits.max_alloc = Some(MAX_DECODE_BYTES);
    reader.limits(limits);
    reader.decode()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PNG of noise (incompressible), `side` pixels square.
    fn noisy_png(side: u32) -> String {
        let mut state: u32 = 0x1234_5678;
        let image = image::RgbImage::from_fn(side, side, |_, _| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            let [r, g, b, _] = state.to_le_bytes();
            image::Rgb([r, g, b])
        });
        let mut out = Vec::new();
        image
            .write_to(&mut Cursor::new(&mut out), ImageFormat::Png)
            .unwrap_or_default();
        base64::engine::general_purpose::STANDARD.encode(out)
    }

    #[test]
    fn small_images_are_left_alone() {
        assert_eq!(shrink_base64("png", &noisy_png(16)), None);
    }

    #[test]
    fn a_large_png_is_shrunk_under_the_limit_and_stays_a_png() {
        let big = noisy_png(1200);
        assert!(big.len() > MAX_DATA_URL_BYTES, "{}", big.len());
        let small = shrink_base64("png", &big).unwrap_or_default();
        assert!(!small.is_empty() && small.len() <= MAX_DATA_URL_BYTES);
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&small)
            .unwrap_or_default();
        let image = decode(&bytes, ImageFormat::Png);
        assert!(image.is_ok_and(|i| i.width() < 1200 && i.width() > 600));
    }

    #[test]
    fn garbage_and_unknown_formats_are_sent_as_they_are() {
        let garbage = "A".repeat(MAX_DATA_URL_BYTES + 10);
        assert_eq!(shrink_base64("png", &garbage), None);
        assert_eq!(shrink_base64("gif", &garbage), None);
    }
}
