//! Names for the characters code shows as escapes, for the warning before the approval
//! question: `U+E0074 TAG LATIN SMALL LETTER T`, `U+202E RIGHT-TO-LEFT OVERRIDE`. A short
//! table of the characters met in practice and names built from ranges (tags, variation
//! selectors); anything else is named by what it is ("a private-use character").

use unicode_general_category::{GeneralCategory as Gc, get_general_category};

/// Names of single characters (Unicode 16.0.0 names; C0 controls by their aliases).
const NAMES: &[(u32, &str)] = &[
    (0x00, "NULL"),
    (0x07, "BELL"),
    (0x08, "BACKSPACE"),
    (0x0B, "LINE TABULATION"),
    (0x0C, "FORM FEED"),
    (0x0D, "CARRIAGE RETURN"),
    (0x1B, "ESCAPE"),
    (0x7F, "DELETE"),
    (0x85, "NEXT LINE"),
    (0x9B, "CONTROL SEQUENCE INTRODUCER"),
    (0xA0, "NO-BREAK SPACE"),
    (0xAD, "SOFT HYPHEN"),
    (0x034F, "COMBINING GRAPHEME JOINER"),
    (0x061C, "ARABIC LETTER MARK"),
    (0x115F, "HANGUL CHOSEONG FILLER"),
    (0x1160, "HANGUL JUNGSEONG FILLER"),
    (0x1680, "OGHAM SPACE MARK"),
    (0x17B4, "KHMER VOWEL INHERENT AQ"),
    (0x17B5, "KHMER VOWEL INHERENT AA"),
    (0x180E, "MONGOLIAN VOWEL SEPARATOR"),
    (0x2000, "EN QUAD"),
    (0x2001, "EM QUAD"),
    (0x2002, "EN SPACE"),
    (0x2003, "EM SPACE"),
    (0x2004, "THREE-PER-EM SPACE"),
    (0x2005, "FOUR-PER-EM SPACE"),
    (0x2006, "SIX-PER-EM SPACE"),
    (0x2007, "FIGURE SPACE"),
    (0x2008, "PUNCTUATION SPACE"),
    (0x2009, "THIN SPACE"),
    (0x200A, "HAIR SPACE"),
    (0x200B, "ZERO WIDTH SPACE"),
    (0x200C, "ZERO WIDTH NON-JOINER"),
    (0x200D, "ZERO WIDTH JOINER"),
    (0x200E, "LEFT-TO-RIGHT MARK"),
    (0x200F, "RIGHT-TO-LEFT MARK"),
    (0x2028, "LINE SEPARATOR"),
    (0x2029, "PARAGRAPH SEPARATOR"),
    (0x202A, "LEFT-TO-RIGHT EMBEDDING"),
    (0x202B, "RIGHT-TO-LEFT EMBEDDING"),
    (0x202C, "POP DIRECTIONAL FORMATTING"),
    (0x202D, "LEFT-TO-RIGHT OVERRIDE"),
    (0x202E, "RIGHT-TO-LEFT OVERRIDE"),
    (0x202F, "NARROW NO-BREAK SPACE"),
    (0x205F, "MEDIUM MATHEMATICAL SPACE"),
    (0x2060, "WORD JOINER"),
    (0x2061, "FUNCTION APPLICATION"),
    (0x2062, "INVISIBLE TIMES"),
    (0x2063, "INVISIBLE SEPARATOR"),
    (0x2064, "INVISIBLE PLUS"),
    (0x2066, "LEFT-TO-RIGHT ISOLATE"),
    (0x2067, "RIGHT-TO-LEFT ISOLATE"),
    (0x2068, "FIRST STRONG ISOLATE"),
    (0x2069, "POP DIRECTIONAL ISOLATE"),
    (0x3000, "IDEOGRAPHIC SPACE"),
    (0x3164, "HANGUL FILLER"),
    (0xFEFF, "ZERO WIDTH NO-BREAK SPACE"),
    (0xFFA0, "HALFWIDTH HANGUL FILLER"),
    (0xFFF9, "INTERLINEAR ANNOTATION ANCHOR"),
    (0xFFFA, "INTERLINEAR ANNOTATION SEPARATOR"),
    (0xFFFB, "INTERLINEAR ANNOTATION TERMINATOR"),
    (0xE0001, "LANGUAGE TAG"),
    (0xE007F, "CANCEL TAG"),
];

