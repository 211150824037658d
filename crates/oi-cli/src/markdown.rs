//! Markdown for the terminal (CommonMark with tables, strikethrough and task lists, read by
//! `pulldown-cmark`): headings, emphasis, inline code, links, lists, quotes, rules, tables
//! and fenced code (coloured), wrapped between words to the terminal's width under a
//! prefix. [`lines`] turns a document into [`Line`]s; [`rows`] wraps them; [`render`]
//! does both and writes the text with escapes, or plain.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use crate::highlight::{CodeColours, Grammars};
use crate::style::{
    ACCENT, BOLD, INLINE_CODE, LABEL, LINK, MUTED, NORMAL, Sgr, Span, TITLE, spans_width,
};
use crate::wrap::{Break, Line, rows};

/// `text` as rows of a terminal `cols` wide under `indent`, written with escapes (`colour`)
/// or plain, each row ending in a newline. Each line of a paragraph starts a row (oi's own
/// texts are written a line per row).
pub fn render(text: &str, indent: &str, cols: usize, grammars: &Grammars, colour: bool) -> String {
    let mut out = String::new();
    let mut walker = Walker::new(indent, cols, grammars);
    walker.hard_breaks = true;
    for row in rows(&walker.read(text), cols) {
        out.push_str(crate::style::render(&row, colour).trim_end_matches(' '));
        out.push('\n');
    }
    out
}

/// The lines of a Markdown document, every row starting with `indent`; `cols` is the width
/// rules and tables are drawn for.
pub fn lines(text: &str, indent: &str, cols: usize, grammars: &Grammars) -> Vec<Line> {
    Walker::new(indent, cols, grammars).read(text)
}

/// A container the current text is inside.
#[derive(Debug, Clone)]
enum Container {
    Quote,
    List(Option<u64>),
    /// A list item: its marker, until its first line is out.
    Item {
        marker: Option<String>,
        width: usize,
    },
}

/// The inline styles in force.
#[derive(Debug, Clone, Copy, Default)]
struct Inline {
    bold: u8,
    italic: u8,
    strike: u8,
    link: u8,
    heading: Option<HeadingLevel>,
}

impl Inline {
    fn style(&self, code: bool) -> Sgr {
        let heading = self.heading.is_some();
        let bold = self.bold > 0 || heading;
        if code {
            return if bold { "1;36" } else { INLINE_CODE };
        }
        if self.heading == Some(HeadingLevel::H1) {
            return TITLE;
        }
        if self.link > 0 {
            return if bold { "1;4;34" } else { LINK };
        }
        match (bold, self.italic > 0, self.strike > 0) {
            (true, true, _) => "1;3",
            (true, false, true) => "1;9",
            (true, false, false) => BOLD,
            (false, true, true) => "3;9",
            (false, true, false) => "3",
            (false, false, true) => "9",
            (false, false, false) => NORMAL,
        }
    }
}

struct Walker<'g> {
    indent: String,
    cols: usize,
    grammars: &'g Grammars,
    out: Vec<Line>,
    containers: Vec<Container>,
    inline: Inline,
    text: Vec<Span>,
    links: Vec<String>,
    code: Option<(String, String)>,
    table: Option<crate::md_table::Table>,
    blank_before_next: bool,
    /// A line break inside a paragraph starts a new row.
    hard_breaks: bool,
}

impl<'g> Walker<'g> {
    fn new(indent: &str, cols: usize, grammars: &'g Grammars) -> Self {
        Walker {
            indent: indent.to_owned(),
            cols,
            grammars,
            out: Vec::new(),
            containers: Vec::new(),
            inline: Inline::default(),
            text: Vec::new(),
            links: Vec::new(),
            code: None,
            table: None,
            blank_before_next: false,
            hard_breaks: false,
        }
    }

    fn read(mut self, text: &str) -> Vec<Line> {
        let mut options = Options::empty();
        options.insert(Options::ENABLE_TABLES);
        options.insert(Options::ENABLE_STRIKETHROUGH);
        options.insert(Options::ENABLE_TASKLISTS);
        for event in Parser::new_ext(text, options) {
            self.event(event);
        }
        self.flush_text();
        self.out
    }

    /// The prefixes of the next line: its first row's and its other rows'. Takes the
    /// markers of items whose first line this is.
    fn prefixes(&mut self) -> (Vec<Span>, Vec<Span>) {
        let mut first = vec![Span::plain(self.indent.clone())];
        let mut rest = first.clone();
        for container in &mut self.containers {
            match container {
                Container::Quote => {
                    first.push(Span::new(ACCENT, "▌ "));
                    rest.push(Span::new(ACCENT, "▌ "));
                }
                Container::List(_) => {}
                Container::Item { marker, width } => {
                    let pad = " ".repeat(*width);
                    match marker.take() {
                        Some(marker) => first.push(Span::new(ACCENT, marker)),
                        None => first.push(Span::plain(pad.clone())),
                    }
                    rest.push(Span::plain(pad));
                }
            }
        }
        (first, rest)
    }

