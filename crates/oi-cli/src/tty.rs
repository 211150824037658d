//! Terminal rendering with colour: assistant text as it streams, code in a coloured block, output
//! dimmed, and the running line shown on a status line while code runs. The only escape
//! sequences that reach the terminal are the ones written here: the model's text and the
//! code's output are filtered first, and code shows its control characters (see
//! [`crate::sanitize`]). A `\r` in output clears the line and writes it again, so progress
//! bars stay readable.

use oi_core::{Chunk, Content, Kind, Role};

use crate::sanitize::{Carriage, Sanitizer, show_code};

const RESET: &str = "\x1b[0m";
const CODE: &str = "\x1b[36m";
const HEADER: &str = "\x1b[1;36m";
const DIM: &str = "\x1b[2m";
const ACTIVE: &str = "\x1b[30;47m";
const CLEAR_LINE: &str = "\r\x1b[2K";

/// Renders framed chunks with ANSI colours.
#[derive(Debug)]
pub struct TtyRenderer {
    highlight_active_line: bool,
    /// The code of the current block, to show the running line.
    code: String,
    /// A status line is on screen.
    status_shown: bool,
    /// The last character written (not counting the status line).
    last_char: Option<char>,
    /// The current, not yet complete line of a message or code block (printed raw, redrawn
    /// styled when it completes).
    pending: String,
    /// The language of the open code block (`None` in a message), made safe to show.
    language: Option<String>,
    /// Filters the model's message text.
    message: Sanitizer,
    /// Filters the code's output.
    output: Sanitizer,
}

/// Terminal width, from `COLUMNS` (80 when unknown): longer lines are not redrawn.
fn columns() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(80)
}

impl TtyRenderer {
    /// A renderer; `highlight_active_line` shows the running line while code runs.
    pub fn new(highlight_active_line: bool) -> Self {
        TtyRenderer {
            highlight_active_line,
            code: String::new(),
            status_shown: false,
            last_char: None,
            pending: String::new(),
            language: None,
            message: Sanitizer::new(Carriage::NewLine),
            output: Sanitizer::new(Carriage::ClearLine),
        }
    }

    fn line_start(&self) -> bool {
        matches!(self.last_char, None | Some('\n'))
    }

    fn text(&mut self, text: &str) -> String {
        let mut out = String::new();
        if self.status_shown {
            out.push_str(CLEAR_LINE);
            self.status_shown = false;
        }
        out.push_str(text);
        if let Some(c) = text.chars().last() {
            self.last_char = Some(c);
        }
        out
    }

    fn newline(&mut self) -> String {
        if self.line_start() {
            self.text("")
        } else {
            self.text("\n")
        }
    }

    fn style(&self, line: &str) -> String {
        match &self.language {
            Some(language) => crate::highlight::code_line(language, line),
            None => crate::highlight::markdown_line(line),
        }
    }

    /// Prints already filtered `text` as it comes (code in colour) and redraws each completed
    /// line styled, when it fits on one terminal row.
    fn stream(&mut self, text: &str) -> String {
        let mut out = String::new();
        for piece in text.split_inclusive('\n') {
            let (body, complete) = match piece.strip_suffix('\n') {
                Some(body) => (body, true),
                None => (piece, false),
            };
            let raw = if self.language.is_some() {
                format!("{CODE}{body}{RESET}")
            } else {
                body.to_owned()
            };
            if !body.is_empty() {
                out.push_str(&self.text(&raw));
            }
            self.pending.push_str(body);
            if complete {
                out.push_str(&self.redraw());
                out.push_str(&self.text("\n"));
            }
        }
        out
    }

    /// Redraws the pending line styled and forgets it.
    fn redraw(&mut self) -> String {
        let line = std::mem::take(&mut self.pending);
        if line.is_empty() || line.chars().count() >= columns() {
            return String::new();
        }
        format!("{CLEAR_LINE}{}", self.style(&line))
    }

    /// The text to print for `chunk`.
    pub fn render(&mut self, chunk: &Chunk) -> String {
        let Some(kind) = chunk.kind else {
            return String::new();
        };
        let format = show_code(chunk.format.as_deref().unwrap_or(""));
        match (chunk.role, kind) {
            (Role::Assistant, Kind::Message) if chunk.start => {
                self.language = None;
                self.pending.clear();
                String::new()
            }
            (Role::Assistant, Kind::Message) if chunk.end => {
                let rest = self.message.finish();
                self.stream(&rest) + &self.redraw() + &self.newline()
            }
            (Role::Assistant, Kind::Message) => {
                let text = self.message.push(chunk.text().unwrap_or(""));
                self.stream(&text)
            }
            (Role::Assistant, Kind::Code) if chunk.start => {
                self.code.clear();
                self.pending.clear();
                self.language = Some(format.clone());
                let nl = self.newline();
                nl + &self.text(&format!("{HEADER}▍ {format}{RESET}\n"))
            }
            (Role::Assistant, Kind::Code) if chunk.end => {
                let out = self.redraw() + &self.newline() + &self.text(RESET);
                self.language = None;
                out
            }
            (Role::Assistant, Kind::Code) => {
                let text = chunk.text().unwrap_or("");
                self.code.push_str(text);
                self.stream(&show_code(text))
            }
            (Role::Computer, Kind::Console) => self.console(chunk),
            (Role::Computer, Kind::Image) if !chunk.is_flag() => {
                let nl = self.newline();
                nl + &self.text(&format!("{DIM}[image: {format}]{RESET}\n"))
            }
            (Role::Computer, Kind::Code) if !chunk.is_flag() => {
                let nl = self.newline();
                nl + &self.text(&format!(
                    "{DIM}[{format} output shown to you, {} characters]{RESET}\n",
                    chunk.text().map_or(0, str::len)
                ))
            }
            _ => String::new(),
        }
    }

    fn console(&mut self, chunk: &Chunk) -> String {
        if chunk.start {
            return String::new();
        }
        if chunk.end {
            let _ = self.output.finish();
            let mut out = if self.status_shown {
                self.text("")
            } else {
                String::new()
            };
            out.push_str(&self.newline());
            return out;
        }
        match &chunk.content {
            Some(Content::Text(text)) if chunk.has_format("output") => {
                let text = self.output.push(text);
                if text.is_empty() {
                    return String::new();
                }
                self.text(&format!("{DIM}{text}{RESET}"))
            }
            Some(Content::Line(line)) if self.highlight_active_line && self.line_start() => {
                let source = self
                    .code
                    .lines()
                    .nth((*line as usize).saturating_sub(1))
                    .unwrap_or("")
                    .trim();
                let source = show_code(&source.chars().take(70).collect::<String>());
                self.status_shown = true;
                format!("{CLEAR_LINE}{ACTIVE} running line {line} {RESET} {DIM}{source}{RESET}")
            }
            Some(Content::Null) if self.status_shown => {
                self.status_shown = false;
                CLEAR_LINE.to_owned()
            }
            _ => String::new(),
        }
    }
}
