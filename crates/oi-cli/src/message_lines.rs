//! The model's message as Markdown, a line at a time, so it can be shown as it streams:
//! the lines of a paragraph (or a list item, a quote) are one block, reflowed to the width
//! as each line comes (a soft line break is a space, as in the original); a fenced code
//! block is coloured in a frame line by line; a table is drawn again, aligned, as each row
//! comes. The line still being written is shown too ([`MessageLines::preview`]), styled,
//! with the markup it has opened but not yet closed taken as closed.

use crate::highlight::{CodeColours, Grammars};
use crate::markdown;
use crate::sanitize::show_code;
use crate::style::{CODE, LABEL, MUTED, Span};
use crate::wrap::Break;
use crate::wrap::Line;

/// An open fenced code block.
struct Fence {
    marker: String,
    colours: CodeColours,
}

/// A block that the next line may still belong to.
#[derive(Clone)]
struct Open {
    /// A table (its rows), not a paragraph.
    table: bool,
    /// The indent of its rows.
    indent: String,
    /// Its Markdown so far.
    text: String,
}

impl Open {
    fn lines(&self, cols: usize, grammars: &Grammars) -> Vec<Line> {
        markdown::lines(&self.text, &self.indent, cols, grammars)
    }

    /// Whether `trimmed` (a line without its indent) goes on this block.
    fn continued_by(&self, trimmed: &str) -> bool {
        if self.table {
            return trimmed.starts_with('|');
        }
        if trimmed.is_empty() || trimmed.starts_with('|') || fence_marker(trimmed).is_some() {
            return false;
        }
        match trimmed.strip_prefix('>') {
            // A quote goes on with its next quoted line.
            Some(quoted) => {
                self.text.starts_with('>') && {
                    let quoted = quoted.trim_start();
                    !quoted.is_empty() && !starts_block(quoted)
                }
            }
            None => !starts_block(trimmed),
        }
    }
}

/// The state a message's lines are read in.
#[derive(Default)]
pub struct MessageLines {
    fence: Option<Fence>,
    open: Option<Open>,
}

/// What to draw for a line.
pub struct Styled {
    /// The block the line closed, drawn again when it was part of the draft.
    pub closed: Vec<Line>,
    /// The lines.
    pub lines: Vec<Line>,
    /// They replace the block drawn last (the paragraph or table they continue).
    pub replace: bool,
}

impl MessageLines {
    /// A message's start.
    pub fn new() -> Self {
        Self::default()
    }

    /// The block drawn last is final: the next line starts a new one (a paragraph taller
    /// than the screen can no longer be redrawn).
    pub fn close_block(&mut self) {
        self.open = None;
    }

    /// The styled form of the message's next complete `line`, under `indent`.
    pub fn line(&mut self, line: &str, indent: &str, cols: usize, grammars: &Grammars) -> Styled {
        let trimmed = line.trim_start();
        if let Some(fence) = self.fence.as_mut() {
            let closes = trimmed.starts_with(&fence.marker)
                && trimmed
                    .trim_start_matches(fence.marker.chars().next().unwrap_or('`'))
                    .trim()
                    .is_empty();
            if closes {
                self.fence = None;
                return text(vec![frame_foot(indent)]);
            }
            let body = fence.colours.line(&show_code(line));
            return text(vec![Line::new(gutter(indent), body, Break::Anywhere)]);
        }
        if let Some(open) = self.open.as_mut().filter(|open| open.continued_by(trimmed)) {
            open.text.push('\n');
            open.text.push_str(trimmed);
            return Styled {
                closed: Vec::new(),
                lines: open.lines(cols, grammars),
                replace: true,
            };
        }
        let closed = self
            .open
            .take()
            .map(|open| open.lines(cols, grammars))
            .unwrap_or_default();
        let lines = if let Some(marker) = fence_marker(trimmed) {
            let language = fence_language(trimmed, marker);
            self.fence = Some(Fence {
                marker: marker.to_owned(),
                colours: CodeColours::new(grammars, language),
            });
            vec![frame_head(indent, language)]
        } else if trimmed.is_empty() {
            vec![Line::new(
                vec![Span::plain(indent)],
                Vec::new(),
                Break::Words,
            )]
        } else {
            let open = Open {
                table: trimmed.starts_with('|'),
                indent: format!("{indent}{}", " ".repeat(line.len() - trimmed.len())),
                text: trimmed.to_owned(),
            };
            let lines = open.lines(cols, grammars);
            if !ends_itself(trimmed) {
                self.open = Some(open);
            }
            lines
        };
        Styled {
            closed,
            lines,
            replace: false,
        }
    }

