//! Parses JSON that may be cut off anywhere, as tool-call arguments are while they stream.
//!
//! [`parse_partial`] reads as much as is there: open strings are closed (a half-received
//! escape such as `\` or `\u00` is left out until the rest arrives), open arrays and objects
//! are closed, and a member whose value has not started yet is left out. Raw control
//! characters inside strings are accepted (models sometimes send real newlines). A value that
//! is present but cut (a string) is returned as far as it goes, so repeated parses of a
//! growing input give growing strings.

use serde_json::{Map, Number, Value};

/// Parses a possibly cut-off JSON text. `None` when nothing usable is there yet or the text
/// is not JSON at all.
pub fn parse_partial(text: &str) -> Option<Value> {
    let mut parser = Parser {
        chars: text.chars().collect(),
        pos: 0,
    };
    parser.skip_ws();
    match parser.value()? {
        Parsed::Complete(value) | Parsed::Partial(value) => Some(value),
    }
}

enum Parsed {
    /// The value ended properly.
    Complete(Value),
    /// The input ended inside the value; this is what was there.
    Partial(Value),
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn at_end(&self) -> bool {
        self.pos >= self.chars.len()
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(|c| c.is_whitespace()) {
            self.pos += 1;
        }
    }

    /// A value starting at `pos` (whitespace already skipped). `None` = nothing usable
    /// (the input ends before the value starts, inside a literal or number start, or is
    /// not JSON).
    fn value(&mut self) -> Option<Parsed> {
        match self.peek()? {
            '{' => self.object(),
            '[' => self.array(),
            '"' => {
                let (text, complete) = self.string()?;
                Some(if complete {
                    Parsed::Complete(Value::String(text))
                } else {
                    Parsed::Partial(Value::String(text))
                })
            }
            't' => self.literal("true", Value::Bool(true)),
            'f' => self.literal("false", Value::Bool(false)),
            'n' => self.literal("null", Value::Null),
            c if c == '-' || c.is_ascii_digit() => self.number(),
            _ => None,
        }
    }

    fn literal(&mut self, word: &str, value: Value) -> Option<Parsed> {
        for expected in word.chars() {
            match self.peek() {
                Some(c) if c == expected => self.pos += 1,
                // Cut inside the literal: not usable yet.
                None => return None,
                Some(_) => return None,
            }
        }
        Some(Parsed::Complete(value))
    }

    fn number(&mut self) -> Option<Parsed> {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_digit() || "+-.eE".contains(c))
        {
            self.pos += 1;
        }
        let text: String = self.chars[start..self.pos].iter().collect();
        let number: Number = serde_json::from_str(&text).ok()?;
        if self.at_end() {
            // More digits may follow.
            Some(Parsed::Partial(Value::Number(number)))
        } else {
            Some(Parsed::Complete(Value::Number(number)))
        }
    }

    /// A string at `pos` (on the opening quote): its text and whether it was closed.
    fn string(&mut self) -> Option<(String, bool)> {
        self.pos += 1;
        let mut out = String::new();
        loop {
            let Some(c) = self.peek() else {
                return Some((out, false));
            };
            self.pos += 1;
            match c {
                '"' => return Some((out, true)),
                '\\' => match self.escape()? {
                    Escape::Char(decoded) => out.push(decoded),
                    Escape::Cut => return Some((out, false)),
                },
                other => out.push(other),
            }
        }
    }

    /// After a backslash: the escaped character, or `Cut` when the input ends inside it.
    fn escape(&mut self) -> Option<Escape> {
        let Some(c) = self.peek() else {
            return Some(Escape::Cut);
        };
        self.pos += 1;
        let decoded = match c {
            '"' => '"',
            '\\' => '\\',
            '/' => '/',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'u' => return self.unicode_escape(),
            _ => return None,
        };
        Some(Escape::Char(decoded))
    }

    fn hex4(&mut self) -> Option<Option<u32>> {
        if self.pos + 4 > self.chars.len() {
            let rest: String = self.chars[self.pos..].iter().collect();
            if !rest.chars().all(|c| c.is_ascii_hexdigit()) {
                return None;
            }
            self.pos = self.chars.len();
            return Some(None);
        }
        let digits: String = self.chars[self.pos..self.pos + 4].iter().collect();
        let value = u32::from_str_radix(&digits, 16).ok()?;
        self.pos += 4;
        Some(Some(value))
    }

    /// After `\u`: one code point, joining a surrogate pair.
    fn unicode_escape(&mut self) -> Option<Escape> {
        let Some(first) = self.hex4()? else {
            return Some(Escape::Cut);
        };
        if !(0xD800..0xDC00).contains(&first) {
            return Some(Escape::Char(char::from_u32(first).unwrap_or('\u{FFFD}')));
        }
        // A high surrogate: the low half must follow as `\uXXXX`.
        let rest: String = self.chars[self.pos..].iter().take(2).collect();
        if "\\u".starts_with(&rest) && rest.len() < 2 {
            self.pos = self.chars.len();
            return Some(Escape::Cut);
        }
        if rest != "\\u" {
            return Some(Escape::Char('\u{FFFD}'));
        }
        self.pos += 2;
        let Some(second) = self.hex4()? else {
            return Some(Escape::Cut);
        };
        if !(0xDC00..0xE000).contains(&second) {
            return Some(Escape::Char('\u{FFFD}'));
        }
        let code = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
        Some(Escape::Char(char::from_u32(code).unwrap_or('\u{FFFD}')))
    }

    fn array(&mut self) -> Option<Parsed> {
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.skip_ws();
            match self.peek() {
                None => return Some(Parsed::Partial(Value::Array(items))),
                Some(']') => {
                    self.pos += 1;
                    return Some(Parsed::Complete(Value::Array(items)));
                }
                Some(_) => {}
            }
            match self.value() {
                Some(Parsed::Complete(item)) => items.push(item),
                Some(Parsed::Partial(item)) => {
                    items.push(item);
                    return Some(Parsed::Partial(Value::Array(items)));
                }
                None if self.at_end() => return Some(Parsed::Partial(Value::Array(items))),
                None => return None,
            }
            self.skip_ws();
            match self.peek() {
                None => return Some(Parsed::Partial(Value::Array(items))),
                Some(',') => self.pos += 1,
                Some(']') => {}
                Some(_) => return None,
            }
        }
    }

    fn object(&mut self) -> Option<Parsed> {
        self.pos += 1;
        let mut map = Map::new();
        loop {
            self.skip_ws();
            match self.peek() {
                None => return Some(Parsed::Partial(Value::Object(map))),
                Some('}') => {
                    self.pos += 1;
                    return Some(Parsed::Complete(Value::Object(map)));
                }
                Some('"') => {}
                Some(_) => return None,
            }
            let (key, closed) = self.string()?;
            self.skip_ws();
            if !closed || self.at_end() {
                return Some(Parsed::Partial(Value::Object(map)));
            }
            if self.peek() != Some(':') {
                return None;
            }
            self.pos += 1;
            self.skip_ws();
            if self.at_end() {
                return Some(Parsed::Partial(Value::Object(map)));
            }
            match self.value() {
                Some(Parsed::Complete(value)) => {
                    map.insert(key, value);
                }
                Some(Parsed::Partial(value)) => {
                    map.insert(key, value);
                    return Some(Parsed::Partial(Value::Object(map)));
                }
                None if self.at_end() => return Some(Parsed::Partial(Value::Object(map))),
                None => return None,
            }
            self.skip_ws();
            match self.peek() {
                None => return Some(Parsed::Partial(Value::Object(map))),
                Some(',') => self.pos += 1,
                Some('}') => {}
                Some(_) => return None,
            }
        }
    }
}

