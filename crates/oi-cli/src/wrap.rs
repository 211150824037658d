//! Wrapping a line of [`Span`]s into terminal rows: prose breaks between words (a word
//! longer than a row is cut), code breaks at the edge; every row starts with a prefix (an
//! indent, a frame), so nothing is left to the terminal's own wrapping, which cuts words
//! ("me/ssages") and loses the indent.

use crate::style::{Span, char_width, spans_width};

/// Where a line may break.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Break {
    /// Between words; spaces at a break are dropped.
    Words,
    /// Anywhere (code, output): every character is kept.
    Anywhere,
}

/// One logical line: its body, the prefix of its first row and of the rows it wraps onto.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// The prefix of the first row (indent, list marker, quote bar, frame).
    pub first: Vec<Span>,
    /// The prefix of the following rows.
    pub rest: Vec<Span>,
    /// The text.
    pub body: Vec<Span>,
    /// Where it may break.
    pub brk: Break,
}

impl Line {
    /// A line whose rows all start with `prefix`.
    pub fn new(prefix: Vec<Span>, body: Vec<Span>, brk: Break) -> Self {
        Line {
            first: prefix.clone(),
            rest: prefix,
            body,
            brk,
        }
    }
}

/// The rows of `lines` on a terminal `cols` wide.
pub fn rows(lines: &[Line], cols: usize) -> Vec<Vec<Span>> {
    lines
        .iter()
        .flat_map(|line| wrap(&line.body, cols, &line.first, &line.rest, line.brk))
        .collect()
}

/// The rows of `line` on a terminal `cols` wide: the first row starts with `first`, the
/// others with `rest`. An empty line is one row holding the prefix.
pub fn wrap(
    line: &[Span],
    cols: usize,
    first: &[Span],
    rest: &[Span],
    mode: Break,
) -> Vec<Vec<Span>> {
    let mut rows = Rows::new(cols, first, rest, mode == Break::Words);
    match mode {
        Break::Anywhere => {
            for span in line {
                for c in span.text.chars() {
                    rows.push_char(span.style, c);
                }
            }
        }
        Break::Words => {
            for token in tokens(line) {
                rows.push_token(&token);
            }
        }
    }
    rows.finish()
}

/// A word (maybe in several styles: `**bold**,`) or a run of spaces.
struct Token {
    parts: Vec<(&'static str, String)>,
    blank: bool,
}

/// The words and runs of spaces of a line.
fn tokens(line: &[Span]) -> Vec<Token> {
    let mut out: Vec<Token> = Vec::new();
    for span in line {
        for c in span.text.chars() {
            let blank = c == ' ';
            let token = match out.last_mut() {
                Some(token) if token.blank == blank => token,
                _ => {
                    out.push(Token {
                        parts: Vec::new(),
                        blank,
                    });
                    let Some(token) = out.last_mut() else {
                        return out;
                    };
                    token
                }
            };
            match token.parts.last_mut() {
                Some((style, text)) if *style == span.style => text.push(c),
                _ => token.parts.push((span.style, c.to_string())),
            }
        }
    }
    out
}

struct Rows<'a> {
    cols: usize,
    /// Spaces at a break are dropped (prose).
    trim: bool,
    rest: &'a [Span],
    done: Vec<Vec<Span>>,
    row: Vec<Span>,
    used: usize,
    /// Width of the prefix of the current row.
    prefix: usize,
}

impl<'a> Rows<'a> {
    fn new(cols: usize, first: &[Span], rest: &'a [Span], trim: bool) -> Self {
        let prefix = spans_width(first);
        Rows {
            cols: cols.max(prefix + 1),
            trim,
            rest,
            done: Vec::new(),
            row: first.to_vec(),
            used: prefix,
            prefix,
        }
    }

    fn at_row_start(&self) -> bool {
        self.used == self.prefix
    }

