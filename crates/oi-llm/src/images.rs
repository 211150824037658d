//! Images in history: data URLs for vision models (spec b.6).

use oi_core::{Message, Role};
use serde_json::{Value, json};

/// The text added to images the computer produced.
pub const COMPUTER_IMAGE_TEXT: &str =
    "This image is the result of the last tool output. What does it mean / are we done?";

/// What a text-only model reads where an image was left out.
pub const IMAGE_DROPPED_NOTE: &str = "(An image was left out here: this model cannot see images.)";

/// The OpenAI user message for an image message (format `base64*` or `path`), or `None` when
/// it cannot be sent (unknown format, unreadable file).
pub fn image_message(message: &Message) -> Option<Value> {
    let format = message.format.as_deref().unwrap_or("");
    let content = message.text().trim();
    let url = if format.starts_with("base64") {
        let extension = format.split_once('.').map_or("png", |(_, ext)| ext);
        format!("data:image/{extension};base64,{content}")
    } else if format == "path" {
        let bytes = std::fs::read(content).ok()?;
        let extension = std::path::Path::new(content)
            .extension()
            .and_then(|e| e.to_str())
            .map_or_else(|| "png".to_owned(), str::to_lowercase);
        let extension = if extension == "jpg" {
            "jpeg".to_owned()
        } else {
            extension
        };
        format!("data:image/{extension};base64,{}", base64(&bytes))
    } else {
        return None;
    };
    let mut parts =
        vec![json!({ "type": "image_url", "image_url": { "url": url, "detail": "low" } })];
    let mut text = String::new();
    if message.role == Role::Computer {
        text.push_str(COMPUTER_IMAGE_TEXT);
    }
    if format == "path" {
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str("This image is at this path: ");
        text.push_str(content);
    }
    if !text.is_empty() {
        parts.push(json!({ "type": "text", "text": text }));
    }
    Some(json!({ "role": "user", "content": parts }))
}

/// Standard base64 with padding.
pub fn base64(bytes: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for group in bytes.chunks(3) {
        let b = [
            group[0],
            group.get(1).copied().unwrap_or(0),
            group.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= group.len() {
                out.push(char::from(TABLE[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn base64_images_become_data_urls() {
        let message =
            Message::new(Role::Computer, oi_core::Kind::Image, "AAAA").with_format("base64.jpeg");
        let value = image_message(&message).unwrap();
        assert_eq!(
            value["content"][0]["image_url"]["url"],
            "data:image/jpeg;base64,AAAA"
        );
        assert_eq!(value["content"][1]["text"], COMPUTER_IMAGE_TEXT);
    }
}
