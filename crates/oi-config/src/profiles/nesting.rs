//! How deeply a YAML (or JSON) profile nests, measured before it is parsed: a 100 000-deep
//! profile kept the YAML parser busy for 35 s. One linear pass counts flow collections (`[`,
//! `{`), block indentation levels and compact sequence entries (`- - -`), skipping quoted
//! scalars, block scalars (`|`, `>`) and comments, and stops at the first line that goes
//! deeper than allowed.

/// Where a text nests too deeply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooDeep {
    /// The line (1-based).
    pub line: usize,
    /// The limit that was passed.
    pub limit: usize,
}

/// What the scan carries from one line to the next.
#[derive(Debug, Default)]
struct Scan {
    /// Open flow collections.
    flow: usize,
    /// The quote of a quoted scalar still open at the end of the last line.
    quote: Option<char>,
    /// Indentation of the enclosing block levels.
    indents: Vec<usize>,
    /// Inside a block scalar: the indentation of the line that opened it.
    block_scalar: Option<usize>,
}

/// Checks that `text` nests at most `limit` levels deep.
pub fn check(text: &str, limit: usize) -> Result<(), TooDeep> {
    let mut scan = Scan::default();
    for (index, line) in text.lines().enumerate() {
        let depth = scan.line(line);
        if depth > limit {
            return Err(TooDeep {
                line: index + 1,
                limit,
            });
        }
    }
    Ok(())
}

/// Leading spaces and tabs.
fn indentation(line: &str) -> usize {
    line.len() - line.trim_start_matches([' ', '\t']).len()
}

/// The kind of token the scan is in, on one line outside quotes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    /// Between tokens.
    Between,
    /// A plain scalar: text up to `: `, ` #` (and in a flow, up to `,[]{}`).
    Plain,
    /// An anchor, alias or tag, up to a blank.
    Word,
    /// A block scalar indicator (`|`, `>`) and its chomping/indentation indicators.
    BlockScalar,
}

impl Scan {
    /// Scans one line; returns the deepest nesting on it.
    fn line(&mut self, line: &str) -> usize {
        let indent = indentation(line);
        let blank = line[indent..].is_empty();
        if let Some(parent) = self.block_scalar {
            if blank || indent > parent {
                return 0;
            }
            self.block_scalar = None;
        }
        let mut depth = 0;
        let mut start = 0;
        if self.quote.is_none() && self.flow == 0 {
            if blank || line[indent..].starts_with('#') {
                return 0;
            }
            while self.indents.last().is_some_and(|&top| top > indent) {
                self.indents.pop();
            }
            if self.indents.last() != Some(&indent) {
                self.indents.push(indent);
            }
            let mut rest = &line[indent..];
            let mut entries = 0;
            while let Some(after) = rest
                .strip_prefix("- ")
                .or_else(|| rest.strip_prefix("? "))
                .or_else(|| (rest == "-").then_some(""))
            {
                entries += 1;
                rest = after.trim_start_matches([' ', '\t']);
            }
            depth = self.indents.len() + entries;
            start = line.len() - rest.len();
        }
        let (deepest, last) = self.characters(line, start);
        if last == Token::BlockScalar && self.quote.is_none() && self.flow == 0 {
            self.block_scalar = Some(indent);
        }
        depth.max(deepest + self.indents.len())
    }

