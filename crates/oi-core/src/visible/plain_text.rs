//! A turn's chunks as plain text for a person to read: the model's messages, its code and the
//! code's output in fenced blocks (```` ```python ````, ```` ```output ````), each fence on a
//! line of its own, and an image as a line giving its size. The terminal program prints it for
//! `--plain` and pipes, the Python package for `chat(display=True)` (painting each piece by its
//! [`Part`] on a terminal).
//!
//! Nothing from the model or the code passes unfiltered: messages and output go through a
//! [`Sanitizer`] (escape sequences and controls removed, a `\r` becomes a line break), code and
//! its language through a [`CodeView`] (each hidden character shown as an escape).

use crate::lmc::{Chunk, Content, Kind, Role};

use super::{Carriage, CodeView, Sanitizer, show_code};

/// What a piece of the text is, for a front end that paints them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// Message text, line breaks, an image's line: shown as they are.
    Text,
    /// A fence (```` ```python ````, ```` ```output ````, ```` ``` ````), without its line break.
    Fence,
    /// Code as shown.
    Code,
    /// The code's output.
    Output,
}

/// Renders one turn's framed chunks as plain text, keeping track of the open blocks.
#[derive(Debug, Clone)]
pub struct PlainText {
    /// An output block was opened and not yet closed.
    output_open: bool,
    /// The last character written, to start fences and close blocks on a fresh line.
    last: Option<char>,
    /// Filters the model's message text.
    message: Sanitizer,
    /// Filters the code's output.
    output: Sanitizer,
    /// Shows the code of the current block as it streams.
    code: CodeView,
}

impl Default for PlainText {
    fn default() -> Self {
        Self::new()
    }
}

impl PlainText {
    /// A renderer at the start of a turn.
    pub fn new() -> Self {
        PlainText {
            output_open: false,
            last: None,
            message: Sanitizer::new(Carriage::NewLine),
            output: Sanitizer::new(Carriage::NewLine),
            code: CodeView::new(),
        }
    }

    /// The text `chunk` adds.
    pub fn render(&mut self, chunk: &Chunk) -> String {
        self.pieces(chunk)
            .into_iter()
            .map(|(_, text)| text)
            .collect()
    }

    /// The text `chunk` adds, piece by piece (no piece is empty).
    pub fn pieces(&mut self, chunk: &Chunk) -> Vec<(Part, String)> {
        let mut pieces = self.layout(chunk);
        pieces.retain(|(_, text)| !text.is_empty());
        for (_, text) in &pieces {
            self.wrote(text);
        }
        pieces
    }

    /// Tells the renderer that the front end printed `text` of its own between chunks, so
    /// that what follows still starts on a fresh line.
    pub fn wrote(&mut self, text: &str) {
        if let Some(c) = text.chars().last() {
            self.last = Some(c);
        }
    }

