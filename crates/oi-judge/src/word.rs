//! Shell words after expansion: what is known about each argument a command will get.
//!
//! A word is built from characters (with a note of whether the shell may still treat them
//! specially: brace expansion, `~`, word splitting) and unknown parts (a command substitution
//! that oi cannot evaluate, a variable it does not know). Expansion turns it into fields: the
//! arguments the program receives.

use super::places::UNKNOWN;

/// Stands for a decoded unknown part in rendered text (see [`Field::rendered`]).
pub(crate) const DECODED: char = '\u{2}';

/// A piece of a field: known text, or a part that cannot be known before running the code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Seg {
    /// Known text.
    Lit(String),
    /// Unknown text; `decoded` when it comes out of a decoder (`base64 -d`, …).
    Unknown {
        /// The source text it came from, for messages and deny rules.
        raw: String,
        /// Whether a decoder produced it.
        decoded: bool,
    },
}

/// One argument, as far as it is known.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Field {
    /// Its pieces, in order.
    pub(crate) segs: Vec<Seg>,
}

impl Field {
    /// A field of known text.
    pub(crate) fn lit(text: &str) -> Field {
        Field {
            segs: vec![Seg::Lit(text.to_owned())],
        }
    }

    /// A wholly unknown field.
    pub(crate) fn unknown(raw: &str, decoded: bool) -> Field {
        Field {
            segs: vec![Seg::Unknown {
                raw: raw.to_owned(),
                decoded,
            }],
        }
    }

    /// Its text, when every piece is known.
    pub(crate) fn known(&self) -> Option<String> {
        let mut out = String::new();
        for seg in &self.segs {
            match seg {
                Seg::Lit(text) => out.push_str(text),
                Seg::Unknown { .. } => return None,
            }
        }
        Some(out)
    }

    /// Whether it is exactly `text`.
    pub(crate) fn is(&self, text: &str) -> bool {
        self.known().is_some_and(|k| k == text)
    }

    /// Its text with unknown pieces as the [`UNKNOWN`] marker (for path patterns).
    pub(crate) fn pattern_text(&self) -> String {
        let mut out = String::new();
        for seg in &self.segs {
            match seg {
                Seg::Lit(text) => out.push_str(text),
                Seg::Unknown { .. } => out.push(UNKNOWN),
            }
        }
        out
    }

    /// Its text with unknown pieces as written in the code (for messages and deny rules).
    pub(crate) fn shown(&self) -> String {
        let mut out = String::new();
        for seg in &self.segs {
            match seg {
                Seg::Lit(text) | Seg::Unknown { raw: text, .. } => out.push_str(text),
            }
        }
        out
    }

    /// Whether some piece is unknown.
    pub(crate) fn has_unknown(&self) -> bool {
        self.segs.iter().any(|s| matches!(s, Seg::Unknown { .. }))
    }

    /// Whether it starts with an unknown piece.
    pub(crate) fn starts_unknown(&self) -> bool {
        matches!(self.segs.first(), Some(Seg::Unknown { .. }))
    }

    /// Whether some piece came out of a decoder.
    pub(crate) fn decoded(&self) -> bool {
        self.segs
            .iter()
            .any(|s| matches!(s, Seg::Unknown { decoded: true, .. }))
    }

    /// Its text for a nested reading (`sh -c`, `eval`, `python -c`): unknown parts become
    /// marker characters, which stay unknown whatever quoting surrounds them there.
    pub(crate) fn rendered(&self) -> String {
        let mut out = String::new();
        for seg in &self.segs {
            match seg {
                Seg::Lit(text) => out.push_str(text),
                Seg::Unknown { decoded: true, .. } => out.push(DECODED),
                Seg::Unknown { .. } => out.push(UNKNOWN),
            }
        }
        out
    }

    fn push_char(&mut self, c: char) {
        if c == UNKNOWN || c == DECODED {
            self.segs.push(Seg::Unknown {
                raw: "…".to_owned(),
                decoded: c == DECODED,
            });
            return;
        }
        if let Some(Seg::Lit(text)) = self.segs.last_mut() {
            text.push(c);
        } else {
            self.segs.push(Seg::Lit(c.to_string()));
        }
    }
}

/// How the shell may still treat a character of a word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Quoting {
    /// Written unquoted in the source: braces and `~` expand.
    Bare,
    /// Quoted or escaped: taken as is.
    Quoted,
    /// The result of an unquoted expansion: split at whitespace.
    Split,
}

/// A piece of a word before expansion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Tok {
    /// A character and how it was written.
    Char(char, Quoting),
    /// An unknown part.
    Unknown {
        /// The source text.
        raw: String,
        /// Whether a decoder produced it.
        decoded: bool,
        /// Whether it was quoted (an unquoted one may also split into several fields).
        quoted: bool,
    },
    /// Quotes were written here (so `""` is an empty argument, not none).
    Quotes,
}

