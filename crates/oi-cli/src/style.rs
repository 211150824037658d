//! Styled text for the terminal: runs of text with one SGR style each ([`Span`]), their
//! display width, and how they are written out (with escapes, or plain). Everything oi draws
//! in colour is built from spans, so wrapping and redrawing can count columns exactly.

use unicode_width::UnicodeWidthChar;

/// An SGR style: the parameters between `ESC [` and `m` (`""` is the terminal's default).
pub type Sgr = &'static str;

/// The terminal's default style.
pub const NORMAL: Sgr = "";
/// Bold.
pub const BOLD: Sgr = "1";
/// Bold and underlined (top-level headings).
pub const TITLE: Sgr = "1;4";
/// Muted text: frames, labels, the status line (bright black reads well on dark and light).
pub const MUTED: Sgr = "90";
/// Inline code in prose.
pub const INLINE_CODE: Sgr = "36";
/// Links.
pub const LINK: Sgr = "4;34";
/// Errors and tracebacks.
pub const ERROR: Sgr = "31";
/// Bold errors (the line that names the error).
pub const ERROR_BOLD: Sgr = "1;31";
/// Code as it streams, before it is highlighted.
pub const CODE: Sgr = "36";
/// Accents: the spinner, list bullets, quote bars.
pub const ACCENT: Sgr = "36";
/// The label of a panel (the language, `output`).
pub const LABEL: Sgr = "1;36";

/// A run of text in one style. The text holds no control characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// Its style.
    pub style: Sgr,
    /// Its text.
    pub text: String,
}

impl Span {
    /// A span of `text` in `style`.
    pub fn new(style: Sgr, text: impl Into<String>) -> Self {
        Span {
            style,
            text: text.into(),
        }
    }

    /// A span in the default style.
    pub fn plain(text: impl Into<String>) -> Self {
        Span::new(NORMAL, text)
    }
}

/// The columns `c` takes on a terminal (0 for combining marks, 2 for wide characters).
pub fn char_width(c: char) -> usize {
    if c == '\t' {
        return 4;
    }
    c.width().unwrap_or(0)
}

/// The columns `text` takes on a terminal (a tab counts 4; no escapes expected).
pub fn width(text: &str) -> usize {
    text.chars().map(char_width).sum()
}

/// The columns a line of spans takes.
pub fn spans_width(spans: &[Span]) -> usize {
    spans.iter().map(|s| width(&s.text)).sum()
}

/// The fewest columns `c` can take on any terminal: oi's width where terminals agree on it
/// (ASCII, and the East Asian wide scripts that have been wide in every Unicode version), at
/// most 1 for other characters of the Basic Multilingual Plane (terminals on other Unicode
/// tables draw e.g. U+17D8 or the trigrams U+2630.. narrower than oi counts them), and 0
/// above it (some terminals drop emoji they do not know). Moving the cursor up over a line
/// by this count never reaches the rows above it, whatever the terminal's tables.
pub fn sure_char_width(c: char) -> usize {
    let width = char_width(c);
    let code = u32::from(c);
    if c.is_ascii() || width == 0 {
        return width;
    }
    const STABLE_WIDE: [(u32, u32); 9] = [
        (0x3041, 0x3096),   // Hiragana
        (0x30A1, 0x30FA),   // Katakana
        (0x3400, 0x4DBF),   // CJK Extension A
        (0x4E00, 0x9FFF),   // CJK Unified Ideographs
        (0xAC00, 0xD7A3),   // Hangul syllables
        (0xF900, 0xFAFF),   // CJK compatibility ideographs
        (0xFF01, 0xFF60),   // fullwidth forms
        (0x20000, 0x2FFFD), // CJK Extensions B..
        (0x30000, 0x3FFFD), // CJK Extensions G..
    ];
    if STABLE_WIDE
        .iter()
        .any(|(low, high)| (*low..=*high).contains(&code))
    {
        return width;
    }
    if code > 0xFFFF { 0 } else { width.min(1) }
}

/// The fewest columns a line of spans can take on any terminal ([`sure_char_width`]).
pub fn spans_sure_width(spans: &[Span]) -> usize {
    spans
        .iter()
        .flat_map(|s| s.text.chars())
        .map(sure_char_width)
        .sum()
}

/// How many terminal rows `columns` of text take on a terminal `cols` wide (at least 1).
pub fn rows(columns: usize, cols: usize) -> usize {
    columns.div_ceil(cols.max(1)).max(1)
}

/// Writes spans with their escapes (`colour`) or as plain text, tabs expanded to spaces.
pub fn render(spans: &[Span], colour: bool) -> String {
    let mut out = String::new();
    for span in spans.iter().filter(|s| !s.text.is_empty()) {
        let text = span.text.replace('\t', "    ");
        if colour && !span.style.is_empty() {
            out.push_str(&format!("\x1b[{}m{text}\x1b[0m", span.style));
        } else {
            out.push_str(&text);
        }
    }
    out
}

/// The text of spans without styles.
pub fn text_of(spans: &[Span]) -> String {
    spans.iter().map(|s| s.text.as_str()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_count_columns() {
        assert_eq!(width("abc"), 3);
        assert_eq!(width("日本"), 4);
        assert_eq!(width("e\u{301}"), 1);
        assert_eq!(rows(0, 80), 1);
        assert_eq!(rows(80, 80), 1);
        assert_eq!(rows(81, 80), 2);
    }

    #[test]
    fn render_styles_only_styled_spans() {
        let spans = [Span::plain("a "), Span::new(BOLD, "b"), Span::plain("")];
        assert_eq!(render(&spans, true), "a \x1b[1mb\x1b[0m");
        assert_eq!(render(&spans, false), "a b");
    }
}