    /// How the line still being written, `partial`, looks so far: with the block it goes on
    /// (or the block before it), so it [replaces](Styled::replace) that block.
    pub fn preview(&self, partial: &str, indent: &str, cols: usize, grammars: &Grammars) -> Styled {
        let trimmed = partial.trim_start();
        if self.fence.is_some() {
            let body = vec![Span::new(CODE, show_code(partial))];
            return text(vec![Line::new(gutter(indent), body, Break::Anywhere)]);
        }
        let replace = self.open.is_some();
        if let Some(open) = self.open.as_ref().filter(|open| open.continued_by(trimmed)) {
            let mut open = open.clone();
            open.text.push('\n');
            open.text.push_str(&closed_markup(trimmed));
            return Styled {
                closed: Vec::new(),
                lines: open.lines(cols, grammars),
                replace,
            };
        }
        let mut lines = self
            .open
            .as_ref()
            .map(|open| open.lines(cols, grammars))
            .unwrap_or_default();
        if let Some(marker) = fence_marker(trimmed) {
            lines.push(frame_head(indent, fence_language(trimmed, marker)));
        } else if !trimmed.is_empty() {
            let indent = format!("{indent}{}", " ".repeat(partial.len() - trimmed.len()));
            lines.extend(markdown::lines(
                &closed_markup(trimmed),
                &indent,
                cols,
                grammars,
            ));
        }
        Styled {
            closed: Vec::new(),
            lines,
            replace,
        }
    }
}

fn text(lines: Vec<Line>) -> Styled {
    Styled {
        closed: Vec::new(),
        lines,
        replace: false,
    }
}

fn gutter(indent: &str) -> Vec<Span> {
    vec![Span::plain(indent), Span::new(MUTED, "│ ")]
}

fn frame_head(indent: &str, language: &str) -> Line {
    let label = if language.is_empty() {
        "code"
    } else {
        language
    };
    let head = vec![Span::plain(indent), Span::new(MUTED, "╭─ ")];
    Line::new(
        head,
        vec![Span::new(LABEL, show_code(label))],
        Break::Anywhere,
    )
}

fn frame_foot(indent: &str) -> Line {
    let foot = vec![Span::plain(indent), Span::new(MUTED, "╰─")];
    Line::new(foot, Vec::new(), Break::Anywhere)
}

/// The language a fence's opening line names.
fn fence_language<'a>(trimmed: &'a str, marker: &str) -> &'a str {
    trimmed[marker.len()..]
        .split_whitespace()
        .next()
        .unwrap_or("")
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

/// Whether a line (without its indent) starts a block of its own rather than going on with
/// a paragraph: a heading, a list item, a quote, a rule, an HTML block.
fn starts_block(trimmed: &str) -> bool {
    let marker_then_space = |rest: &str| rest.is_empty() || rest.starts_with([' ', '\t']);
    if let Some(rest) = trimmed.strip_prefix(['-', '*', '+']) {
        if marker_then_space(rest) {
            return true;
        }
    }
    let hashes = trimmed.len() - trimmed.trim_start_matches('#').len();
    if (1..=6).contains(&hashes) && marker_then_space(&trimmed[hashes..]) {
        return true;
    }
    let digits = trimmed.len()
        - trimmed
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .len();
    if (1..=9).contains(&digits) {
        if let Some(rest) = trimmed[digits..].strip_prefix(['.', ')']) {
            if marker_then_space(rest) {
                return true;
            }
        }
    }
    trimmed.starts_with(['>', '<']) || is_rule(trimmed)
}

/// `---`, `***`, `___` (spaces allowed between).
fn is_rule(trimmed: &str) -> bool {
    ['-', '*', '_'].iter().any(|&c| {
        trimmed.chars().filter(|&x| x == c).count() >= 3
            && trimmed.chars().all(|x| x == c || x == ' ')
    })
}

/// A line that is a block by itself: the next line never goes on with it.
fn ends_itself(trimmed: &str) -> bool {
    let hashes = trimmed.len() - trimmed.trim_start_matches('#').len();
    (1..=6).contains(&hashes) || is_rule(trimmed)
}

