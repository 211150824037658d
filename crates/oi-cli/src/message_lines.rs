//! The model's message as Markdown, one complete line at a time, so it can be shown as it
//! streams: a line is styled alone (headings, list items, quotes, emphasis, code, links),
//! except inside a fenced code block (coloured in a frame) and a table (the whole table is
//! drawn again, aligned, as each row comes).

use crate::highlight::{CodeColours, Grammars};
use crate::markdown;
use crate::sanitize::show_code;
use crate::style::{LABEL, MUTED, Span};
use crate::wrap::Break;
use crate::wrap::Line;

/// An open fenced code block.
struct Fence {
    marker: String,
    colours: CodeColours,
}

/// The state a message's lines are read in.
#[derive(Default)]
pub struct MessageLines {
    fence: Option<Fence>,
    table: Option<String>,
}

/// What to draw for a line.
pub struct Styled {
    /// The lines.
    pub lines: Vec<Line>,
    /// They replace the table drawn so far (and may be replaced by its next row).
    pub table: bool,
}

impl MessageLines {
    /// A message's start.
    pub fn new() -> Self {
        Self::default()
    }

    /// The styled form of the message's next complete `line`, under `indent`.
    pub fn line(&mut self, line: &str, indent: &str, cols: usize, grammars: &Grammars) -> Styled {
        let trimmed = line.trim_start();
        let prefix = vec![Span::plain(indent)];
        if let Some(fence) = self.fence.as_mut() {
            let closes = trimmed.starts_with(&fence.marker)
                && trimmed
                    .trim_start_matches(fence.marker.chars().next().unwrap_or('`'))
                    .trim()
                    .is_empty();
            if closes {
                self.fence = None;
                let mut foot = prefix;
                foot.push(Span::new(MUTED, "╰─"));
                return text(vec![Line::new(foot, Vec::new(), Break::Anywhere)]);
            }
            let mut gutter = prefix;
            gutter.push(Span::new(MUTED, "│ "));
            let body = fence.colours.line(&show_code(line));
            return text(vec![Line::new(gutter, body, Break::Anywhere)]);
        }
        if let Some(marker) = fence_marker(trimmed) {
            let language = trimmed[marker.len()..]
                .split_whitespace()
                .next()
                .unwrap_or("");
            self.fence = Some(Fence {
                marker: marker.to_owned(),
                colours: CodeColours::new(grammars, language),
            });
            let label = if language.is_empty() {
                "code"
            } else {
                language
            };
            let mut head = prefix;
            head.push(Span::new(MUTED, "╭─ "));
            return text(vec![Line::new(
                head,
                vec![Span::new(LABEL, show_code(label))],
                Break::Anywhere,
            )]);
        }
        if trimmed.starts_with('|') {
            let table = self.table.get_or_insert_with(String::new);
            table.push_str(trimmed);
            table.push('\n');
            return Styled {
                lines: markdown::lines(table, indent, cols, grammars),
                table: true,
            };
        }
        self.table = None;
        if trimmed.is_empty() {
            return text(vec![Line::new(prefix, Vec::new(), Break::Words)]);
        }
        let depth = line.len() - trimmed.len();
        let indent = format!("{indent}{}", " ".repeat(depth));
        text(markdown::lines(trimmed, &indent, cols, grammars))
    }
}

fn text(lines: Vec<Line>) -> Styled {
    Styled {
        lines,
        table: false,
    }
}

/// The fence a line opens with (three or more backticks or tildes), if any.
fn fence_marker(trimmed: &str) -> Option<&str> {
    for c in ['`', '~'] {
        let run = trimmed.len() - trimmed.trim_start_matches(c).len();
        if run >= 3 {
            return Some(&trimmed[..run]);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::style::text_of;

    fn shown(lines: &[&str], cols: usize) -> Vec<String> {
        let grammars = Grammars::new();
        let mut state = MessageLines::new();
        let mut out = Vec::new();
        for line in lines {
            let styled = state.line(line, "  ", cols, &grammars);
            if styled.table {
                out.clear();
            }
            for row in crate::wrap::rows(&styled.lines, cols) {
                out.push(text_of(&row));
            }
        }
        out
    }

    #[test]
    fn lines_are_styled_alone() {
        assert_eq!(
            shown(&["## Plan", "1. **look** at `x`", "  - nested"], 80),
            ["  Plan", "  1. look at x", "    • nested"]
        );
    }

    #[test]
    fn fences_and_tables() {
        assert_eq!(
            shown(&["```python", "print(1)", "```"], 80),
            ["  ╭─ python", "  │ print(1)", "  ╰─"]
        );
        assert_eq!(
            shown(&["| a | bb |", "|---|---|", "| ccc | d |"], 80),
            ["  a   │ bb", "  ────┼───", "  ccc │ d"]
        );
    }
}
