//! Terminal rendering in colour: the model's messages indented and shown as Markdown as they
//! stream (with a cursor while it writes), code in a framed panel with its language and
//! syntax colours, the code's output in a panel of its own (errors in red, long output cut),
//! and a status line with a spinner and the elapsed time while the model is awaited or code
//! runs silently. Lines are printed as they come and redrawn styled and wrapped once complete
//! (see [`crate::screen`]). The only escape sequences that reach the terminal are written
//! here: the model's text and the code's output are filtered first, and code shows its
//! control characters (see [`crate::sanitize`]).

use std::path::PathBuf;
use std::time::Instant;

use oi_core::{Chunk, Content, Kind, Role};

use crate::activity::Activity;
use crate::highlight::{CodeColours, Grammars};
use crate::markdown;
use crate::message_lines::MessageLines;
use crate::output_panel::{OutputPanel, frame};
use crate::sanitize::{Carriage, CodeView, Sanitizer, show_code};
use crate::screen::Screen;
use crate::style::{CODE, MUTED, NORMAL, Span};
use crate::term::Size;
use crate::wrap::{Break, wrap};

/// The indent of messages and panels.
const INDENT: &str = "  ";

/// What is being written.
enum Block {
    None,
    Message {
        lines: MessageLines,
        pending: String,
    },
    Code {
        colours: CodeColours,
        pending: String,
        /// Shows the code as it streams (a combining mark cut from its base stays shown).
        view: CodeView,
    },
    Output(OutputPanel),
}

/// Renders framed chunks with colours, frames and a status line.
pub struct TtyRenderer {
    highlight_active_line: bool,
    grammars: Grammars,
    screen: Screen,
    block: Block,
    /// Filters the model's message text.
    message: Sanitizer,
    /// Filters the code's output.
    output: Sanitizer,
    /// Where cut output is saved.
    output_dir: PathBuf,
    /// Runs are timed (not when a saved conversation is shown again).
    timed: bool,
    /// Blocks get a blank line before them (not right after the previous block's panel).
    drawn: bool,
}

impl TtyRenderer {
    /// A renderer for a terminal of `size`; `highlight_active_line` names the running line
    /// in the status line.
    pub fn new(highlight_active_line: bool, grammars: &Grammars, size: Size) -> Self {
        TtyRenderer {
            highlight_active_line,
            grammars: grammars.clone(),
            screen: Screen::new(size.cols, size.rows),
            block: Block::None,
            message: Sanitizer::new(Carriage::NewLine),
            output: Sanitizer::new(Carriage::ClearLine),
            output_dir: crate::display::output_dir(),
            drawn: true,
            timed: true,
        }
    }

    /// Shows a saved conversation: its runs get no times.
    pub fn untimed(mut self) -> Self {
        self.timed = false;
        self
    }

    fn panel(&self) -> OutputPanel {
        let panel = OutputPanel::new(INDENT, &self.output_dir);
        if self.timed { panel } else { panel.untimed() }
    }

    /// The terminal was resized.
    pub fn resize(&mut self, size: Size) {
        self.screen.resize(size.cols, size.rows);
    }

    /// Removes the status line and the cursor and ends an unfinished line (before a question,
    /// an error, or the prompt).
    pub fn settle(&mut self) -> String {
        self.screen.fresh_line()
    }

    /// Erases the terminal's echo of CTRL-C (see [`Screen::erase_echo`]).
    pub fn erase_echo(&mut self) -> String {
        self.screen.erase_echo()
    }

    /// The status line for `activity` now, when it should show.
    pub fn tick(&mut self, activity: &Activity, now: Instant) -> String {
        if !activity.wants_status(now) || !self.screen.at_line_start() {
            return String::new();
        }
        let mut status = activity.status(now);
        if !self.highlight_active_line {
            if let Some(at) = status.iter().position(|s| s.text.starts_with(" · line ")) {
                status.drain(at..at + 2);
            }
        }
        self.screen.status(&status)
    }

    /// Output lines left out of the display so far in the current run.
    pub fn left_out(&self) -> Option<u64> {
        match &self.block {
            Block::Output(panel) => panel.left_out(),
            _ => None,
        }
    }