    /// Scans the characters of `line` from `start` (quotes, flow brackets, plain scalars,
    /// comments); returns the deepest flow nesting and the token the line ended in.
    fn characters(&mut self, line: &str, start: usize) -> (usize, Token) {
        let mut deepest = self.flow;
        let mut token = Token::Between;
        let mut previous: Option<char> = line[..start].chars().next_back();
        let mut chars = line[start..].chars().peekable();
        while let Some(c) = chars.next() {
            let after_blank = previous.is_none_or(char::is_whitespace);
            previous = Some(c);
            match self.quote {
                Some('"') => {
                    match c {
                        '\\' => {
                            chars.next();
                        }
                        '"' => self.quote = None,
                        _ => {}
                    }
                    continue;
                }
                Some(_) => {
                    if c == '\'' {
                        if chars.peek() == Some(&'\'') {
                            chars.next();
                        } else {
                            self.quote = None;
                        }
                    }
                    continue;
                }
                None => {}
            }
            if c == '#' && after_blank {
                return (deepest, token);
            }
            let in_flow = self.flow > 0;
            let ends_in_flow = in_flow && matches!(c, ',' | '[' | ']' | '{' | '}');
            token = match token {
                Token::Plain if c == ':' && chars.peek().is_none_or(|n| n.is_whitespace()) => {
                    Token::Between
                }
                Token::Plain | Token::Word if !ends_in_flow => {
                    if token == Token::Word && c.is_whitespace() {
                        Token::Between
                    } else {
                        token
                    }
                }
                Token::BlockScalar if c == '+' || c == '-' || c.is_ascii_digit() => token,
                Token::BlockScalar if c.is_whitespace() => token,
                Token::BlockScalar => Token::Plain,
                _ => match c {
                    '"' | '\'' => {
                        self.quote = Some(c);
                        Token::Between
                    }
                    '[' | '{' => {
                        self.flow += 1;
                        deepest = deepest.max(self.flow);
                        Token::Between
                    }
                    ']' | '}' => {
                        self.flow = self.flow.saturating_sub(1);
                        Token::Between
                    }
                    '|' | '>' if !in_flow => Token::BlockScalar,
                    '&' | '*' | '!' => Token::Word,
                    c if c.is_whitespace() || matches!(c, ',' | ':' | '-' | '?') => Token::Between,
                    _ => Token::Plain,
                },
            };
        }
        (deepest, token)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deep(text: &str) -> Option<usize> {
        check(text, 8).err().map(|e| e.line)
    }

    #[test]
    fn ordinary_profiles_pass() {
        let profile = "# comment [[[[[[[[[[\nllm:\n  model: \"gpt-4o\" # [[[[[[[[[\n  api_base: 'http://x/[[[[[[[[[['\nallow:\n  - ls\n  - git status\nsandbox: {mode: workspace, network: false}\ncustom_instructions: |\n  Keep [[[[[[[[[[[[ as text.\n                    indented a lot\n      less\nsystem_message: >-\n  folded\nloop: true\nnote: don't [[[[[[[[[[[[ count this\n";
        assert_eq!(deep(profile), None);
        assert_eq!(deep("{\"llm\": {\"model\": \"x[[[[[[[[[[[[\"}}"), None);
    }

    #[test]
    fn deep_flow_block_and_sequences_name_the_line() {
        assert_eq!(
            deep(&format!("ok: 1\nx: {}\n", "[".repeat(100_000))),
            Some(2)
        );
        assert_eq!(
            deep(&format!("a: 1\n\nb:\n  {}1\n", "- ".repeat(20))),
            Some(4)
        );
        assert_eq!(deep(&format!("{}x\n", "- ".repeat(20))), Some(1));
        let block: String = (0..20)
            .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
            .collect();
        assert_eq!(deep(&block), Some(9));
        let mixed = "a:\n  b:\n    c:\n      d:\n        e: [[[[[1]]]]]\n";
        assert_eq!(deep(mixed), Some(5));
        assert_eq!(deep(&format!("[{}]", "{\"a\": ".repeat(10))), Some(1));
        assert_eq!(
            deep("a: 1\nb: &anchor !!seq [[[[[[[[[[1]]]]]]]]]]\n"),
            Some(2)
        );
        let not_a_block_scalar = format!("a: text |\n{}", "  [[[[[[[[[[\n");
        assert_eq!(deep(&not_a_block_scalar), Some(2));
    }

    #[test]
    fn multi_line_quotes_and_flows_keep_their_state() {
        assert_eq!(deep("a: \"x\n  [[[[[[[[[[[[\n  y\"\nb: 1\n"), None);
        assert_eq!(deep("a: [\n  [[[[\n  ]]]],\n  [[[[[[[[\n"), Some(4));
    }
}