    fn in_item(&self) -> bool {
        self.containers
            .iter()
            .any(|c| matches!(c, Container::Item { .. }))
    }

    fn start_block(&mut self) {
        if std::mem::take(&mut self.blank_before_next) && !self.out.is_empty() {
            let (_, rest) = self.prefixes_peek();
            self.out.push(Line::new(rest, Vec::new(), Break::Words));
        }
    }

    /// The prefixes without taking any marker.
    fn prefixes_peek(&self) -> (Vec<Span>, Vec<Span>) {
        let mut copy = Walker {
            containers: self.containers.clone(),
            indent: self.indent.clone(),
            ..Walker::new("", self.cols, self.grammars)
        };
        copy.prefixes()
    }

    fn end_block(&mut self) {
        self.blank_before_next = !self.in_item();
    }

    fn push_text(&mut self, text: &str, code: bool) {
        let style = self.inline.style(code);
        match self.text.last_mut() {
            Some(last) if last.style == style => last.text.push_str(text),
            _ => self.text.push(Span::new(style, text)),
        }
    }

    fn flush_text(&mut self) {
        if self.text.is_empty() {
            return;
        }
        let body = std::mem::take(&mut self.text);
        let (first, rest) = self.prefixes();
        self.out.push(Line {
            first,
            rest,
            body,
            brk: Break::Words,
        });
    }

    fn width_left(&self) -> usize {
        let (first, _) = self.prefixes_peek();
        self.cols.saturating_sub(spans_width(&first)).max(10)
    }