    /// A framed code panel for `code` in `language` with a title (code shown again before
    /// the question, or from a saved conversation).
    pub fn code_panel(&mut self, language: &str, code: &str, title: &str) -> String {
        let language = show_code(language);
        let mut out = self.screen.fresh_line();
        let label = if title.is_empty() {
            language.clone()
        } else {
            format!("{language} · {title}")
        };
        let mut rows = vec![frame(INDENT, "╭─ ", &label, self.screen.cols())];
        let gutter = self.gutter();
        let mut colours = CodeColours::new(&self.grammars, &language);
        for line in code.trim_end_matches('\n').split('\n') {
            let spans = colours.line(&show_code(line));
            rows.extend(wrap(
                &spans,
                self.screen.cols(),
                &gutter,
                &gutter,
                Break::Anywhere,
            ));
        }
        rows.push(self.foot());
        out.push_str(&self.screen.rows(&rows));
        out
    }

    /// A note of oi's own (Markdown), muted, under the indent.
    pub fn note(&mut self, markdown_text: &str) -> String {
        let mut out = self.screen.fresh_line();
        let lines = markdown::lines(markdown_text, INDENT, self.screen.cols(), &self.grammars);
        let rows: Vec<Vec<Span>> = crate::wrap::rows(&lines, self.screen.cols())
            .into_iter()
            .map(|row| {
                row.into_iter()
                    .map(|s| {
                        if s.style == NORMAL {
                            Span::new(MUTED, s.text)
                        } else {
                            s
                        }
                    })
                    .collect()
            })
            .collect();
        out.push_str(&self.screen.rows(&rows));
        out
    }

    /// Ends the line, with a blank line when something came before in this turn.
    fn gap(&mut self) -> String {
        let mut out = self.screen.fresh_line();
        if std::mem::replace(&mut self.drawn, true) {
            out.push_str(&self.screen.end_line());
        }
        out
    }

    fn gutter(&self) -> Vec<Span> {
        vec![Span::plain(INDENT), Span::new(MUTED, "│ ")]
    }

    fn foot(&self) -> Vec<Span> {
        let cols = self.screen.cols().min(100).saturating_sub(1);
        let rule = "─".repeat(cols.saturating_sub(INDENT.len() + 1));
        vec![Span::plain(INDENT), Span::new(MUTED, format!("╰{rule}"))]
    }

    /// The text to print for `chunk`.
    pub fn render(&mut self, chunk: &Chunk) -> String {
        let Some(kind) = chunk.kind else {
            return String::new();
        };
        match (chunk.role, kind) {
            (Role::Assistant, Kind::Message) => self.message_chunk(chunk),
            (Role::Assistant, Kind::Code) => self.code_chunk(chunk),
            (Role::Computer, Kind::Console) => self.console_chunk(chunk),
            (Role::Computer, Kind::Image) if !chunk.is_flag() => {
                let format = show_code(chunk.format.as_deref().unwrap_or(""));
                let mut out = self.screen.fresh_line();
                out.push_str(&self.screen.rows(&[vec![
                    Span::plain(INDENT),
                    Span::new(MUTED, format!("[image: {format}]")),
                ]]));
                out
            }
            (Role::Computer, Kind::Code) if !chunk.is_flag() => {
                let format = show_code(chunk.format.as_deref().unwrap_or(""));
                let size = chunk.text().map_or(0, str::len);
                let mut out = self.screen.fresh_line();
                out.push_str(&self.screen.rows(&[vec![
                    Span::plain(INDENT),
                    Span::new(
                        MUTED,
                        format!("[{format} output shown to you, {size} characters]"),
                    ),
                ]]));
                out
            }
            _ => String::new(),
        }
    }

