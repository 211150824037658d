//! Finds paths of existing images typed into a message (spec e.6), so they can be sent as
//! image messages.

use std::path::PathBuf;

const EXTENSIONS: [&str; 3] = [".png", ".jpg", ".jpeg"];

/// Existing image files named in `text`: whitespace-separated words, optionally quoted, that end
/// in `.png`, `.jpg` or `.jpeg` and exist.
pub fn image_paths(text: &str) -> Vec<PathBuf> {
    text.split_whitespace()
        .map(|word| word.trim_matches(|c: char| c == '"' || c == '\'' || c == ',' || c == '`'))
        .filter(|word| {
            EXTENSIONS
                .iter()
                .any(|ext| word.to_lowercase().ends_with(ext))
        })
        .map(PathBuf::from)
        .filter(|path| path.is_file())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_existing_images_only() {
        let dir = tempfile::tempdir().unwrap();
        let image = dir.path().join("cat.png");
        std::fs::write(&image, b"png").unwrap();
        let text = format!("what is in \"{}\" and /nope/dog.jpg?", image.display());
        assert_eq!(image_paths(&text), vec![image]);
    }
}
