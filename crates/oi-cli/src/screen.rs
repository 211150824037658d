//! What is on the terminal below the last finished line: the line being written (printed as
//! it streams, then redrawn styled and wrapped once it is complete — every row it wrapped
//! onto is erased, however narrow the terminal), the streaming cursor after it, and a status
//! line (spinner, elapsed time) while nothing else is written. Only CSI sequences are used
//! (cursor up, erase), so no program output can be confused with them.

use crate::style::{MUTED, Span, render, rows, spans_width, width};

/// The streaming cursor shown after a message's last character while the model writes.
const CURSOR: &str = "●";

/// The live part of the terminal.
#[derive(Debug)]
pub struct Screen {
    /// Columns of the terminal.
    cols: usize,
    /// Rows of the terminal (a redraw never reaches above the top row).
    height: usize,
    /// Columns written since the start of the current, unfinished line.
    live: usize,
    /// Rows the last [`replace`](Self::replace) wrote as a block (a table being drawn),
    /// which the next one may erase too.
    block: usize,
    /// A status line is drawn on the current (otherwise empty) row.
    status: bool,
    /// The streaming cursor is drawn after the live text.
    cursor: bool,
}

impl Screen {
    /// A screen `cols` wide and `height` tall, at the start of a line.
    pub fn new(cols: usize, height: usize) -> Self {
        Screen {
            cols: cols.max(1),
            height: height.max(2),
            live: 0,
            block: 0,
            status: false,
            cursor: false,
        }
    }

    /// The terminal's width.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// The terminal was resized.
    pub fn resize(&mut self, cols: usize, height: usize) {
        self.cols = cols.max(1);
        self.height = height.max(2);
    }

    /// Whether the cursor is at the start of a line (nothing live).
    pub fn at_line_start(&self) -> bool {
        self.live == 0
    }

    /// Removes the status line and the cursor, if shown.
    pub fn settle(&mut self) -> String {
        let mut out = String::new();
        if std::mem::take(&mut self.status) {
            out.push_str("\r\x1b[2K");
        }
        if std::mem::take(&mut self.cursor) {
            let column = self.live % self.cols;
            out.push('\r');
            if column > 0 {
                out.push_str(&format!("\x1b[{column}C"));
            }
            out.push_str("\x1b[K");
        }
        out
    }

    /// Writes spans on the current line.
    pub fn write(&mut self, spans: &[Span]) -> String {
        let mut out = self.settle();
        out.push_str(&render(spans, true));
        self.live += spans_width(spans);
        out
    }

    /// Ends the current line.
    pub fn end_line(&mut self) -> String {
        let mut out = self.settle();
        out.push('\n');
        self.live = 0;
        self.block = 0;
        out
    }

    /// Ends the current line if anything is on it.
    pub fn fresh_line(&mut self) -> String {
        if self.live == 0 {
            self.settle()
        } else {
            self.end_line()
        }
    }

    /// Writes finished rows (each followed by a newline) from the start of a line.
    pub fn rows(&mut self, rows: &[Vec<Span>]) -> String {
        let mut out = self.fresh_line();
        for row in rows {
            out.push_str(render(row, true).trim_end_matches(' '));
            out.push('\n');
        }
        self.block = 0;
        out
    }

    /// Erases the live line (every row it wrapped onto) and, with `block`, the rows the
    /// last such replace wrote, then writes `rows_out` in its place; with `block` they can be
    /// replaced again (a table redrawn as its rows come). When that reaches above the top of
    /// the terminal nothing is erased: the line ends, `rows_out` are not written (the raw text
    /// stays) and `false` is returned.
    pub fn replace(&mut self, rows_out: &[Vec<Span>], block: bool) -> (String, bool) {
        let mut out = self.settle();
        let above = if block { self.block } else { 0 };
        let up = if self.live == 0 {
            above
        } else {
            rows(self.live, self.cols) - 1 + above
        };
        if up + 1 >= self.height {
            out.push_str(&self.end_line());
            return (out, false);
        }
        if up > 0 {
            out.push_str(&format!("\x1b[{up}A"));
        }
        out.push_str("\r\x1b[J");
        for row in rows_out {
            out.push_str(render(row, true).trim_end_matches(' '));
            out.push('\n');
        }
        self.live = 0;
        self.block = if block { rows_out.len() } else { 0 };
        (out, true)
    }

    /// Shows the streaming cursor after the live text (when it fits on the row).
    pub fn show_cursor(&mut self) -> String {
        if self.cursor || self.status || (self.live > 0 && self.live % self.cols == 0) {
            return String::new();
        }
        self.cursor = true;
        render(&[Span::new(MUTED, CURSOR)], true)
    }

    /// Draws `spans` as the status line, cut to the width, when at the start of a line.
    pub fn status(&mut self, spans: &[Span]) -> String {
        if self.live != 0 {
            return String::new();
        }
        let mut out = String::from("\r\x1b[2K");
        let mut room = self.cols.saturating_sub(1);
        let mut cut = Vec::new();
        for span in spans {
            let mut text = String::new();
            for c in span.text.chars() {
                let w = width(c.encode_utf8(&mut [0u8; 4]));
                if w > room {
                    room = 0;
                    break;
                }
                room -= w;
                text.push(c);
            }
            cut.push(Span::new(span.style, text));
        }
        out.push_str(&render(&cut, true));
        self.status = true;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrapped_line_is_erased_row_by_row() {
        let mut screen = Screen::new(10, 24);
        let _ = screen.write(&[Span::plain("a".repeat(25))]);
        let (out, done) = screen.replace(&[vec![Span::plain("styled")]], false);
        assert!(done);
        assert_eq!(out, "\x1b[2A\r\x1b[Jstyled\n");
        assert!(screen.at_line_start());
    }

    #[test]
    fn a_line_taller_than_the_screen_is_left_alone() {
        let mut screen = Screen::new(10, 3);
        let _ = screen.write(&[Span::plain("a".repeat(35))]);
        let (out, done) = screen.replace(&[vec![Span::plain("styled")]], false);
        assert!(!done);
        assert_eq!(out, "\n");
    }

    #[test]
    fn the_cursor_is_erased_before_more_text() {
        let mut screen = Screen::new(10, 24);
        let _ = screen.write(&[Span::plain("abc")]);
        assert_eq!(screen.show_cursor(), "\x1b[90m●\x1b[0m");
        assert_eq!(screen.write(&[Span::plain("d")]), "\r\x1b[3C\x1b[Kd");
    }

    #[test]
    fn the_status_line_is_cut_to_the_width() {
        let mut screen = Screen::new(10, 24);
        assert_eq!(
            screen.status(&[Span::plain("0123456789abc")]),
            "\r\x1b[2K012345678"
        );
        assert_eq!(screen.end_line(), "\r\x1b[2K\n");
    }
}
