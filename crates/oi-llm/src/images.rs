//! Images in history: data URLs for vision models (spec b.6).

use base64::Engine as _;
use oi_core::{Message, Role};

use crate::prompt::{Image, Part};

/// The text added to images the computer produced.
pub const COMPUTER_IMAGE_TEXT: &str =
    "This image is the result of the last tool output. What does it mean / are we done?";

/// What a text-only model reads where an image was left out.
pub const IMAGE_DROPPED_NOTE: &str = "(An image was left out here: this model cannot see images.)";

/// The parts for an image message (format `base64*` or `path`): the image (shrunk when its
/// data URL is over 5 MiB and `shrink` is on), then a note when the computer made it or it
/// came from a file; `None` when it cannot be sent (unknown format, unreadable file).
pub fn image_parts(message: &Message, shrink: bool) -> Option<Vec<Part>> {
    let url = data_url(message)?;
    let url = if shrink { shrunk(url) } else { url };
    let format = message.format.as_deref().unwrap_or("");
    let content = message.text().trim();
    let mut parts = vec![Part::Image(Image { url })];
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
        parts.push(Part::Text(text));
    }
    Some(parts)
}

/// `url` with its image shrunk under the limit, when it is over it and can be.
fn shrunk(url: String) -> String {
    let Some((head, data)) = url.split_once(";base64,") else {
        return url;
    };
    let extension = head.trim_start_matches("data:image/");
    match crate::image_shrink::shrink_base64(extension, data) {
        Some(smaller) => format!("{head};base64,{smaller}"),
        None => url,
    }
}

/// The data URL of an image message, read from its file for format `path`.
fn data_url(message: &Message) -> Option<String> {
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
        let data = base64::engine::general_purpose::STANDARD.encode(bytes);
        format!("data:image/{extension};base64,{data}")
    } else {
        return None;
    };
    Some(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_images_become_data_urls_with_the_computer_note() {
        let message =
            Message::new(Role::Computer, oi_core::Kind::Image, "AAAA").with_format("base64.jpeg");
        assert_eq!(
            image_parts(&message, true),
            Some(vec![
                Part::Image(Image {
                    url: "data:image/jpeg;base64,AAAA".to_owned()
                }),
                Part::Text(COMPUTER_IMAGE_TEXT.to_owned()),
            ])
        );
    }

    #[test]
    fn files_are_read_and_encoded() {
        let dir = std::env::temp_dir().join(format!("oi-image-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join("a.jpg");
        let _ = std::fs::write(&path, b"foobar");
        let message = Message::new(Role::User, oi_core::Kind::Image, path.display().to_string())
            .with_format("path");
        let parts = image_parts(&message, true).unwrap_or_default();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(
            parts.first(),
            Some(&Part::Image(Image {
                url: "data:image/jpeg;base64,Zm9vYmFy".to_owned()
            }))
        );
    }
}
