//! Reading screenshots in tests: how dark a base64 PNG is, so a test can tell which page the
//! browser showed without any network (pages shown from `data:` URLs reach no local listener).

use base64::Engine as _;

/// The mean brightness (0.0 black … 1.0 white) of the base64-encoded PNG `png`; `None` when
/// it is not a PNG that decodes.
pub fn png_brightness(png: &str) -> Option<f64> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(png.trim())
        .ok()?;
    let image = image::load_from_memory_with_format(&bytes, image::ImageFormat::Png).ok()?;
    let rgb = image.to_rgb8();
    let pixels = rgb.pixels().len();
    if pixels == 0 {
        return None;
    }
    let total: u64 = rgb
        .pixels()
        .map(|p| u64::from(p[0]) + u64::from(p[1]) + u64::from(p[2]))
        .sum();
    Some(total as f64 / (pixels as f64 * 3.0 * 255.0))
}

/// The base64 PNGs of `data:image/png;base64,…` URLs in `text`, in order.
pub fn png_data_urls(text: &str) -> Vec<String> {
    text.split("data:image/png;base64,")
        .skip(1)
        .map(|rest| {
            rest.chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '='))
                .collect()
        })
        .collect()
}