/// The names of ASCII punctuation, from U+0020 on (letters and digits are built).
const ASCII_PUNCTUATION: &[(u8, &str)] = &[
    (b' ', "SPACE"),
    (b'!', "EXCLAMATION MARK"),
    (b'"', "QUOTATION MARK"),
    (b'#', "NUMBER SIGN"),
    (b'$', "DOLLAR SIGN"),
    (b'%', "PERCENT SIGN"),
    (b'&', "AMPERSAND"),
    (b'\'', "APOSTROPHE"),
    (b'(', "LEFT PARENTHESIS"),
    (b')', "RIGHT PARENTHESIS"),
    (b'*', "ASTERISK"),
    (b'+', "PLUS SIGN"),
    (b',', "COMMA"),
    (b'-', "HYPHEN-MINUS"),
    (b'.', "FULL STOP"),
    (b'/', "SOLIDUS"),
    (b':', "COLON"),
    (b';', "SEMICOLON"),
    (b'<', "LESS-THAN SIGN"),
    (b'=', "EQUALS SIGN"),
    (b'>', "GREATER-THAN SIGN"),
    (b'?', "QUESTION MARK"),
    (b'@', "COMMERCIAL AT"),
    (b'[', "LEFT SQUARE BRACKET"),
    (b'\\', "REVERSE SOLIDUS"),
    (b']', "RIGHT SQUARE BRACKET"),
    (b'^', "CIRCUMFLEX ACCENT"),
    (b'_', "LOW LINE"),
    (b'`', "GRAVE ACCENT"),
    (b'{', "LEFT CURLY BRACKET"),
    (b'|', "VERTICAL LINE"),
    (b'}', "RIGHT CURLY BRACKET"),
    (b'~', "TILDE"),
];

const DIGITS: [&str; 10] = [
    "ZERO", "ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN", "EIGHT", "NINE",
];

/// The Unicode name of printable ASCII character `b`.
fn ascii_name(b: u8) -> Option<String> {
    match b {
        b'A'..=b'Z' => Some(format!("LATIN CAPITAL LETTER {}", b as char)),
        b'a'..=b'z' => Some(format!(
            "LATIN SMALL LETTER {}",
            b.to_ascii_uppercase() as char
        )),
        b'0'..=b'9' => Some(format!("DIGIT {}", DIGITS[usize::from(b - b'0')])),
        _ => ASCII_PUNCTUATION
            .iter()
            .find(|(p, _)| *p == b)
            .map(|(_, name)| (*name).to_owned()),
    }
}

/// The character's Unicode name, when oi knows it.
pub fn name(c: char) -> Option<String> {
    let cp = c as u32;
    if let Ok(at) = NAMES.binary_search_by_key(&cp, |(n, _)| *n) {
        return Some(NAMES[at].1.to_owned());
    }
    match cp {
        0xFE00..=0xFE0F => Some(format!("VARIATION SELECTOR-{}", cp - 0xFE00 + 1)),
        0xE0100..=0xE01EF => Some(format!("VARIATION SELECTOR-{}", cp - 0xE0100 + 17)),
        0xE0020..=0xE007E => {
            ascii_name(u8::try_from(cp - 0xE0000).ok()?).map(|n| format!("TAG {n}"))
        }
        _ => None,
    }
}

/// What `c` is, for a character without a known name.
fn kind(c: char) -> &'static str {
    match get_general_category(c) {
        Gc::Control => "a control character",
        Gc::Format => "a format character",
        Gc::PrivateUse => "a private-use character",
        Gc::Surrogate => "a surrogate",
        Gc::Unassigned => "an unassigned code point",
        Gc::SpaceSeparator => "a space",
        Gc::LineSeparator | Gc::ParagraphSeparator => "a separator",
        Gc::NonspacingMark | Gc::SpacingMark | Gc::EnclosingMark => {
            "a combining mark with nothing visible under it"
        }
        _ => "an invisible character",
    }
}

/// `U+XXXX` and the character's name (or what it is): `U+E0074 TAG LATIN SMALL LETTER T`.
pub fn describe(c: char) -> String {
    let name = name(c).unwrap_or_else(|| kind(c).to_owned());
    format!("U+{:04X} {name}", c as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_for_binary_search() {
        assert!(NAMES.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn names_are_built_for_tags_and_selectors() {
        let got: Vec<String> = [
            '\u{E0074}',
            '\u{E0020}',
            '\u{E0031}',
            '\u{FE0F}',
            '\u{E01EF}',
        ]
        .into_iter()
        .map(describe)
        .collect();
        assert_eq!(
            got,
            [
                "U+E0074 TAG LATIN SMALL LETTER T",
                "U+E0020 TAG SPACE",
                "U+E0031 TAG DIGIT ONE",
                "U+FE0F VARIATION SELECTOR-16",
                "U+E01EF VARIATION SELECTOR-256",
            ]
        );
        assert_eq!(describe('\u{E000}'), "U+E000 a private-use character");
        assert_eq!(
            describe('\u{301}'),
            "U+0301 a combining mark with nothing visible under it"
        );
    }
}
