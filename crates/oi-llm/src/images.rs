//! Images in history: data URLs for vision models (spec b.6).

use std::io::Read as _;
use std::os::unix::fs::OpenOptionsExt as _;

use base64::Engine as _;
use oi_core::{Message, Role};

use crate::prompt::{Image, Part};

/// The text added to images the computer produced.
pub const COMPUTER_IMAGE_TEXT: &str =
    "This image is the result of the last tool output. What does it mean / are we done?";

/// What a text-only model reads where an image was left out.
pub const IMAGE_DROPPED_NOTE: &str = "(An image was left out here: this model cannot see images.)";

/// The largest image file read for a message of format `path`.
const MAX_IMAGE_FILE: u64 = 20 << 20;

/// The parts for an image message: an inline image (format `base64` or `base64.<ext>`, shrunk
/// when its data URL is over 5 MiB and `shrink` is on), then the note when the computer made
/// it; for format `path`, a note that it was not sent — oi reads no file when it sends history
/// (a path in a message could come from a client, a stored conversation or the code, and the
/// file could have changed); a person's image path is read once, when given
/// ([`image_from_file`]). `None` for an unknown format.
pub fn image_parts(message: &Message, shrink: bool) -> Option<Vec<Part>> {
    let format = message.format.as_deref().unwrap_or("");
    let content = message.text().trim();
    if format == "path" {
        return Some(vec![Part::Text(format!(
            "(An image given by its path was not sent: oi sends images read when they were given, not files named in history: {content})"
        ))]);
    }
    let url = base64_url(format, content)?;
    let url = if shrink { shrunk(url) } else { url };
    let mut parts = vec![Part::Image(Image { url })];
    if message.role == Role::Computer {
        parts.push(Part::Text(COMPUTER_IMAGE_TEXT.to_owned()));
    }
    Some(parts)
}

/// A user's image message holding the image file at `path`, read now (the one place oi reads
/// an image file: where a person gives its path, in the CLI or the Python library): a regular
/// file, opened without blocking (a FIFO or a device cannot hang oi), of at most 20 MiB. The
/// error says why it was not read.
pub fn image_from_file(path: &std::path::Path) -> Result<Message, String> {
    let (extension, data) = read_image_file(path)?;
    Ok(Message::new(Role::User, oi_core::Kind::Image, data)
        .with_format(format!("base64.{extension}")))
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

/// The data URL of an inline image of format `base64` or `base64.<ext>`.
fn base64_url(format: &str, content: &str) -> Option<String> {
    if !format.starts_with("base64") {
        return None;
    }
    let extension = format.split_once('.').map_or("png", |(_, ext)| ext);
    Some(format!("data:image/{extension};base64,{content}"))
}

/// The extension and base64 of the image file at `path`: a regular file (opened without
/// blocking) of at most [`MAX_IMAGE_FILE`] bytes.
fn read_image_file(path: &std::path::Path) -> Result<(String, String), String> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| format!("it could not be opened ({e})"))?;
    let meta = file
        .metadata()
        .map_err(|e| format!("it could not be read ({e})"))?;
    if !meta.is_file() {
        return Err("it is not a regular file".to_owned());
    }
    if meta.len() > MAX_IMAGE_FILE {
        return Err(format!("it is over {} MiB", MAX_IMAGE_FILE >> 20));
    }
    let mut bytes = Vec::new();
    file.take(MAX_IMAGE_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("it could not be read ({e})"))?;
    if bytes.len() as u64 > MAX_IMAGE_FILE {
        return Err(format!("it is over {} MiB", MAX_IMAGE_FILE >> 20));
    }
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map_or_else(|| "png".to_owned(), str::to_lowercase);
    let extension = if extension == "jpg" {
        "jpeg".to_owned()
    } else {
        extension
    };
    Ok((
        extension,
        base64::engine::general_purpose::STANDARD.encode(bytes),
    ))
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
    fn files_are_read_once_when_given_never_from_history() {
        let dir = std::env::temp_dir().join(format!("oi-image-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join("a.jpg");
        let _ = std::fs::write(&path, b"foobar");
        let given = image_from_file(&path);
        let fifo = dir.join("fifo.png");
        let _ = std::process::Command::new("mkfifo").arg(&fifo).status();
        let from_fifo = image_from_file(&fifo);
        let named = Message::new(Role::User, oi_core::Kind::Image, path.display().to_string())
            .with_format("path");
        let sent = image_parts(&named, true);
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(
            given,
            Ok(Message::new(Role::User, oi_core::Kind::Image, "Zm9vYmFy")
                .with_format("base64.jpeg"))
        );
        assert_eq!(from_fifo, Err("it is not a regular file".to_owned()));
        assert_eq!(
            sent,
            Some(vec![Part::Text(format!(
                "(An image given by its path was not sent: oi sends images read when they were given, not files named in history: {})",
                path.display()
            ))])
        );
    }
}
