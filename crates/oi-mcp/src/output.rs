//! A run's output as MCP content: console text merged into text blocks, images as image
//! content, rich code (HTML, JavaScript) as text saying what it is; and whether it reads as an
//! error.

use oi_core::computer::Output;
use oi_core::lmc::{Content, Kind};
use rmcp::model::ContentBlock;

/// The content of one run, built as outputs arrive.
#[derive(Debug, Default)]
pub(crate) struct Collected {
    blocks: Vec<ContentBlock>,
    text: String,
    /// All console text, for [`Collected::looks_failed`].
    all_text: String,
}

impl Collected {
    /// Takes one output in.
    pub(crate) fn push(&mut self, output: Output) {
        let format = output.format.as_deref().unwrap_or("");
        let Content::Text(data) = output.content else {
            // `active_line` numbers and other non-text payloads are for live displays.
            return;
        };
        match output.kind {
            Kind::Console if format == "active_line" => {}
            Kind::Image => {
                self.flush();
                let mime = format
                    .strip_prefix("base64.")
                    .map(|ext| format!("image/{}", if ext == "jpg" { "jpeg" } else { ext }));
                match mime {
                    Some(mime) => self.blocks.push(ContentBlock::image(data, mime)),
                    None => self.text.push_str(&format!("[image: {format}]\n")),
                }
            }
            Kind::Code => {
                self.flush();
                self.blocks
                    .push(ContentBlock::text(format!("[{format} output]\n{data}")));
            }
            _ => {
                self.all_text.push_str(&data);
                self.text.push_str(&data);
            }
        }
    }

    /// Console text seen so far (for progress messages).
    pub(crate) fn text_len(&self) -> usize {
        self.all_text.len()
    }

    fn flush(&mut self) {
        if !self.text.is_empty() {
            self.blocks
                .push(ContentBlock::text(std::mem::take(&mut self.text)));
        }
    }

    /// Whether the output reads as a failure: a Python traceback or error line, a session
    /// that exited, a language oi does not run.
    pub(crate) fn looks_failed(&self) -> bool {
        looks_failed(&self.all_text)
    }

    /// The content blocks; `(no output)` when the run printed nothing.
    pub(crate) fn into_blocks(mut self) -> Vec<ContentBlock> {
        self.flush();
        if self.blocks.is_empty() {
            self.blocks.push(ContentBlock::text("(no output)"));
        }
        self.blocks
    }
}

/// Whether `text` reads as a failure (see [`Collected::looks_failed`]). Shell commands'
/// exit statuses are not seen here: their messages are in the text.
fn looks_failed(text: &str) -> bool {
    text.contains("Traceback (most recent call last)")
        || text.contains("[oi: the ")
        || text.contains("disabled or not supported.")
        || text.lines().any(|line| {
            let head = line.split(':').next().unwrap_or("").trim();
            !head.is_empty()
                && line.contains(':')
                && head
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
                && (head.ends_with("Error") || head.ends_with("Exception"))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracebacks_and_error_lines_are_failures_and_plain_text_is_not() {
        assert!(looks_failed(
            "Traceback (most recent call last):\n  File \"<stdin>\", line 1\nZeroDivisionError: division by zero\n"
        ));
        assert!(looks_failed("NameError: name 'x' is not defined\n"));
        assert!(looks_failed(
            "\n[oi: the Python session exited with exit code 1; its state was lost and a new session will start with the next run.]\n"
        ));
        assert!(!looks_failed("42\nno errors: none\n"));
        assert!(!looks_failed("An Error: in prose\n"));
    }

    #[test]
    fn text_merges_and_images_are_image_content() {
        let mut collected = Collected::default();
        collected.push(Output::console("a"));
        collected.push(Output::active_line(3));
        collected.push(Output::console("b\n"));
        collected.push(Output::image("base64.png", "iVBORw0KGgo="));
        collected.push(Output::console("c\n"));
        let blocks = serde_json::to_value(collected.into_blocks()).unwrap_or_default();
        assert_eq!(
            blocks,
            serde_json::json!([
                {"type": "text", "text": "ab\n"},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
                {"type": "text", "text": "c\n"},
            ])
        );
    }
}
