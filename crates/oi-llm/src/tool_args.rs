//! Reading the `execute` tool's JSON arguments as they stream, in one pass: each piece is
//! scanned once (linear in the reply), and the decoded `code` comes out as soon as it arrives.
//!
//! Only what the tool needs is kept: the string values of `language` and `code` at the top
//! level of one JSON object. Other keys and nested values are skipped. Raw control characters
//! inside strings (models write literal newlines) are taken as they are.

/// Where the scanner is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the opening `{`.
    Start,
    /// Inside the object, expecting a key, `,` or `}`.
    Object,
    /// Inside a key string.
    Key,
    /// After a key, expecting `:`.
    Colon,
    /// Expecting a value.
    Value,
    /// Inside a string value of the current key.
    Text,
    /// Inside a value that is skipped (number, literal, nested object or array).
    Skip,
    /// After the closing `}` (or after input that is not an object).
    Done,
}

/// Which top-level key's string is being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Language,
    Code,
    Other,
}

/// An escape sequence cut across pieces.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Escape {
    /// After a backslash.
    open: bool,
    /// Hex digits of a `\u` escape read so far.
    hex: Option<String>,
    /// A high surrogate waiting for its low half.
    high: Option<u32>,
}

/// What one piece of arguments produced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ArgumentsDelta {
    /// New characters of `code`.
    pub code: String,
    /// The language, once its string has closed (given once).
    pub language: Option<String>,
}

/// Scans one `execute` call's arguments.
#[derive(Debug, Clone)]
pub struct ArgumentsScanner {
    state: State,
    field: Field,
    key: String,
    language: String,
    language_done: bool,
    escape: Escape,
    /// Nesting depth and string state of a skipped value.
    skip_depth: u32,
    skip_in_string: bool,
    skip_escaped: bool,
    /// Whether any `code` key was seen.
    saw_code: bool,
}

impl Default for ArgumentsScanner {
    fn default() -> Self {
        Self::new()
    }
}

impl ArgumentsScanner {
    /// A scanner before the first piece.
    pub fn new() -> Self {
        ArgumentsScanner {
            state: State::Start,
            field: Field::Other,
            key: String::new(),
            language: String::new(),
            language_done: false,
            escape: Escape::default(),
            skip_depth: 0,
            skip_in_string: false,
            skip_escaped: false,
            saw_code: false,
        }
    }

    /// Whether a `code` key has been seen.
    pub fn saw_code(&self) -> bool {
        self.saw_code
    }

    /// The language read so far (complete once reported).
    pub fn language(&self) -> &str {
        &self.language
    }

    /// Whether the input was not a JSON object (the scanner stopped at its first character).
    pub fn gave_up(&self) -> bool {
        self.state == State::Done && !self.saw_code && self.key.is_empty()
    }

    /// Scans `piece`; returns the new code characters and, once, the completed language.
    pub fn push(&mut self, piece: &str) -> ArgumentsDelta {
        let mut out = ArgumentsDelta::default();
        for c in piece.chars() {
            self.step(c, &mut out);
        }
        out
    }

    fn step(&mut self, c: char, out: &mut ArgumentsDelta) {
        match self.state {
            State::Start => match c {
                '{' => self.state = State::Object,
                c if c.is_whitespace() => {}
                _ => self.state = State::Done,
            },
            State::Object => match c {
                '"' => {
                    self.key.clear();
                    self.state = State::Key;
                }
                '}' => self.state = State::Done,
                _ => {}
            },
            State::Key => match c {
                '"' if !self.escape.open => self.state = State::Colon,
                '\\' if !self.escape.open => self.escape.open = true,
                c => {
                    self.escape.open = false;
                    self.key.push(c);
                }
            },
            State::Colon => {
                if c == ':' {
                    self.field = match self.key.as_str() {
                        "language" => Field::Language,
                        "code" => Field::Code,
                        _ => Field::Other,
                    };
                    self.state = State::Value;
                }
            }
            State::Value => match c {
                c if c.is_whitespace() => {}
                '"' if self.field != Field::Other => {
                    if self.field == Field::Code {
                        self.saw_code = true;
                    }
                    self.escape = Escape::default();
                    self.state = State::Text;
                }
                _ => {
                    self.skip_depth = 0;
                    self.skip_in_string = false;
                    self.skip_escaped = false;
                    self.state = State::Skip;
                    self.skip(c);
                }
            },
            State::Text => self.text(c, out),
            State::Skip => self.skip(c),
            State::Done => {}
        }
    }