    fn message_chunk(&mut self, chunk: &Chunk) -> String {
        if chunk.start {
            let mut out = self.close_run();
            out.push_str(&self.gap());
            self.block = Block::Message {
                lines: MessageLines::new(),
                pending: String::new(),
            };
            out.push_str(&self.screen.show_cursor());
            return out;
        }
        if chunk.end {
            let rest = self.message.finish();
            let mut out = self.stream_message(&rest);
            out.push_str(&self.complete_message_line());
            out.push_str(&self.screen.fresh_line());
            self.block = Block::None;
            return out;
        }
        let text = self.message.push(chunk.text().unwrap_or(""));
        let mut out = self.stream_message(&text);
        out.push_str(&self.screen.show_cursor());
        out
    }

    /// Shows message text as it comes: the line being written is drawn styled and wrapped
    /// (a draft, redrawn as it grows), a complete line as its block's Markdown.
    fn stream_message(&mut self, text: &str) -> String {
        if !matches!(self.block, Block::Message { .. }) {
            self.block = Block::Message {
                lines: MessageLines::new(),
                pending: String::new(),
            };
        }
        let mut out = String::new();
        for piece in text.split_inclusive('\n') {
            let (body, complete) = match piece.strip_suffix('\n') {
                Some(body) => (body, true),
                None => (piece, false),
            };
            if let Block::Message { pending, .. } = &mut self.block {
                pending.push_str(body);
            }
            if complete {
                if self.screen.at_line_start() {
                    out.push_str(&self.screen.write(&[Span::plain(INDENT)]));
                } else if !self.screen.drafted() {
                    // The line is shown raw (its draft did not fit): it stays so if its
                    // styled form does not fit either.
                    out.push_str(&self.screen.write(&[Span::plain(body)]));
                }
                out.push_str(&self.complete_message_line());
            } else if !body.is_empty() {
                out.push_str(&self.draft_message_line(body));
            }
        }
        out
    }

    /// Draws the line being written; when its draft would not fit on the screen, `body`
    /// (what just came) is written raw and the line is drawn once complete.
    fn draft_message_line(&mut self, body: &str) -> String {
        let cols = self.screen.cols();
        let Block::Message { lines, pending } = &self.block else {
            return String::new();
        };
        let styled = lines.preview(pending, INDENT, cols, &self.grammars);
        let rows = crate::wrap::rows(&styled.lines, cols);
        if let Some(out) = self.screen.draft(&rows, styled.replace) {
            return out;
        }
        let mut out = String::new();
        if self.screen.at_line_start() {
            out.push_str(&self.screen.write(&[Span::plain(INDENT)]));
        }
        out.push_str(&self.screen.write(&[Span::plain(body)]));
        out
    }

    fn complete_message_line(&mut self) -> String {
        let cols = self.screen.cols();
        let Block::Message { lines, pending } = &mut self.block else {
            return String::new();
        };
        let line = std::mem::take(pending);
        if line.is_empty() && self.screen.at_line_start() {
            return String::new();
        }
        let styled = lines.line(&line, INDENT, cols, &self.grammars);
        // Under a draft the block this line closed was erased with it: drawn again.
        let mut rows = if self.screen.drafted() {
            crate::wrap::rows(&styled.closed, cols)
        } else {
            Vec::new()
        };
        let keep = rows.len();
        rows.extend(crate::wrap::rows(&styled.lines, cols));
        let (out, done) = self.screen.replace_keeping(&rows, styled.replace, keep);
        if !done || self.screen.block_rows() * 2 > self.screen.height() {
            lines.close_block();
        }
        out
    }

