//! Strings split into words: `TEXT.split()`, `TEXT.split(SEP)` and `shlex.split(TEXT)`, so
//! that `subprocess.run(shlex.split('rm -rf ~'))` is read as the command it runs.

use tree_sitter::Node;

use super::reader::{Reader, Value};
use crate::word::Field;

/// How a string is split.
#[derive(Debug, Clone, Copy)]
pub(super) enum Split<'a> {
    /// At runs of blanks (`str.split()`).
    Blanks,
    /// At each occurrence of a separator (`str.split(SEP)`).
    At(&'a str),
    /// Into shell words, quotes and backslashes removed (`shlex.split`).
    Shell,
}

impl Reader<'_, '_, '_> {
    /// The words of each string `node` may be; the words of a string oi does not know are
    /// not known either.
    pub(super) fn split(&self, node: Option<Node>, how: Split, depth: usize) -> Vec<Value> {
        let Some(node) = node else {
            return vec![Value::Unknown];
        };
        self.values(node, depth)
            .into_iter()
            .map(|value| {
                let Value::Str(field) = value else {
                    return Value::Unknown;
                };
                let Some(text) = field.known() else {
                    return Value::Unknown;
                };
                let words: Option<Vec<String>> = match how {
                    Split::Blanks => Some(text.split_whitespace().map(str::to_owned).collect()),
                    Split::At(separator) => {
                        Some(text.split(separator).map(str::to_owned).collect())
                    }
                    Split::Shell => shell_words(&text),
                };
                match words {
                    Some(words) => Value::List(words.iter().map(|w| Field::lit(w)).collect()),
                    None => Value::Unknown,
                }
            })
            .collect()
    }
}

/// `text` split as `shlex.split` does (POSIX mode): blanks separate words, `'…'` is literal,
/// `"…"` and a backslash outside quotes escape. `None` when a quote is not closed (it raises).
fn shell_words(text: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if let Some(done) = word.take() {
                    words.push(done);
                }
            }
            '\'' => {
                let current = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '\'' => break,
                        other => current.push(other),
                    }
                }
            }
            '"' => {
                let current = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.next()? {
                            escaped @ ('"' | '\\' | '$' | '`') => current.push(escaped),
                            other => {
                                current.push('\\');
                                current.push(other);
                            }
                        },
                        other => current.push(other),
                    }
                }
            }
            '\\' => {
                let current = word.get_or_insert_with(String::new);
                current.push(chars.next()?);
            }
            other => word.get_or_insert_with(String::new).push(other),
        }
    }
    words.extend(word);
    Some(words)
}

#[cfg(test)]
mod tests {
    use super::shell_words;

    #[test]
    fn shell_words_follow_shlex() {
        assert_eq!(
            shell_words(r#"rm  -rf '/home/a''da' "x y" a\ b "q\"" """#),
            Some(
                ["rm", "-rf", "/home/ada", "x y", "a b", "q\"", ""]
                    .map(str::to_owned)
                    .to_vec()
            )
        );
        assert_eq!(shell_words("echo 'open"), None);
    }
}
