//! Backslash escapes as the shell reads them: unquoted, inside double quotes, and in `$'…'`,
//! `echo -e` and `printf`.

use crate::word::{Quoting, Tok, Word, collapse};

/// Pushes unquoted source text: a backslash quotes the next character.
pub(crate) fn push_bare(word: &mut Word, text: &str) {
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('\n') | None => {}
                Some(escaped) => word.push(Tok::Char(escaped, Quoting::Quoted)),
            }
        } else {
            word.push(Tok::Char(c, Quoting::Bare));
        }
    }
}

/// Unquoted source text with backslashes removed (for names).
pub(crate) fn unescape_bare(text: &str) -> String {
    let mut word = Word::new();
    push_bare(&mut word, text);
    collapse(&word).shown()
}

/// Backslash removal inside double quotes: only before `$`, `` ` ``, `"`, `\` and newline.
pub(crate) fn unescape_double(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('\\', Some('$' | '`' | '"' | '\\')) => {
                if let Some(next) = chars.next() {
                    out.push(next);
                }
            }
            ('\\', Some('\n')) => {
                chars.next();
            }
            _ => out.push(c),
        }
    }
    out
}

/// The escapes of `$'…'`, `echo -e` and `printf`: `\n`, `\t`, `\xHH`, `\NNN`, `\uHHHH`, ….
pub(crate) fn unescape_c(text: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '\\' || i + 1 == chars.len() {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let next = chars[i + 1];
        i += 2;
        let simple = match next {
            'n' => Some('\n'),
            't' => Some('\t'),
            'r' => Some('\r'),
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'e' | 'E' => Some('\u{1b}'),
            'f' => Some('\u{c}'),
            'v' => Some('\u{b}'),
            '\\' | '\'' | '"' | '?' => Some(next),
            _ => None,
        };
        if let Some(c) = simple {
            out.push(c);
            continue;
        }
        let (radix, max) = match next {
            'x' => (16, 2),
            'u' => (16, 4),
            'U' => (16, 8),
            '0'..='7' => {
                i -= 1;
                (8, if chars[i] == '0' { 4 } else { 3 })
            }
            _ => {
                out.push('\\');
                out.push(next);
                continue;
            }
        };
        let digits: String = chars[i..]
            .iter()
            .take(max)
            .take_while(|c| c.is_digit(radix))
            .collect();
        i += digits.chars().count();
        match u32::from_str_radix(&digits, radix)
            .ok()
            .and_then(char::from_u32)
        {
            Some(c) if !digits.is_empty() => out.push(c),
            _ => {
                out.push('\\');
                out.push(next);
            }
        }
    }
    out
}
