//! What is on the terminal below the last finished line: the line being written (printed as
//! it streams, then redrawn styled and wrapped once it is complete — every row it wrapped
//! onto is erased, however narrow the terminal), the streaming cursor after it, and a status
//! line (spinner, elapsed time) while nothing else is written. Only CSI sequences are used
//! (cursor up, erase), so no program output can be confused with them.

use crate::style::{MUTED, Span, render, rows, spans_sure_width, spans_width, width};

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
    /// The fewest columns those can take on any terminal: an erase moves up by this, so it
    /// never reaches a row above the live line when the terminal's character widths differ
    /// from oi's (it may then leave a row of the raw text, never hide one above).
    live_sure: usize,
    /// Rows the last [`replace`](Self::replace) or [`draft`](Self::draft) wrote as a block
    /// (a paragraph or a table being drawn), which the next one may erase too.
    block: usize,
    /// The live line is a draft: [`block`](Self::block) rows and the live row, all erased
    /// by the next replace or draft.
    drafted: bool,
    /// The rows of the draft on the screen (when [`drafted`](Self::drafted)), so the next
    /// draft rewrites only from the first row that changed.
    drawn: Vec<Vec<Span>>,
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
            live_sure: 0,
            block: 0,
            drafted: false,
            drawn: Vec::new(),
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

    /// Erases what the terminal echoed after the live text (`^C` when CTRL-C is pressed
    /// while code runs), which would otherwise sit in front of the next frame.
    pub fn erase_echo(&mut self) -> String {
        let mut out = self.settle();
        let column = self.live % self.cols;
        out.push('\r');
        if column > 0 {
            out.push_str(&format!("\x1b[{column}C"));
        }
        out.push_str("\x1b[K");
        out
    }

    /// Writes spans on the current line.
    pub fn write(&mut self, spans: &[Span]) -> String {
        let mut out = self.settle();
        out.push_str(&render(spans, true));
        self.live += spans_width(spans);
        self.live_sure += spans_sure_width(spans);
        out
    }

    /// Ends the current line.
    pub fn end_line(&mut self) -> String {
        let mut out = self.settle();
        out.push('\n');
        self.live = 0;
        self.live_sure = 0;
        self.block = 0;
        self.drafted = false;
        out
    }

    /// The terminal's height.
    pub fn height(&self) -> usize {
        self.height
    }

    /// Rows of the block the next replace may erase.
    pub fn block_rows(&self) -> usize {
        self.block
    }

    /// A draft is on the screen (see [`draft`](Self::draft)).
    pub fn drafted(&self) -> bool {
        self.drafted
    }

    /// Rows above the cursor's row that an erase reaches: the live line's rows and, with
    /// `block` or under a draft, the block's.
    fn reach(&self, block: bool) -> usize {
        let above = if block || self.drafted { self.block } else { 0 };
        let live = if self.live == 0 {
            0
        } else {
            rows(self.live_sure, self.cols) - 1
        };
        live + above
    }

    /// Draws `rows_out` as the line being written (styled and wrapped while it streams):
    /// erases the live line (and, with `block` or under an earlier draft, the block), then
    /// writes the rows, the last without its newline so the line can go on. The next
    /// replace or draft erases all of it. `None` (nothing written) when that would reach
    /// above the top of the terminal: the caller writes the text raw instead.
    pub fn draft(&mut self, rows_out: &[Vec<Span>], block: bool) -> Option<String> {
        let up = self.reach(block);
        if up + 1 >= self.height || rows_out.len() + 1 >= self.height {
            return None;
        }
        // Rows of the draft on the screen that stay as they are (not its last, open row).
        let kept = if self.drafted {
            if self.drawn == rows_out {
                return Some(String::new());
            }
            let same = self.drawn.iter().zip(rows_out).take_while(|(a, b)| a == b);
            same.count()
                .min(self.drawn.len().saturating_sub(1))
                .min(rows_out.len().saturating_sub(1))
        } else {
            0
        };
        let up = up - kept.min(up);
        let mut out = self.settle();
        if up > 0 {
            out.push_str(&format!("\x1b[{up}A"));
        }
        out.push_str("\r\x1b[J");
        let Some((last, done)) = rows_out.split_last() else {
            self.live = 0;
            self.live_sure = 0;
            self.block = 0;
            self.drafted = false;
            return Some(out);
        };
        for row in &done[kept..] {
            out.push_str(render(row, true).trim_end_matches(' '));
            out.push('\n');
        }
        out.push_str(&render(last, true));
        self.live = spans_width(last).max(1);
        self.live_sure = spans_sure_width(last);
        self.block = done.len();
        self.drafted = true;
        self.drawn = rows_out.to_vec();
        Some(out)
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
        self.drafted = false;
        out
    }

    /// Erases the live line (every row it wrapped onto, or the draft) and, with `block`,
    /// the rows the last replace wrote, then writes `rows_out` in its place; all but the
    /// first `keep` of them can be replaced again (a paragraph reflowed, a table redrawn as
    /// its rows come). When that reaches above the top of the terminal nothing is erased:
    /// the line ends, `rows_out` are not written (the raw text stays) and `false` is
    /// returned.
    pub fn replace(&mut self, rows_out: &[Vec<Span>], block: bool) -> (String, bool) {
        self.replace_keeping(rows_out, block, 0)
    }

    /// [`replace`](Self::replace), the first `keep` rows final.
    pub fn replace_keeping(
        &mut self,
        rows_out: &[Vec<Span>],
        block: bool,
        keep: usize,
    ) -> (String, bool) {
        let mut out = self.settle();
        let up = self.reach(block);
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
        self.live_sure = 0;
        self.block = rows_out.len().saturating_sub(keep);
        self.drafted = false;
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

    /// Review of issue 34: 150 × U+17D8 (3 columns to oi, 1 to glibc and tmux) made the
    /// redraw of a finished code line move up 4 rows on a 100-column terminal and erase the
    /// code lines above it, which were never drawn again.
    #[test]
    fn an_erase_never_reaches_above_the_line_whatever_the_terminal_counts() {
        let khmer = format!("# {}", "\u{17d8}".repeat(150));
        let mut screen = Screen::new(100, 40);
        let _ = screen.write(&[Span::new(crate::style::NORMAL, khmer)]);
        let (out, redrawn) = screen.replace(&[vec![Span::new(crate::style::NORMAL, "x")]], false);
        assert!(redrawn);
        assert!(out.starts_with("\x1b[1A\r\x1b[J"), "{out:?}");
        let symbols = format!("{}{}", "\u{2630}".repeat(70), "\u{1fa77}".repeat(60));
        let mut screen = Screen::new(100, 40);
        let _ = screen.write(&[Span::new(crate::style::NORMAL, symbols)]);
        let (out, _) = screen.replace(&[vec![Span::new(crate::style::NORMAL, "x")]], false);
        assert!(out.starts_with("\r\x1b[J"), "{out:?}");
        // Wide scripts every terminal agrees on still erase every row they wrapped onto.
        let mut screen = Screen::new(100, 40);
        let _ = screen.write(&[Span::new(crate::style::NORMAL, "\u{4e2d}".repeat(120))]);
        let (out, _) = screen.replace(&[vec![Span::new(crate::style::NORMAL, "x")]], false);
        assert!(out.starts_with("\x1b[2A\r\x1b[J"), "{out:?}");
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
    fn a_draft_is_erased_with_its_rows_by_the_next() {
        let mut screen = Screen::new(10, 24);
        let rows = [vec![Span::plain("one")], vec![Span::plain("two")]];
        assert_eq!(screen.draft(&rows, false).unwrap(), "\r\x1b[Jone\ntwo");
        // The same draft again writes nothing; a longer one only from the changed row.
        assert_eq!(screen.draft(&rows, false).unwrap(), "");
        let longer = [vec![Span::plain("one")], vec![Span::plain("two three")]];
        assert_eq!(screen.draft(&longer, false).unwrap(), "\r\x1b[Jtwo three");
        let other = [vec![Span::plain("uno")], vec![Span::plain("two")]];
        assert_eq!(
            screen.draft(&other, false).unwrap(),
            "\x1b[1A\r\x1b[Juno\ntwo"
        );
        // Shorter: the cursor goes back to the row the draft now ends on.
        let one = [vec![Span::plain("uno")]];
        assert_eq!(screen.draft(&one, false).unwrap(), "\x1b[1A\r\x1b[Juno");
        assert_eq!(screen.draft(&other, false).unwrap(), "\r\x1b[Juno\ntwo");
        let (out, done) = screen.replace(&[vec![Span::plain("x")]], false);
        assert!(done);
        assert_eq!(out, "\x1b[1A\r\x1b[Jx\n");
        // The replaced rows stay the block a later replace may erase.
        let (out, _) = screen.replace(&[vec![Span::plain("y")]], true);
        assert_eq!(out, "\x1b[1A\r\x1b[Jy\n");
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