/// `partial` with the inline markup it opened and has not closed yet taken as closed, and
/// the markers it ends with left out: `Here is **your proj` reads as bold `your proj`
/// while it streams, never as `**your proj`.
pub fn closed_markup(partial: &str) -> String {
    let mut text = partial.trim_end_matches(['*', '_', '`', '~']).trim_end();
    if text.ends_with('\\') {
        text = &text[..text.len() - 1];
    }
    let chars: Vec<char> = text.chars().collect();
    let mut open: Vec<String> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let run = chars[i..].iter().take_while(|&&x| x == c).count();
        let in_code = open.last().is_some_and(|m| m.starts_with('`'));
        match c {
            '\\' => {
                i += 2;
                continue;
            }
            '`' => {
                let marker = "`".repeat(run);
                if open.last() == Some(&marker) {
                    open.pop();
                } else if !in_code {
                    open.push(marker);
                }
            }
            '*' | '_' | '~' if !in_code => {
                let marker: String = std::iter::repeat_n(c, run.min(3)).collect();
                let before = i.checked_sub(1).map(|b| chars[b]);
                let after = chars.get(i + run).copied();
                if let Some(at) = open.iter().rposition(|m| *m == marker) {
                    if before.is_some_and(|b| !b.is_whitespace()) {
                        open.truncate(at);
                    }
                } else {
                    let opens = after.is_some_and(|a| !a.is_whitespace())
                        && (c != '_' || !before.is_some_and(char::is_alphanumeric))
                        && (c != '~' || run >= 2);
                    if opens {
                        open.push(marker);
                    }
                }
            }
            _ => {}
        }
        i += run;
    }
    let mut out = text.to_owned();
    for marker in open.iter().rev() {
        out.push_str(marker);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::style::text_of;

    /// The rows on the screen after `lines`, each replacing the block it continues.
    fn shown(lines: &[&str], cols: usize) -> Vec<String> {
        let grammars = Grammars::new();
        let mut state = MessageLines::new();
        let mut out: Vec<String> = Vec::new();
        let mut block = 0;
        for line in lines {
            let styled = state.line(line, "  ", cols, &grammars);
            if styled.replace {
                out.truncate(out.len() - block);
            }
            let rows = crate::wrap::rows(&styled.lines, cols);
            block = rows.len();
            out.extend(rows.iter().map(|row| text_of(row)));
        }
        out
    }

    #[test]
    fn lines_are_styled() {
        assert_eq!(
            shown(&["## Plan", "1. **look** at `x`", "  - nested"], 80),
            ["  Plan", "  1. look at x", "    • nested"]
        );
    }

    #[test]
    fn a_paragraph_is_reflowed_as_its_lines_come() {
        assert_eq!(
            shown(
                &[
                    "The log folder has grown to",
                    "2 GB; I suggest",
                    "removing old files.",
                    "",
                    "- an item that",
                    "  goes on",
                    "> quoted and",
                    "> more"
                ],
                30
            ),
            [
                "  The log folder has grown to",
                "  2 GB; I suggest removing old",
                "  files.",
                "  ",
                "  • an item that goes on",
                "  ▌ quoted and more"
            ]
        );
    }

    #[test]
    fn fences_and_tables() {
        assert_eq!(
            shown(&["```python", "print(1)", "```"], 80),
            ["  ╭─ python", "  │ print(1)", "  ╰─"]
        );
        assert_eq!(
            shown(&["Sizes:", "| a | bb |", "|---|---|", "| ccc | d |"], 80),
            ["  Sizes:", "  a   │ bb", "  ────┼───", "  ccc │ d"]
        );
    }

    #[test]
    fn a_partial_line_reads_as_if_its_markup_were_closed() {
        assert_eq!(closed_markup("in **your proj"), "in **your proj**");
        assert_eq!(
            closed_markup("in **your proj**, and *"),
            "in **your proj**, and"
        );
        assert_eq!(closed_markup("use `ls -l"), "use `ls -l`");
        assert_eq!(closed_markup("a *b **c"), "a *b **c***");
        assert_eq!(closed_markup("2 * 3 = 6"), "2 * 3 = 6");
        assert_eq!(closed_markup("snake_case and"), "snake_case and");
        let grammars = Grammars::new();
        let mut state = MessageLines::new();
        let _ = state.line("Here is what I found", "  ", 40, &grammars);
        let styled = state.preview("in **your proj", "  ", 40, &grammars);
        assert!(styled.replace);
        let rows = crate::wrap::rows(&styled.lines, 40);
        let shown: Vec<String> = rows.iter().map(|row| text_of(row)).collect();
        assert_eq!(shown, ["  Here is what I found in your proj"]);
        assert!(
            rows[0]
                .iter()
                .any(|s| s.text == "your proj" && s.style == "1")
        );
    }
}
