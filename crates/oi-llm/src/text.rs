//! Small text helpers for error messages.

/// `text` cut to at most `max` characters, with `…` when cut.
pub fn shorten(text: &str, max: usize) -> String {
    let text = text.trim();
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max).collect();
    out.push('…');
    out
}

/// `text` safe to print on a terminal: control characters (C0, DEL, C1), bidirectional
/// overrides and invisible format characters are written as `\u{…}` escapes, so text from a
/// model server cannot move the cursor, set the title or write the clipboard when an error
/// message is shown.
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_hidden_control(c) {
            out.push_str(&c.escape_unicode().to_string());
        } else {
            out.push(c);
        }
    }
    out
}

/// Control and invisible format characters (see [`printable`]).
fn is_hidden_control(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
}

/// An error and its sources, joined with `": "` (repeated messages left out).
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut parts: Vec<String> = vec![error.to_string()];
    let mut source = error.source();
    while let Some(e) = source {
        let message = e.to_string();
        if !parts.iter().any(|p| p.contains(&message)) {
            parts.push(message);
        }
        source = e.source();
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortens_by_chars() {
        assert_eq!(shorten(" abc ", 3), "abc");
        assert_eq!(shorten("ééééé", 2), "éé…");
    }

    #[test]
    fn printable_escapes_controls() {
        assert_eq!(
            printable("a\x1b]52;c;eA==\x07b\u{9b}2J\u{202e}é\n"),
            "a\\u{1b}]52;c;eA==\\u{7}b\\u{9b}2J\\u{202e}é\\u{a}"
        );
    }
}