/// A word before expansion.
pub(crate) type Word = Vec<Tok>;

/// How many characters a value has (an unknown part counts as its source text).
pub(crate) fn segs_len(value: &[Seg]) -> usize {
    value
        .iter()
        .map(|seg| match seg {
            Seg::Lit(text) | Seg::Unknown { raw: text, .. } => text.chars().count(),
        })
        .sum()
}

/// Pushes `text` onto `word`, every character with the same quoting.
pub(crate) fn push_text(word: &mut Word, text: &str, quoting: Quoting) {
    word.extend(text.chars().map(|c| Tok::Char(c, quoting)));
}

/// Pushes a known value (a variable's) as an expansion result.
pub(crate) fn push_value(word: &mut Word, value: &[Seg], quoted: bool) {
    let quoting = if quoted {
        Quoting::Quoted
    } else {
        Quoting::Split
    };
    for seg in value {
        match seg {
            Seg::Lit(text) => push_text(word, text, quoting),
            Seg::Unknown { raw, decoded } => word.push(Tok::Unknown {
                raw: raw.clone(),
                decoded: *decoded,
                quoted,
            }),
        }
    }
}

/// The most fields one word may expand to before oi stops expanding braces.
const MAX_FIELDS: usize = 256;

/// Expands a word into fields: braces, then `~` (with `home_of`), then word splitting.
pub(crate) fn expand(word: &Word, home_of: &dyn Fn(&str) -> Option<String>) -> Vec<Field> {
    let mut out = Vec::new();
    for alternative in braces(word) {
        let alternative = tilde(&alternative, home_of);
        out.extend(split(&alternative));
    }
    out
}

/// The value of an assignment (`X=~/a`): `~` expands, nothing splits.
pub(crate) fn assignment_value(word: &Word, home_of: &dyn Fn(&str) -> Option<String>) -> Vec<Seg> {
    let word = tilde(word, home_of);
    let mut field = Field::default();
    for tok in &word {
        match tok {
            Tok::Char(c, _) => field.push_char(*c),
            Tok::Unknown { raw, decoded, .. } => field.segs.push(Seg::Unknown {
                raw: raw.clone(),
                decoded: *decoded,
            }),
            Tok::Quotes => {}
        }
    }
    field.segs
}

fn bare(tok: &Tok, c: char) -> bool {
    *tok == Tok::Char(c, Quoting::Bare)
}

/// Brace expansion (`/{,}` → `/` `/`, `{a,b}c` → `ac` `bc`, `{1..3}`), nested, outermost first.
fn braces(word: &Word) -> Vec<Word> {
    let mut done = Vec::new();
    let mut todo = vec![word.clone()];
    while let Some(word) = todo.pop() {
        if done.len() + todo.len() >= MAX_FIELDS {
            done.push(word);
            continue;
        }
        match brace_parts(&word) {
            Some((prefix, parts, suffix)) => {
                for part in parts.into_iter().rev() {
                    todo.push([prefix.clone(), part, suffix.clone()].concat());
                }
            }
            None => done.push(word),
        }
    }
    done
}

/// The first expandable brace group of `word`: prefix, alternatives, suffix.
fn brace_parts(word: &Word) -> Option<(Word, Vec<Word>, Word)> {
    for open in 0..word.len() {
        if !bare(&word[open], '{') {
            continue;
        }
        let mut depth = 0;
        let mut commas = Vec::new();
        for (at, tok) in word.iter().enumerate().skip(open + 1) {
            if bare(tok, '{') {
                depth += 1;
            } else if bare(tok, '}') && depth > 0 {
                depth -= 1;
            } else if bare(tok, ',') && depth == 0 {
                commas.push(at);
            } else if bare(tok, '}') {
                let prefix = word[..open].to_vec();
                let suffix = word[at + 1..].to_vec();
                if !commas.is_empty() {
                    let mut parts = Vec::new();
                    let mut start = open + 1;
                    for comma in commas.iter().copied().chain([at]) {
                        parts.push(word[start..comma].to_vec());
                        start = comma + 1;
                    }
                    return Some((prefix, parts, suffix));
                }
                if let Some(parts) = sequence(&word[open + 1..at]) {
                    return Some((prefix, parts, suffix));
                }
                break;
            }
        }
    }
    None
}

