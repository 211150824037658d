//! oi's own texts — `%help`, `%tokens`, `%info`, the start-up notes — written as Markdown and
//! shown as Markdown on a terminal (styled, indented, wrapped between words to its width), or
//! as they are written in plain mode and pipes.

use std::io::{self, Write};

use crate::highlight::Grammars;
use crate::style::{MUTED, Span};
use crate::term::Size;
use crate::wrap::{Break, wrap};

/// The indent of oi's texts on a terminal.
const INDENT: &str = "  ";

/// How oi's texts are shown.
#[derive(Debug, Clone)]
pub struct Style {
    colour: bool,
    grammars: Grammars,
}

impl Style {
    /// Styled when standard output is a terminal and plain text was not asked for.
    pub fn choose(plain: bool, grammars: &Grammars) -> Self {
        use std::io::IsTerminal;
        Style {
            colour: !plain && io::stdout().is_terminal(),
            grammars: grammars.clone(),
        }
    }

    /// Whether texts are styled.
    pub fn colour(&self) -> bool {
        self.colour
    }

    /// Markdown `text` as it is shown.
    pub fn markdown(&self, text: &str) -> String {
        if !self.colour {
            return text.to_owned();
        }
        crate::markdown::render(text, INDENT, Size::now().cols, &self.grammars, true)
    }

    /// Verbatim `text` (JSON, paths) as it is shown: muted and wrapped on a terminal.
    pub fn verbatim(&self, text: &str) -> String {
        if !self.colour {
            return text.to_owned();
        }
        let cols = Size::now().cols;
        let prefix = [Span::plain(INDENT)];
        let mut out = String::new();
        for line in text.lines() {
            let body = [Span::new(MUTED, line)];
            for row in wrap(&body, cols, &prefix, &prefix, Break::Anywhere) {
                out.push_str(&crate::style::render(&row, true));
                out.push('\n');
            }
        }
        out
    }
}

/// `text` wrapped between words to the terminal's width under `indent` when standard output
/// is a terminal, as it is otherwise (for notes written straight to the terminal).
pub fn wrapped(text: &str, indent: &str) -> String {
    use std::io::IsTerminal;
    if !io::stdout().is_terminal() {
        return format!("{indent}{text}");
    }
    let cols = Size::now().cols;
    let prefix = [Span::plain(indent)];
    let mut out = String::new();
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let rows = wrap(&[Span::plain(line)], cols, &prefix, &prefix, Break::Words);
        let rows: Vec<String> = rows
            .iter()
            .map(|row| crate::style::render(row, false))
            .collect();
        out.push_str(&rows.join("\n"));
    }
    out
}

/// A text being written out in a [`Style`].
pub struct Doc<'a> {
    style: &'a Style,
    out: &'a mut dyn Write,
}

impl<'a> Doc<'a> {
    /// Writes to `out` in `style`.
    pub fn new(style: &'a Style, out: &'a mut dyn Write) -> Self {
        Doc { style, out }
    }

    /// Writes Markdown.
    pub fn md(&mut self, text: &str) -> io::Result<()> {
        self.out.write_all(self.style.markdown(text).as_bytes())
    }

    /// Writes verbatim text.
    pub fn raw(&mut self, text: &str) -> io::Result<()> {
        self.out.write_all(self.style.verbatim(text).as_bytes())
    }

    /// Writes text as it is, styled or not (a stream of program output).
    pub fn stream(&mut self, text: &str) -> io::Result<()> {
        self.out.write_all(text.as_bytes())?;
        self.out.flush()
    }
}
