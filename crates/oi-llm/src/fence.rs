//! Text-mode code detection: finds the first fenced code block in a streamed reply.
//!
//! Fixes the original's parser (spec b.4, j.2): no token is lost because it ends in a backtick,
//! language words are never deleted from code, text before the fence stays a message, and the
//! result is the same however the stream is cut into pieces. Like the original, one code block
//! ends the reply ([`FenceParser::is_done`]); an empty language means `python`.

use oi_core::ModelDelta;

const FENCE: &str = "```";

/// Spaces and tabs a closing fence may be indented by. A line indented further is code, so a
/// line of endless blanks is not held back (which made each new piece re-scan it).
const MAX_FENCE_INDENT: usize = 64;

/// Characters of a language name kept (every code delta carries a copy of it).
const MAX_LANGUAGE_CHARS: usize = 64;

/// Fence languages that are not code: such a block is part of the message (an example, a
/// sample of output), never run.
const PROSE_LANGUAGES: &[&str] = &[
    "text",
    "txt",
    "plaintext",
    "plain",
    "output",
    "console",
    "terminal",
    "markdown",
    "md",
    "json",
    "jsonc",
    "yaml",
    "yml",
    "toml",
    "ini",
    "csv",
    "tsv",
    "log",
    "diff",
    "patch",
    "xml",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Text,
    Language,
    Code,
    /// Inside a fenced block that is prose (see [`PROSE_LANGUAGES`]).
    Prose,
    Done,
}

/// Incremental fenced-code parser. Feed it text with [`push`](Self::push), then call
/// [`finish`](Self::finish) when the stream ends.
#[derive(Debug, Clone)]
pub struct FenceParser {
    state: State,
    buf: String,
    language: String,
    /// In `Code`, whether `buf` begins at the start of a line.
    line_start: bool,
    /// In `Language`, bytes of `buf` known to hold no newline (they are not searched again).
    scanned: usize,
    /// `json` blocks are code (the text-mode decoder judges them: a JSON tool call runs).
    json_is_code: bool,
}

impl Default for FenceParser {
    fn default() -> Self {
        Self::new()
    }
}

impl FenceParser {
    /// A parser at the start of a reply.
    pub fn new() -> Self {
        FenceParser {
            state: State::Text,
            buf: String::new(),
            language: String::new(),
            line_start: true,
            scanned: 0,
            json_is_code: false,
        }
    }

    /// A parser for which a `json` block is code, not prose: the caller judges it (a JSON
    /// tool call runs; other JSON is shown, and [`take_rest`](Self::take_rest) gives what
    /// followed it to read on).
    pub fn with_json_blocks() -> Self {
        FenceParser {
            json_is_code: true,
            ..Self::new()
        }
    }

    /// After the block's closing fence: the text that followed it in the pieces pushed so far.
    pub fn take_rest(&mut self) -> String {
        if self.state == State::Done {
            std::mem::take(&mut self.buf)
        } else {
            String::new()
        }
    }

    /// Whether the closing fence of the first block has been seen (the rest of the reply is
    /// ignored, as in the original).
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Feeds the next piece of the reply and returns what is now certain.
    pub fn push(&mut self, text: &str) -> Vec<ModelDelta> {
        if self.state == State::Done {
            return Vec::new();
        }
        self.buf.push_str(text);
        let mut out = Vec::new();
        loop {
            let progressed = match self.state {
                State::Text => self.step_text(&mut out),
                State::Language => self.step_language(&mut out),
                State::Code | State::Prose => self.step_code(&mut out),
                State::Done => false,
            };
            if !progressed {
                return out;
            }
        }
    }

    /// Ends the reply: whatever was held back is released.
    pub fn finish(&mut self) -> Vec<ModelDelta> {
        let rest = std::mem::take(&mut self.buf);
        let out = match self.state {
            State::Text | State::Prose if !rest.is_empty() => vec![ModelDelta::Message(rest)],
            State::Code if !rest.is_empty() => {
                vec![ModelDelta::Code {
                    language: self.language.clone(),
                    code: rest,
                }]
            }
            _ => Vec::new(),
        };
        self.state = State::Done;
        out
    }

