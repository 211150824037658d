//! Text from the model and from the code it runs, made safe to print: no control character
//! reaches the user's terminal (or notebook) as a control. A model or a program could
//! otherwise set the window title (OSC 0), write the clipboard (OSC 52), move the cursor
//! (CSI) or hide part of a line behind a `\r` at the approval prompt.
//!
//! - Messages and output ([`clean`]) lose the escape sequences complete within a piece and
//!   show every other control character; `\r` becomes a line break.
//! - Code ([`show_code`]) keeps every character but shows the controls: `␛` for ESC, `␍`
//!   for `\r`, `<U+202E>` for invisible format characters, so what is approved is what runs.

/// Whether `c` reorders or hides text without being seen: bidirectional controls,
/// zero-width characters and the byte-order mark.
fn is_invisible_format(c: char) -> bool {
    matches!(
        c,
        '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{FEFF}'
    )
}

/// The visible stand-in for control or invisible character `c`.
fn picture(c: char, out: &mut String) {
    match c {
        '\u{0}'..='\u{1f}' => out.push(char::from_u32(0x2400 + c as u32).unwrap_or('?')),
        '\u{7f}' => out.push('\u{2421}'),
        _ => out.push_str(&format!("<U+{:04X}>", c as u32)),
    }
}

/// Whether `code` holds characters a terminal would not show as they are.
pub fn has_hidden_characters(code: &str) -> bool {
    code.chars()
        .any(|c| (c.is_control() && c != '\n' && c != '\t') || is_invisible_format(c))
}

/// Code as it will run, with every control and invisible character shown.
pub fn show_code(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    for c in code.chars() {
        if c == '\n' || c == '\t' {
            out.push(c);
        } else if c.is_control() || is_invisible_format(c) {
            picture(c, &mut out);
        } else {
            out.push(c);
        }
    }
    out
}

/// The length in bytes of the escape sequence at the start of `rest` (which starts with ESC),
/// if it is complete: CSI (`ESC [` … final byte), OSC/DCS/APC/PM/SOS (… BEL or `ESC \`), or a
/// two-character sequence.
fn escape_len(rest: &str) -> Option<usize> {
    let bytes = rest.as_bytes();
    let kind = *bytes.get(1)?;
    match kind {
        b'[' => {
            let end = bytes[2..].iter().position(|b| (0x40..=0x7e).contains(b))?;
            let body = &bytes[2..2 + end];
            body.iter()
                .all(|b| (0x20..=0x3f).contains(b))
                .then_some(end + 3)
        }
        b']' | b'P' | b'_' | b'^' | b'X' => {
            let body = &rest[2..];
            let bel = body.find('\u{7}').map(|i| i + 1);
            let st = body.find("\u{1b}\\").map(|i| i + 2);
            let end = match (bel, st) {
                (Some(a), Some(b)) => a.min(b),
                (a, b) => a.or(b)?,
            };
            Some(end + 2)
        }
        0x20..=0x7e => Some(2),
        _ => None,
    }
}

/// Message or output text with escape sequences removed and every other control shown
/// (`\n` and `\t` stay; `\r\n` and a lone `\r` become `\n`).
pub fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while let Some(c) = text[i..].chars().next() {
        let width = c.len_utf8();
        match c {
            '\u{1b}' => match escape_len(&text[i..]) {
                Some(len) => {
                    i += len;
                    continue;
                }
                None => picture(c, &mut out),
            },
            '\r' => {
                if !text[i + 1..].starts_with('\n') {
                    out.push('\n');
                }
            }
            '\n' | '\t' => out.push(c),
            c if c.is_control() || is_invisible_format(c) => picture(c, &mut out),
            c => out.push(c),
        }
        i += width;
    }
    out
}
