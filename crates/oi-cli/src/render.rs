//! Plain-text rendering of a turn: assistant text, code and output in fenced blocks, no
//! escape codes. Used for `--plain`, pipes and one-shot runs. Nothing from the model or the
//! code reaches the output unfiltered (see [`crate::sanitize`]): messages and output lose
//! escape sequences and controls (a `\r` becomes a line break), code shows its controls.

use oi_core::{Chunk, Content, Kind, Role};

use crate::sanitize::{Carriage, Sanitizer, show_code};

/// Renders framed chunks to plain text, keeping track of open blocks.
#[derive(Debug)]
pub struct PlainRenderer {
    /// An output block was opened and not yet closed.
    output_open: bool,
    /// The last character written, to close blocks on a fresh line.
    last_char: Option<char>,
    /// Filters the model's message text.
    message: Sanitizer,
    /// Filters the code's output.
    output: Sanitizer,
}

impl Default for PlainRenderer {
    fn default() -> Self {
        Self::new()
    }
}

impl PlainRenderer {
    /// A renderer at the start of a turn.
    pub fn new() -> Self {
        PlainRenderer {
            output_open: false,
            last_char: None,
            message: Sanitizer::new(Carriage::NewLine),
            output: Sanitizer::new(Carriage::NewLine),
        }
    }

    /// The text to print for `chunk`.
    pub fn render(&mut self, chunk: &Chunk) -> String {
        let text = self.render_inner(chunk);
        if let Some(c) = text.chars().last() {
            self.last_char = Some(c);
        }
        text
    }

    fn newline_if_needed(&self) -> &'static str {
        match self.last_char {
            None | Some('\n') => "",
            Some(_) => "\n",
        }
    }

    fn render_inner(&mut self, chunk: &Chunk) -> String {
        let Some(kind) = chunk.kind else {
            return String::new();
        };
        let format = show_code(chunk.format.as_deref().unwrap_or(""));
        match (chunk.role, kind) {
            (Role::Assistant, Kind::Message) => {
                if chunk.end {
                    let rest = self.message.finish();
                    if rest.is_empty() {
                        return self.newline_if_needed().to_owned();
                    }
                    return rest;
                }
                self.message.push(chunk.text().unwrap_or(""))
            }
            (Role::Assistant, Kind::Code) => {
                if chunk.start {
                    return format!("{}```{format}\n", self.newline_if_needed());
                }
                if chunk.end {
                    return format!("{}```\n", self.newline_if_needed());
                }
                show_code(chunk.text().unwrap_or(""))
            }
            (Role::Computer, Kind::Console) => self.render_console(chunk),
            (Role::Computer, Kind::Image) if !chunk.is_flag() => {
                let size = chunk.text().map_or(0, str::len);
                format!(
                    "{}[image: {format}, {size} bytes of base64]\n",
                    self.newline_if_needed()
                )
            }
            (Role::Computer, Kind::Code) => {
                if chunk.start {
                    return format!("{}```{format}\n", self.newline_if_needed());
                }
                if chunk.end {
                    return format!("{}```\n", self.newline_if_needed());
                }
                show_code(chunk.text().unwrap_or(""))
            }
            _ => String::new(),
        }
    }

    fn render_console(&mut self, chunk: &Chunk) -> String {
        if chunk.start {
            return String::new();
        }
        if chunk.end {
            let rest = self.output.finish();
            if !self.output_open {
                return String::new();
            }
            self.output_open = false;
            let newline = match rest.chars().last().or(self.last_char) {
                None | Some('\n') => "",
                Some(_) => "\n",
            };
            return format!("{rest}{newline}```\n");
        }
        match (&chunk.content, chunk.format.as_deref()) {
            (Some(Content::Text(text)), Some("output")) => {
                let mut out = String::new();
                if !self.output_open {
                    self.output_open = true;
                    out.push_str(self.newline_if_needed());
                    out.push_str("```output\n");
                }
                out.push_str(&self.output.push(text));
                out
            }
            _ => String::new(),
        }
    }
}