    /// Text outside a block: emit all but a possible start of a fence.
    fn step_text(&mut self, out: &mut Vec<ModelDelta>) -> bool {
        if let Some(at) = self.buf.find(FENCE) {
            let before: String = self.buf[..at].to_owned();
            self.buf.drain(..at + FENCE.len());
            if !before.is_empty() {
                out.push(ModelDelta::Message(before));
            }
            self.state = State::Language;
            return true;
        }
        let keep = self.buf.len() - self.buf.trim_end_matches('`').len();
        let emit_to = self.buf.len() - keep;
        if emit_to > 0 {
            let text: String = self.buf.drain(..emit_to).collect();
            out.push(ModelDelta::Message(text));
        }
        false
    }

    /// The rest of the opening fence's line names the language; a block in a language that
    /// is not code stays part of the message.
    fn step_language(&mut self, out: &mut Vec<ModelDelta>) -> bool {
        let Some(found) = self.buf[self.scanned..].find('\n') else {
            self.scanned = self.buf.len();
            return false;
        };
        let newline = self.scanned + found;
        self.scanned = 0;
        let line: String = self.buf.drain(..=newline).collect();
        let language: String = line
            .chars()
            .filter(|c| c.is_alphabetic())
            .flat_map(char::to_lowercase)
            .take(MAX_LANGUAGE_CHARS)
            .collect();
        self.line_start = true;
        let json = matches!(language.as_str(), "json" | "jsonc");
        if PROSE_LANGUAGES.contains(&language.as_str()) && !(json && self.json_is_code) {
            out.push(ModelDelta::Message(format!("{FENCE}{line}")));
            self.state = State::Prose;
            return true;
        }
        self.language = if language.is_empty() {
            "python".to_owned()
        } else {
            language
        };
        self.state = State::Code;
        true
    }

    /// What `text` is inside the current block: code, or message text in a prose block.
    fn delta(&self, text: String) -> ModelDelta {
        if self.state == State::Prose {
            ModelDelta::Message(text)
        } else {
            ModelDelta::Code {
                language: self.language.clone(),
                code: text,
            }
        }
    }

