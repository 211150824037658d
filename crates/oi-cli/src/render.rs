//! Plain-text rendering of a turn: assistant text as is, code and output in fenced blocks, no
//! escape codes. Used for `--plain`, pipes and one-shot runs.

use oi_core::{Chunk, Content, Kind, Role};

/// Renders framed chunks to plain text, keeping track of open blocks.
#[derive(Debug, Default)]
pub struct PlainRenderer {
    /// An output block was opened and not yet closed.
    output_open: bool,
    /// The last character written, to close blocks on a fresh line.
    last_char: Option<char>,
}

impl PlainRenderer {
    /// A renderer at the start of a turn.
    pub fn new() -> Self {
        Self::default()
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
        let format = chunk.format.as_deref().unwrap_or("");
        match (chunk.role, kind) {
            (Role::Assistant, Kind::Message) => {
                if chunk.end {
                    return self.newline_if_needed().to_owned();
                }
                chunk.text().unwrap_or("").to_owned()
            }
            (Role::Assistant, Kind::Code) => {
                if chunk.start {
                    return format!("{}```{format}\n", self.newline_if_needed());
                }
                if chunk.end {
                    return format!("{}```\n", self.newline_if_needed());
                }
                chunk.text().unwrap_or("").to_owned()
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
                chunk.text().unwrap_or("").to_owned()
            }
            _ => String::new(),
        }
    }

    fn render_console(&mut self, chunk: &Chunk) -> String {
        if chunk.start {
            return String::new();
        }
        if chunk.end {
            if !self.output_open {
                return String::new();
            }
            self.output_open = false;
            return format!("{}```\n", self.newline_if_needed());
        }
        match (&chunk.content, chunk.format.as_deref()) {
            (Some(Content::Text(text)), Some("output")) => {
                let mut out = String::new();
                if !self.output_open {
                    self.output_open = true;
                    out.push_str(self.newline_if_needed());
                    out.push_str("```output\n");
                }
                out.push_str(text);
                out
            }
            _ => String::new(),
        }
    }
}
