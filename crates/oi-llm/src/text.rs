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
}