    /// Inside a block: emit code up to a line that is (or may become) the closing fence.
    fn step_code(&mut self, out: &mut Vec<ModelDelta>) -> bool {
        let mut starts: Vec<usize> = Vec::new();
        if self.line_start {
            starts.push(0);
        }
        starts.extend(self.buf.match_indices('\n').map(|(i, _)| i + 1));
        let mut hold_from = self.buf.len();
        for &start in &starts {
            let line = &self.buf[start..];
            let indent = line
                .bytes()
                .take_while(|b| matches!(b, b' ' | b'\t'))
                .take(MAX_FENCE_INDENT + 1)
                .count();
            if indent > MAX_FENCE_INDENT {
                continue;
            }
            let rest = &line[indent..];
            if rest.starts_with(FENCE) && self.state == State::Prose {
                // The prose block ends with its fence; what follows is read as text again.
                let end = start + indent + FENCE.len();
                let text: String = self.buf.drain(..end).collect();
                out.push(ModelDelta::Message(text));
                self.state = State::Text;
                return true;
            }
            if rest.starts_with(FENCE) {
                let code_end = start.saturating_sub(1);
                let code: String = self.buf[..code_end].to_owned();
                if !code.is_empty() {
                    out.push(ModelDelta::Code {
                        language: self.language.clone(),
                        code,
                    });
                }
                // What follows the fence is kept for `take_rest`.
                self.buf.drain(..start + indent + FENCE.len());
                self.state = State::Done;
                return false;
            }
            let last_line = !rest.contains('\n');
            if last_line && FENCE.starts_with(rest) {
                hold_from = start.saturating_sub(1);
                if start == 0 {
                    hold_from = 0;
                }
            }
        }
        if hold_from > 0 {
            let code: String = self.buf.drain(..hold_from).collect();
            out.push(self.delta(code));
            self.line_start = false;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(pieces: &[&str]) -> (String, String, String) {
        let mut parser = FenceParser::new();
        let mut deltas = Vec::new();
        for piece in pieces {
            deltas.extend(parser.push(piece));
        }
        deltas.extend(parser.finish());
        let (mut text, mut code, mut language) = (String::new(), String::new(), String::new());
        for delta in deltas {
            match delta {
                ModelDelta::Message(t) => text.push_str(&t),
                ModelDelta::Code {
                    language: l,
                    code: c,
                } => {
                    language = l;
                    code.push_str(&c);
                }
                ModelDelta::Usage(_) => {}
            }
        }
        (text, code, language)
    }

    #[test]
    fn a_text_block_is_part_of_the_message() {
        let reply = "An example:\n```text\nhello world\n```\nand code:\n```python\nprint(1)\n```";
        let whole = parse_all(&[reply]);
        assert_eq!(
            whole,
            (
                "An example:\n```text\nhello world\n```\nand code:\n".into(),
                "print(1)".into(),
                "python".into()
            )
        );
        let pieces: Vec<String> = reply.chars().map(String::from).collect();
        let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
        assert_eq!(parse_all(&pieces), whole);
        for language in ["json", "console", "output", "markdown"] {
            let reply = format!("```{language}\n{{}}\n```\n");
            assert_eq!(parse_all(&[&reply]).0, reply);
        }
    }

    #[test]
    fn splits_text_and_code() {
        let got = parse_all(&["Let me compute that.\n```python\nprint(239023*79043)\n```\nDone"]);
        assert_eq!(
            got,
            (
                "Let me compute that.\n".into(),
                "print(239023*79043)".into(),
                "python".into()
            )
        );
    }

    #[test]
    fn keeps_language_words_and_backticks_in_text() {
        let got = parse_all(&[
            "Use `ls` or ",
            "`",
            "`pwd`",
            "\n``",
            "`python3\nimport python\n``",
            "`",
        ]);
        assert_eq!(
            got,
            (
                "Use `ls` or ``pwd`\n".into(),
                "import python".into(),
                "python".into()
            )
        );
    }

    #[test]
    fn empty_language_is_python_and_empty_block_is_empty() {
        assert_eq!(
            parse_all(&["```\n```"]),
            (String::new(), String::new(), String::new())
        );
        assert_eq!(
            parse_all(&["```", "\nx = 1\n", "```"]),
            (String::new(), "x = 1".into(), "python".into())
        );
    }

    #[test]
    fn unterminated_block_keeps_its_code() {
        assert_eq!(
            parse_all(&["```shell\necho hi\n``"]),
            (String::new(), "echo hi\n``".into(), "shell".into())
        );
    }

    #[test]
    fn backticks_inside_code_lines_are_code() {
        let got = parse_all(&["```bash\necho \"```\"\nls\n  ```\n"]);
        assert_eq!(
            got,
            (String::new(), "echo \"```\"\nls".into(), "bash".into())
        );
    }

    #[test]
    fn long_language_and_blank_lines_in_tiny_pieces_take_linear_time() {
        let started = std::time::Instant::now();
        let mut parser = FenceParser::new();
        parser.push("```");
        for _ in 0..200_000 {
            parser.push("py");
        }
        parser.push("\n");
        let mut code = 0;
        for _ in 0..200_000 {
            for delta in parser.push("  ") {
                if let ModelDelta::Code { code: c, .. } = delta {
                    code += c.len();
                }
            }
        }
        assert!(
            code >= 399_000,
            "blanks far past a fence's indent are code: {code}"
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        let named = parse_all(&["```", &"py".repeat(100), "\nx\n```\n"]);
        assert_eq!(named.2.len(), MAX_LANGUAGE_CHARS);
        let indented = parse_all(&["```sh\nls\n", &" ".repeat(MAX_FENCE_INDENT), "```\n"]);
        assert_eq!(indented.1, "ls");
        let too_far = parse_all(&["```sh\nls\n", &" ".repeat(MAX_FENCE_INDENT + 1), "```\n"]);
        assert!(too_far.1.ends_with("```\n"), "{too_far:?}");
    }
}