    fn new_row(&mut self) {
        if self.trim {
            self.trim_trailing_spaces();
        }
        let row = std::mem::replace(&mut self.row, self.rest.to_vec());
        self.done.push(row);
        self.prefix = spans_width(self.rest);
        self.used = self.prefix;
        if self.cols <= self.prefix {
            self.cols = self.prefix + 1;
        }
    }

    /// Drops the spaces at the end of the current row (never into its prefix).
    fn trim_trailing_spaces(&mut self) {
        let mut spare = self.used - self.prefix;
        while spare > 0 {
            let Some(last) = self.row.last_mut() else {
                return;
            };
            if !last.text.ends_with(' ') {
                return;
            }
            last.text.pop();
            spare -= 1;
            self.used -= 1;
            if last.text.is_empty() {
                self.row.pop();
            }
        }
    }

    fn append(&mut self, style: &'static str, text: &str, columns: usize) {
        match self.row.last_mut() {
            Some(last) if last.style == style => last.text.push_str(text),
            _ => self.row.push(Span::new(style, text)),
        }
        self.used += columns;
    }

    fn push_char(&mut self, style: &'static str, c: char) {
        let w = char_width(c);
        if self.used + w > self.cols && !self.at_row_start() {
            self.new_row();
        }
        let mut buf = [0u8; 4];
        self.append(style, c.encode_utf8(&mut buf), w);
    }

    fn push_token(&mut self, token: &Token) {
        let w: usize = token
            .parts
            .iter()
            .map(|(_, text)| text.chars().map(char_width).sum::<usize>())
            .sum();
        if token.blank {
            if self.at_row_start() && !self.done.is_empty() {
                return;
            }
            if self.used + w > self.cols {
                self.new_row();
                return;
            }
        } else if self.used + w > self.cols && !self.at_row_start() && w <= self.cols - self.prefix
        {
            self.new_row();
        }
        if self.used + w <= self.cols {
            for (style, text) in &token.parts {
                self.append(style, text, text.chars().map(char_width).sum());
            }
            return;
        }
        for (style, text) in &token.parts {
            for c in text.chars() {
                self.push_char(style, c);
            }
        }
    }

    fn finish(mut self) -> Vec<Vec<Span>> {
        self.done.push(std::mem::take(&mut self.row));
        self.done
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::style::{BOLD, text_of};

    fn texts(rows: &[Vec<Span>]) -> Vec<String> {
        rows.iter().map(|r| text_of(r)).collect()
    }

    #[test]
    fn prose_breaks_between_words_with_the_indent() {
        let line = [Span::plain("the quick brown fox jumps over the lazy dog")];
        let rows = wrap(
            &line,
            16,
            &[Span::plain("  ")],
            &[Span::plain("  ")],
            Break::Words,
        );
        assert_eq!(
            texts(&rows),
            [
                "  the quick",
                "  brown fox",
                "  jumps over the",
                "  lazy dog"
            ]
        );
        for row in &rows {
            assert!(spans_width(row) <= 16);
        }
    }

    #[test]
    fn long_words_are_cut_and_styles_kept() {
        let line = [Span::plain("a "), Span::new(BOLD, "abcdefghij")];
        let rows = wrap(&line, 6, &[], &[], Break::Words);
        assert_eq!(texts(&rows), ["a abcd", "efghij"]);
        assert_eq!(rows[1][0].style, BOLD);
        assert_eq!(rows[0][1].style, BOLD);
    }

    #[test]
    fn code_breaks_anywhere_and_keeps_its_spaces() {
        let line = [Span::plain("    x = 1  # c")];
        let rows = wrap(
            &line,
            8,
            &[Span::plain("| ")],
            &[Span::plain("| ")],
            Break::Anywhere,
        );
        assert_eq!(texts(&rows), ["|     x ", "| = 1  #", "|  c"]);
    }

    #[test]
    fn an_empty_line_is_one_row() {
        assert_eq!(
            texts(&wrap(&[], 10, &[Span::plain("  ")], &[], Break::Words)),
            ["  "]
        );
    }
}