    /// A line break when the last character written does not end a line.
    fn fresh_line(&self) -> &'static str {
        match self.last {
            None | Some('\n') => "",
            Some(_) => "\n",
        }
    }

    /// A fence on a line of its own.
    fn fence(&self, fence: String) -> Vec<(Part, String)> {
        vec![
            (Part::Text, self.fresh_line().to_owned()),
            (Part::Fence, fence),
            (Part::Text, "\n".to_owned()),
        ]
    }

    fn layout(&mut self, chunk: &Chunk) -> Vec<(Part, String)> {
        let Some(kind) = chunk.kind else {
            return Vec::new();
        };
        let format = show_code(chunk.format.as_deref().unwrap_or(""));
        let text = chunk.text().unwrap_or("");
        match (chunk.role, kind) {
            (Role::Assistant, Kind::Message) if chunk.end => {
                let rest = self.message.finish();
                let line = if rest.is_empty() {
                    self.fresh_line()
                } else if rest.ends_with('\n') {
                    ""
                } else {
                    "\n"
                };
                vec![(Part::Text, format!("{rest}{line}"))]
            }
            (Role::Assistant, Kind::Message) if chunk.start => Vec::new(),
            (Role::Assistant, Kind::Message) => vec![(Part::Text, self.message.push(text))],
            (Role::Assistant | Role::Computer, Kind::Code) if chunk.start => {
                self.code = CodeView::new();
                self.fence(format!("```{format}"))
            }
            (Role::Assistant | Role::Computer, Kind::Code) if chunk.end => {
                self.fence("```".to_owned())
            }
            (Role::Assistant | Role::Computer, Kind::Code) => {
                vec![(Part::Code, self.code.push(text))]
            }
            (Role::Computer, Kind::Console) => self.console(chunk),
            (Role::Computer, Kind::Image) if !chunk.is_flag() => vec![(
                Part::Text,
                format!(
                    "{}[image: {format}, {} bytes of base64]\n",
                    self.fresh_line(),
                    text.len()
                ),
            )],
            _ => Vec::new(),
        }
    }

    /// The code's output: a block opened by its first text that shows, closed at its end.
    fn console(&mut self, chunk: &Chunk) -> Vec<(Part, String)> {
        if chunk.start {
            return Vec::new();
        }
        if chunk.end {
            let rest = self.output.finish();
            if !std::mem::take(&mut self.output_open) {
                return Vec::new();
            }
            let line = match rest.chars().last() {
                None => self.fresh_line(),
                Some('\n') => "",
                Some(_) => "\n",
            };
            let mut pieces = vec![(Part::Output, rest), (Part::Text, line.to_owned())];
            pieces.push((Part::Fence, "```".to_owned()));
            pieces.push((Part::Text, "\n".to_owned()));
            return pieces;
        }
        let (Some(Content::Text(text)), Some("output")) = (&chunk.content, chunk.format.as_deref())
        else {
            return Vec::new();
        };
        let text = self.output.push(text);
        if text.is_empty() {
            return Vec::new();
        }
        let mut pieces = Vec::new();
        if !self.output_open {
            self.output_open = true;
            pieces = self.fence("```output".to_owned());
        }
        pieces.push((Part::Output, text));
        pieces
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(chunks: &[Chunk]) -> String {
        let mut plain = PlainText::new();
        chunks.iter().map(|c| plain.render(c)).collect()
    }

    #[test]
    fn a_turn_in_fenced_blocks() {
        let text = render(&[
            Chunk::flag(Role::Assistant, Kind::Message, None, false),
            Chunk::assistant_message("Let me compute that."),
            Chunk::flag(Role::Assistant, Kind::Message, None, true),
            Chunk::flag(Role::Assistant, Kind::Code, Some("python"), false),
            Chunk::assistant_code("python", "print(6*7)"),
            Chunk::flag(Role::Assistant, Kind::Code, Some("python"), true),
            Chunk::flag(Role::Computer, Kind::Console, Some("output"), false),
            Chunk::console_output("42\n"),
            Chunk::flag(Role::Computer, Kind::Console, Some("output"), true),
            Chunk::flag(Role::Assistant, Kind::Message, None, false),
            Chunk::assistant_message("The result is 42."),
            Chunk::flag(Role::Assistant, Kind::Message, None, true),
        ]);
        assert_eq!(
            text,
            "Let me compute that.\n```python\nprint(6*7)\n```\n```output\n42\n```\nThe result is 42.\n"
        );
    }

    #[test]
    fn hostile_text_is_filtered_and_code_shows_its_escapes() {
        let text = render(&[
            Chunk::assistant_message("a\x1b]0;title\x07b\r"),
            Chunk::flag(Role::Assistant, Kind::Message, None, true),
            Chunk::flag(Role::Assistant, Kind::Code, Some("shell"), false),
            Chunk::assistant_code("shell", "ls\r\x1b[2K"),
            Chunk::flag(Role::Assistant, Kind::Code, Some("shell"), true),
            Chunk::console_output("\x1b[2J"),
            Chunk::console_output("out\x1b[8m"),
            Chunk::flag(Role::Computer, Kind::Console, Some("output"), true),
        ]);
        assert_eq!(text, "ab\n```shell\nls␍␛[2K\n```\n```output\nout\n```\n");
    }

    #[test]
    fn output_that_shows_nothing_opens_no_block() {
        let text = render(&[
            Chunk::console_output("\x1b]0;title\x07"),
            Chunk::flag(Role::Computer, Kind::Console, Some("output"), true),
        ]);
        assert_eq!(text, "");
    }

    #[test]
    fn pieces_name_their_part_and_front_ends_own_text_counts() {
        let mut plain = PlainText::new();
        plain.wrote("(a note)");
        let pieces = plain.pieces(&Chunk::flag(
            Role::Assistant,
            Kind::Code,
            Some("python"),
            false,
        ));
        assert_eq!(
            pieces,
            vec![
                (Part::Text, "\n".to_owned()),
                (Part::Fence, "```python".to_owned()),
                (Part::Text, "\n".to_owned()),
            ]
        );
    }
}