    fn code_chunk(&mut self, chunk: &Chunk) -> String {
        let language = show_code(chunk.format.as_deref().unwrap_or(""));
        if chunk.start {
            let mut out = self.close_run();
            out.push_str(&self.gap());
            let header = frame(INDENT, "╭─ ", &language, self.screen.cols());
            out.push_str(&self.screen.rows(&[header]));
            self.block = Block::Code {
                colours: CodeColours::new(&self.grammars, &language),
                pending: String::new(),
                view: CodeView::new(),
            };
            return out;
        }
        if chunk.end {
            let mut out = self.complete_code_line(false);
            out.push_str(&self.screen.fresh_line());
            out.push_str(&self.screen.rows(&[self.foot()]));
            // The code runs next (or is asked about first: see `approved`/`declined`).
            self.block = Block::Output(self.panel());
            return out;
        }
        if !matches!(self.block, Block::Code { .. }) {
            self.block = Block::Code {
                colours: CodeColours::new(&self.grammars, &language),
                pending: String::new(),
                view: CodeView::new(),
            };
        }
        let text = match &mut self.block {
            Block::Code { view, .. } => view.push(chunk.text().unwrap_or("")),
            _ => show_code(chunk.text().unwrap_or("")),
        };
        let mut out = String::new();
        for piece in text.split_inclusive('\n') {
            let (body, complete) = match piece.strip_suffix('\n') {
                Some(body) => (body, true),
                None => (piece, false),
            };
            if self.screen.at_line_start() && (complete || !body.is_empty()) {
                out.push_str(&self.screen.write(&self.gutter()));
            }
            if !body.is_empty() {
                out.push_str(&self.screen.write(&[Span::new(CODE, body)]));
                if let Block::Code { pending, .. } = &mut self.block {
                    pending.push_str(body);
                }
            }
            if complete {
                out.push_str(&self.complete_code_line(true));
            }
        }
        out
    }

    fn complete_code_line(&mut self, newline: bool) -> String {
        let cols = self.screen.cols();
        let gutter = self.gutter();
        let Block::Code {
            colours, pending, ..
        } = &mut self.block
        else {
            return String::new();
        };
        let line = std::mem::take(pending);
        if !newline && line.is_empty() && self.screen.at_line_start() {
            return String::new();
        }
        let spans = colours.line(&line);
        let rows = wrap(&spans, cols, &gutter, &gutter, Break::Anywhere);
        let (out, _) = self.screen.replace(&rows, false);
        out
    }

    fn console_chunk(&mut self, chunk: &Chunk) -> String {
        if chunk.start {
            if !matches!(self.block, Block::Output(_)) {
                let mut out = self.screen.fresh_line();
                out.push_str(&self.close_run());
                self.block = Block::Output(self.panel());
                return out;
            }
            return String::new();
        }
        if chunk.end {
            let _ = self.output.finish();
            let Block::Output(panel) = &mut self.block else {
                return self.screen.fresh_line();
            };
            let out = panel.finish(&mut self.screen);
            self.block = Block::None;
            return out;
        }
        match &chunk.content {
            Some(Content::Text(text)) if chunk.has_format("output") => {
                let text = self.output.push(text);
                if text.is_empty() {
                    return String::new();
                }
                let mut out = String::new();
                if !matches!(self.block, Block::Output(_)) {
                    out.push_str(&self.finish_turn());
                    self.block = Block::Output(self.panel());
                }
                if let Block::Output(panel) = &mut self.block {
                    out.push_str(&panel.push(&text, &mut self.screen));
                }
                out
            }
            _ => String::new(),
        }
    }

    /// The code was approved: its run starts now.
    pub fn approved(&mut self) {
        self.block = Block::Output(self.panel());
    }

    /// The code was declined: it does not run.
    pub fn declined(&mut self) {
        self.block = Block::None;
    }

    /// Closes a run's panel that the console never opened (code that printed nothing).
    fn close_run(&mut self) -> String {
        if let Block::Output(panel) = &mut self.block {
            let out = panel.finish(&mut self.screen);
            self.block = Block::None;
            return out;
        }
        String::new()
    }

    /// The turn ended (or stopped): closes what is open and ends the line.
    pub fn finish_turn(&mut self) -> String {
        let mut out = match &self.block {
            Block::Message { .. } => self.complete_message_line(),
            Block::Code { .. } => {
                // Code cut off while it streamed: its panel still gets its foot.
                let mut out = self.complete_code_line(false);
                out.push_str(&self.screen.fresh_line());
                out.push_str(&self.screen.rows(&[self.foot()]));
                out
            }
            Block::Output(_) | Block::None => String::new(),
        };
        if matches!(self.block, Block::Output(_)) {
            out.push_str(&self.close_run());
        }
        self.block = Block::None;
        out.push_str(&self.screen.fresh_line());
        out
    }
}