    fn event(&mut self, event: Event<'_>) {
        if let Some(table) = self.table.as_mut() {
            if crate::md_table::event(table, &event, &mut self.inline.bold, &mut self.text) {
                return;
            }
        }
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => match self.code.as_mut() {
                Some((_, code)) => code.push_str(&text),
                None => self.push_text(&text.replace('\n', " "), false),
            },
            Event::Code(text) => self.push_text(&text, true),
            Event::InlineMath(text) | Event::DisplayMath(text) => self.push_text(&text, true),
            Event::Html(text) | Event::InlineHtml(text) => {
                self.push_text(text.trim_end_matches('\n'), false);
            }
            Event::FootnoteReference(name) => self.push_text(&format!("[^{name}]"), false),
            Event::SoftBreak if self.hard_breaks => self.flush_text(),
            Event::SoftBreak => self.push_text(" ", false),
            Event::HardBreak => self.flush_text(),
            Event::Rule => {
                self.start_block();
                let width = self.width_left();
                let (first, _) = self.prefixes();
                self.out.push(Line::new(
                    first,
                    vec![Span::new(MUTED, "─".repeat(width))],
                    Break::Anywhere,
                ));
                self.end_block();
            }
            Event::TaskListMarker(done) => {
                self.push_text(if done { "☑ " } else { "☐ " }, false);
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph | Tag::HtmlBlock | Tag::MetadataBlock(_) => self.start_block(),
            Tag::Heading { level, .. } => {
                self.start_block();
                self.inline.heading = Some(level);
            }
            Tag::BlockQuote(_) => {
                self.flush_text();
                self.start_block();
                self.containers.push(Container::Quote);
            }
            Tag::CodeBlock(kind) => {
                self.flush_text();
                self.start_block();
                let language = match kind {
                    CodeBlockKind::Fenced(info) => {
                        info.split_whitespace().next().unwrap_or("").to_owned()
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((language, String::new()));
            }
            Tag::List(start) => {
                self.flush_text();
                if !self.in_item() {
                    self.start_block();
                }
                self.containers.push(Container::List(start));
            }
            Tag::Item => {
                self.flush_text();
                let marker = match self.containers.last_mut() {
                    Some(Container::List(Some(n))) => {
                        let marker = format!("{n}. ");
                        *n += 1;
                        marker
                    }
                    _ => "• ".to_owned(),
                };
                let width = crate::style::width(&marker);
                self.containers.push(Container::Item {
                    marker: Some(marker),
                    width,
                });
            }
            Tag::Table(alignments) => {
                self.flush_text();
                self.start_block();
                self.table = Some(crate::md_table::Table::new(alignments));
            }
            Tag::Emphasis => self.inline.italic += 1,
            Tag::Strong => self.inline.bold += 1,
            Tag::Strikethrough => self.inline.strike += 1,
            Tag::Link { dest_url, .. } => {
                self.inline.link += 1;
                self.links.push(dest_url.into_string());
            }
            Tag::Image { .. } => self.push_text("[image: ", false),
            Tag::FootnoteDefinition(name) => {
                self.start_block();
                self.push_text(&format!("[^{name}]: "), false);
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph | TagEnd::HtmlBlock | TagEnd::FootnoteDefinition => {
                self.flush_text();
                self.end_block();
            }
            TagEnd::Heading(_) => {
                self.flush_text();
                self.inline.heading = None;
                self.end_block();
            }
            TagEnd::BlockQuote(_) => {
                self.flush_text();
                self.containers.pop();
                self.end_block();
            }
            TagEnd::CodeBlock => {
                if let Some((language, code)) = self.code.take() {
                    self.code_block(&language, &code);
                }
                self.end_block();
            }
            TagEnd::List(_) => {
                self.flush_text();
                self.containers.pop();
                self.end_block();
            }
            TagEnd::Item => {
                self.flush_text();
                if let Some(Container::Item {
                    marker: Some(marker),
                    ..
                }) = self.containers.last()
                {
                    // An empty item still shows its marker.
                    let marker = marker.clone();
                    let (mut first, _) = self.prefixes();
                    first.pop();
                    first.push(Span::new(ACCENT, marker));
                    self.out.push(Line::new(first, Vec::new(), Break::Words));
                }
                self.containers.pop();
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    self.table_lines(&table);
                }
                self.end_block();
            }
            TagEnd::Emphasis => self.inline.italic = self.inline.italic.saturating_sub(1),
            TagEnd::Strong => self.inline.bold = self.inline.bold.saturating_sub(1),
            TagEnd::Strikethrough => self.inline.strike = self.inline.strike.saturating_sub(1),
            TagEnd::Link => {
                self.inline.link = self.inline.link.saturating_sub(1);
                let url = self.links.pop().unwrap_or_default();
                let shown = crate::style::text_of(&self.text);
                if !url.is_empty() && !shown.ends_with(&url) {
                    self.text.push(Span::new(MUTED, format!(" ({url})")));
                }
            }
            TagEnd::Image => self.push_text("]", false),
            _ => {}
        }
    }

    fn code_block(&mut self, language: &str, code: &str) {
        let (first, rest) = self.prefixes();
        let label = if language.is_empty() {
            "code"
        } else {
            language
        };
        let mut head = first;
        head.push(Span::new(MUTED, "╭─ "));
        self.out.push(Line::new(
            head,
            vec![Span::new(LABEL, crate::sanitize::show_code(label))],
            Break::Anywhere,
        ));
        let mut gutter = rest.clone();
        gutter.push(Span::new(MUTED, "│ "));
        let mut colours = CodeColours::new(self.grammars, language);
        for line in code.trim_end_matches('\n').split('\n') {
            let shown = crate::sanitize::show_code(line);
            self.out.push(Line::new(
                gutter.clone(),
                colours.line(&shown),
                Break::Anywhere,
            ));
        }
        let mut foot = rest;
        foot.push(Span::new(MUTED, "╰─"));
        self.out.push(Line::new(foot, Vec::new(), Break::Anywhere));
    }

    fn table_lines(&mut self, table: &crate::md_table::Table) {
        let (first, _) = self.prefixes();
        let available = self.cols.saturating_sub(spans_width(&first));
        self.out
            .extend(crate::md_table::lines(table, &first, available));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(text: &str, cols: usize) -> String {
        render(text, "", cols, &Grammars::new(), false)
    }

    #[test]
    fn markup_becomes_style_not_symbols() {
        let text = "# Title\n\nUse `ls` and **care** or *not*, see [docs](https://x.y).\n";
        assert_eq!(
            plain(text, 80),
            "Title\n\nUse ls and care or not, see docs (https://x.y).\n"
        );
        let coloured = render(text, "", 80, &Grammars::new(), true);
        assert!(coloured.contains("\x1b[36mls\x1b[0m"), "{coloured:?}");
        assert!(coloured.contains("\x1b[1mcare\x1b[0m"), "{coloured:?}");
    }

    #[test]
    fn lists_quotes_and_rules() {
        let text = "- one\n- two\n  1. a\n  2. b\n\n> **Note**: quoted\n\n---\n";
        assert_eq!(
            plain(text, 20),
            "• one\n• two\n  1. a\n  2. b\n\n▌ Note: quoted\n\n────────────────────\n"
        );
    }

    #[test]
    fn paragraphs_wrap_between_words_under_the_indent() {
        let text = "- a list item that is long enough to wrap around the edge\n";
        let out = render(text, "  ", 24, &Grammars::new(), false);
        assert_eq!(
            out,
            "  • a list item that is\n    long enough to wrap\n    around the edge\n"
        );
    }

    #[test]
    fn tables_are_aligned() {
        let text = "| name | size |\n|---|---:|\n| a | 1 |\n| bbb | 22 |\n";
        assert_eq!(
            plain(text, 40),
            "name │ size\n─────┼─────\na    │    1\nbbb  │   22\n"
        );
    }

    #[test]
    fn fenced_code_gets_a_frame() {
        let text = "Run:\n\n```python\nprint(1)\n```\n";
        assert_eq!(plain(text, 40), "Run:\n\n╭─ python\n│ print(1)\n╰─\n");
    }
}