    /// One character of a skipped value (a string, number, literal, object or array).
    fn skip(&mut self, c: char) {
        if self.skip_in_string {
            match (self.skip_escaped, c) {
                (true, _) => self.skip_escaped = false,
                (false, '\\') => self.skip_escaped = true,
                (false, '"') => {
                    self.skip_in_string = false;
                    if self.skip_depth == 0 {
                        self.state = State::Object;
                    }
                }
                _ => {}
            }
            return;
        }
        match c {
            '"' => self.skip_in_string = true,
            '{' | '[' => self.skip_depth += 1,
            '}' | ']' if self.skip_depth > 0 => {
                self.skip_depth -= 1;
                if self.skip_depth == 0 {
                    self.state = State::Object;
                }
            }
            '}' => self.state = State::Done,
            ',' if self.skip_depth == 0 => self.state = State::Object,
            _ => {}
        }
    }

    /// One character of a string value being read.
    fn text(&mut self, c: char, out: &mut ArgumentsDelta) {
        if let Some(hex) = self.escape.hex.as_mut() {
            hex.push(c);
            if hex.len() == 4 {
                let code = u32::from_str_radix(hex, 16).ok();
                self.escape.hex = None;
                if let Some(code) = code {
                    self.unicode(code, out);
                }
            }
            return;
        }
        if self.escape.high.is_some()
            && (self.escape.open && c != 'u' || !self.escape.open && c != '\\')
        {
            // A high surrogate not followed by its low half.
            self.escape.high = None;
            self.emit('\u{FFFD}', out);
        }
        if self.escape.open {
            self.escape.open = false;
            let decoded = match c {
                'n' => '\n',
                't' => '\t',
                'r' => '\r',
                'b' => '\u{8}',
                'f' => '\u{c}',
                'u' => {
                    self.escape.hex = Some(String::with_capacity(4));
                    return;
                }
                other => other,
            };
            self.emit(decoded, out);
            return;
        }
        match c {
            '\\' => self.escape.open = true,
            '"' => {
                if self.field == Field::Language {
                    self.language = self.language.trim().to_lowercase();
                    if !self.language.is_empty() && !self.language_done {
                        self.language_done = true;
                        out.language = Some(self.language.clone());
                    }
                }
                self.state = State::Object;
            }
            c => self.emit(c, out),
        }
    }

    /// A `\uXXXX` code unit: joins surrogate pairs; a lone surrogate becomes U+FFFD.
    fn unicode(&mut self, code: u32, out: &mut ArgumentsDelta) {
        if (0xD800..0xDC00).contains(&code) {
            if self.escape.high.replace(code).is_some() {
                self.emit('\u{FFFD}', out);
            }
            return;
        }
        if (0xDC00..0xE000).contains(&code) {
            let joined = self.escape.high.take().and_then(|high| {
                char::from_u32(0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00))
            });
            self.emit(joined.unwrap_or('\u{FFFD}'), out);
            return;
        }
        if self.escape.high.take().is_some() {
            self.emit('\u{FFFD}', out);
        }
        self.emit(char::from_u32(code).unwrap_or('\u{FFFD}'), out);
    }

    fn emit(&mut self, c: char, out: &mut ArgumentsDelta) {
        match self.field {
            Field::Code => out.code.push(c),
            Field::Language => self.language.push(c),
            Field::Other => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(pieces: &[&str]) -> (String, Option<String>) {
        let mut scanner = ArgumentsScanner::new();
        let mut code = String::new();
        let mut language = None;
        for piece in pieces {
            let delta = scanner.push(piece);
            code.push_str(&delta.code);
            if delta.language.is_some() {
                assert!(language.is_none(), "the language is given once");
                language = delta.language;
            }
        }
        (code, language)
    }

    #[test]
    fn reads_language_and_code_cut_anywhere() {
        let json =
            r#"{"language": "Python", "code": "print(\"hi\\n\")\nx = '\u00e9\ud83d\ude00'"}"#;
        let expected = (
            "print(\"hi\\n\")\nx = 'é😀'".to_owned(),
            Some("python".to_owned()),
        );
        let chars: Vec<char> = json.chars().collect();
        for cut in 0..=chars.len() {
            let (a, b): (String, String) =
                (chars[..cut].iter().collect(), chars[cut..].iter().collect());
            assert_eq!(scan(&[&a, &b]), expected, "cut at {cut}");
        }
        let singles: Vec<String> = chars.iter().map(char::to_string).collect();
        let refs: Vec<&str> = singles.iter().map(String::as_str).collect();
        assert_eq!(scan(&refs), expected);
    }

    #[test]
    fn skips_other_keys_and_nested_values() {
        let json = r#"{"why": {"a": [1, "}"]}, "n": 3, "code": "ls", "language": "shell"}"#;
        assert_eq!(scan(&[json]), ("ls".to_owned(), Some("shell".to_owned())));
    }

    #[test]
    fn raw_newlines_and_lone_surrogates() {
        assert_eq!(
            scan(&["{\"code\": \"a\nb\\ud800c\"}"]),
            ("a\nb\u{FFFD}c".to_owned(), None)
        );
    }

    #[test]
    fn not_an_object_gives_up() {
        let mut scanner = ArgumentsScanner::new();
        assert_eq!(scanner.push("print(1)"), ArgumentsDelta::default());
        assert!(scanner.gave_up());
    }
}