/// `1..3` or `a..c` inside braces, as alternatives.
fn sequence(inner: &[Tok]) -> Option<Vec<Word>> {
    let text: String = inner
        .iter()
        .map(|t| match t {
            Tok::Char(c, Quoting::Bare) => Some(*c),
            _ => None,
        })
        .collect::<Option<String>>()?;
    let (from, to) = text.split_once("..")?;
    let items: Vec<String> = if let (Ok(a), Ok(b)) = (from.parse::<i64>(), to.parse::<i64>()) {
        let (low, high) = (a.min(b), a.max(b));
        if high - low >= MAX_FIELDS as i64 {
            return None;
        }
        (low..=high).map(|n| n.to_string()).collect()
    } else {
        let (mut a, mut b) = (from.chars(), to.chars());
        match (a.next(), a.next(), b.next(), b.next()) {
            (Some(x), None, Some(y), None) => (x.min(y)..=x.max(y)).map(String::from).collect(),
            _ => return None,
        }
    };
    Some(
        items
            .iter()
            .map(|item| {
                let mut word = Word::new();
                push_text(&mut word, item, Quoting::Quoted);
                word
            })
            .collect(),
    )
}

/// Tilde expansion at the start of a word: `~`, `~/x`, `~user`, `~+`.
fn tilde(word: &Word, home_of: &dyn Fn(&str) -> Option<String>) -> Word {
    if !word.first().is_some_and(|t| bare(t, '~')) {
        return word.clone();
    }
    let mut user = String::new();
    let mut end = 1;
    for tok in &word[1..] {
        match tok {
            Tok::Char('/', _) => break,
            Tok::Char(c, Quoting::Bare) => user.push(*c),
            _ => return word.clone(),
        }
        end += 1;
    }
    let Some(home) = home_of(&user) else {
        let mut out = vec![Tok::Unknown {
            raw: format!("~{user}"),
            decoded: false,
            quoted: true,
        }];
        out.extend_from_slice(&word[end..]);
        return out;
    };
    let mut out = Word::new();
    push_text(&mut out, &home, Quoting::Quoted);
    out.extend_from_slice(&word[end..]);
    out
}

/// Word splitting of unquoted expansion results; empty unquoted results vanish.
fn split(word: &Word) -> Vec<Field> {
    let mut fields = Vec::new();
    let mut field = Field::default();
    let mut keep = false;
    for tok in word {
        match tok {
            Tok::Char(c, Quoting::Split) if c.is_whitespace() => {
                if keep || !field.segs.is_empty() {
                    fields.push(std::mem::take(&mut field));
                }
                keep = false;
            }
            Tok::Char(c, quoting) => {
                field.push_char(*c);
                keep |= *quoting != Quoting::Split;
            }
            Tok::Unknown {
                raw,
                decoded,
                quoted,
            } => {
                field.segs.push(Seg::Unknown {
                    raw: raw.clone(),
                    decoded: *decoded,
                });
                keep |= *quoted;
            }
            Tok::Quotes => keep = true,
        }
    }
    if keep || !field.segs.is_empty() {
        fields.push(field);
    }
    fields
}

/// A word's pieces as one field, without splitting.
pub(crate) fn collapse(word: &Word) -> Field {
    Field {
        segs: assignment_value(word, &|_| None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bare_word(text: &str) -> Word {
        let mut word = Word::new();
        push_text(&mut word, text, Quoting::Bare);
        word
    }

    fn texts(fields: &[Field]) -> Vec<String> {
        fields.iter().map(Field::shown).collect()
    }

    fn home_of(user: &str) -> Option<String> {
        match user {
            "" => Some("/home/ada".into()),
            "root" => Some("/root".into()),
            _ => None,
        }
    }

    #[test]
    fn braces_tilde_and_splitting() {
        assert_eq!(texts(&expand(&bare_word("/{,}"), &home_of)), ["/", "/"]);
        assert_eq!(
            texts(&expand(&bare_word("{a,b{c,d}}x"), &home_of)),
            ["ax", "bcx", "bdx"]
        );
        assert_eq!(
            texts(&expand(&bare_word("f{1..3}"), &home_of)),
            ["f1", "f2", "f3"]
        );
        assert_eq!(texts(&expand(&bare_word("~/x"), &home_of)), ["/home/ada/x"]);
        assert_eq!(texts(&expand(&bare_word("~root"), &home_of)), ["/root"]);
        assert_eq!(texts(&expand(&bare_word("a{b}"), &home_of)), ["a{b}"]);
        let mut word = Word::new();
        push_value(&mut word, &[Seg::Lit("-rf /".into())], false);
        assert_eq!(texts(&expand(&word, &home_of)), ["-rf", "/"]);
        let mut quoted = Word::new();
        push_value(&mut quoted, &[Seg::Lit("-rf /".into())], true);
        assert_eq!(texts(&expand(&quoted, &home_of)), ["-rf /"]);
        let mut empty = Word::new();
        push_value(&mut empty, &[Seg::Lit(String::new())], false);
        assert!(expand(&empty, &home_of).is_empty());
    }
}