enum Escape {
    Char(char),
    Cut,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn code_of(text: &str) -> Option<String> {
        parse_partial(text)?
            .get("code")?
            .as_str()
            .map(str::to_owned)
    }

    #[test]
    fn complete_json_is_parsed() {
        let value = parse_partial(
            r#"{"language": "python", "code": "print(1)", "n": [1, 2.5, true, null]}"#,
        );
        assert_eq!(
            value,
            Some(json!({"language": "python", "code": "print(1)", "n": [1, 2.5, true, null]}))
        );
    }

    #[test]
    fn open_strings_and_objects_are_closed() {
        assert_eq!(
            parse_partial(r#"{"language": "pyth"#),
            Some(json!({"language": "pyth"}))
        );
        assert_eq!(
            parse_partial(r#"{"language": "python", "co"#),
            Some(json!({"language": "python"}))
        );
        assert_eq!(
            parse_partial(r#"{"language": "python", "code":"#),
            Some(json!({"language": "python"}))
        );
        assert_eq!(
            parse_partial(r#"{"language": "python","#),
            Some(json!({"language": "python"}))
        );
        assert_eq!(
            parse_partial(r#"{"a": [1, "x"#),
            Some(json!({"a": [1, "x"]}))
        );
        assert_eq!(parse_partial(r#"{"a": tr"#), Some(json!({})));
        assert_eq!(parse_partial("{"), Some(json!({})));
        assert_eq!(parse_partial(""), None);
    }

    #[test]
    fn not_json_is_none() {
        assert_eq!(parse_partial("print('hi')"), None);
        assert_eq!(parse_partial(r#"{"a" 1}"#), None);
        assert_eq!(parse_partial(r#"{"a": 1 2}"#), None);
    }

    #[test]
    fn escapes_split_across_chunks() {
        let full = r#"{"code": "a\nb\"c\\d\u00e9\ud83d\ude00e"}"#;
        let expected = "a\nb\"c\\d\u{e9}\u{1F600}e";
        let mut previous = String::new();
        for end in 0..=full.len() {
            let Some(prefix) = full.get(..end) else {
                continue;
            };
            if let Some(code) = code_of(prefix) {
                assert!(
                    code.starts_with(&previous),
                    "{prefix:?}: {code:?} does not extend {previous:?}"
                );
                assert!(expected.starts_with(&code), "{prefix:?} gave {code:?}");
                previous = code;
            }
        }
        assert_eq!(previous, expected);
        assert_eq!(code_of(r#"{"code": "a\"#).as_deref(), Some("a"));
        assert_eq!(code_of(r#"{"code": "a\u00"#).as_deref(), Some("a"));
        assert_eq!(code_of(r#"{"code": "a\ud83d"#).as_deref(), Some("a"));
        assert_eq!(code_of(r#"{"code": "a\ud83d\"#).as_deref(), Some("a"));
        assert_eq!(code_of(r#"{"code": "a\ud83d\ude0"#).as_deref(), Some("a"));
    }

    #[test]
    fn unicode_and_raw_newlines() {
        assert_eq!(
            code_of("{\"code\": \"print('héllo 世界')\nx = 1"),
            Some("print('héllo 世界')\nx = 1".to_owned())
        );
        assert_eq!(
            code_of(r#"{"code": "\ud83d x"}"#),
            Some("\u{FFFD} x".to_owned())
        );
    }

    #[test]
    fn numbers_may_still_grow() {
        assert_eq!(parse_partial("[12"), Some(json!([12])));
        assert_eq!(parse_partial("-"), None);
    }
}
