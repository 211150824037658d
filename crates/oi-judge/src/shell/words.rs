//! How the shell reader evaluates a word node: quotes, escapes, variables, `${…}` defaults and
//! command substitutions, into the alternatives the word may take.

use tree_sitter::Node;

use crate::escapes::{push_bare, unescape_c, unescape_double};
use crate::output::Output;
use crate::word::{self, Field, Quoting, Seg, Tok, Word, collapse};

use crate::scan::{Limit, MAX_VALUE_LEN};

use super::walker::{MAX_ALTERNATIVES, Walker};

impl Walker<'_, '_> {
    /// A word node's possible values (one per combination of variable values).
    pub(super) fn words(&mut self, node: Node) -> Vec<Word> {
        let mut out = vec![Word::new()];
        self.word(node, false, &mut out);
        out
    }

    /// A word node expanded into fields (every alternative's, one after the other).
    pub(crate) fn fields(&mut self, node: Node) -> Vec<Field> {
        let words = self.words(node);
        words
            .iter()
            .flat_map(|w| word::expand(w, &|u| self.home_of(u)))
            .collect()
    }

    fn push(out: &mut [Word], text: &str, quoting: Quoting) {
        for word in out.iter_mut() {
            word::push_text(word, text, quoting);
        }
    }

    fn push_unknown(out: &mut [Word], raw: &str, decoded: bool, quoted: bool) {
        for word in out.iter_mut() {
            word.push(Tok::Unknown {
                raw: raw.to_owned(),
                decoded,
                quoted,
            });
        }
    }

    /// Appends each of `values` to each word; past the judge's limits (alternatives, value
    /// length, work) the part is unknown (and, for length and work, the reading unsure).
    fn push_values(&self, out: &mut Vec<Word>, values: &[Vec<Seg>], quoted: bool, raw: &str) {
        if out.len() * values.len() > MAX_ALTERNATIVES {
            Self::push_unknown(out, raw, false, quoted);
            return;
        }
        let lengths: Vec<usize> = values.iter().map(|v| word::segs_len(v)).collect();
        let longest = lengths.iter().copied().max().unwrap_or(0);
        let current = out.iter().map(Vec::len).max().unwrap_or(0);
        if current.saturating_add(longest) > MAX_VALUE_LEN {
            self.scan.exceed(Limit::Length);
            Self::push_unknown(out, raw, false, quoted);
            return;
        }
        if !self.scan.charge(out.len() * lengths.iter().sum::<usize>()) {
            Self::push_unknown(out, raw, false, quoted);
            return;
        }
        let mut next = Vec::new();
        for word in out.iter() {
            for value in values {
                let mut word = word.clone();
                word::push_value(&mut word, value, quoted);
                next.push(word);
            }
        }
        *out = next;
    }

    fn word(&mut self, node: Node, quoted: bool, out: &mut Vec<Word>) {
        let text = self.text(node).to_owned();
        match node.kind() {
            "brace_expression" => {
                for word in out.iter_mut() {
                    push_bare(word, &text);
                }
            }
            "word" | "number" if node.named_child_count() == 0 => {
                if quoted {
                    Self::push(out, &text, Quoting::Quoted);
                } else {
                    for word in out.iter_mut() {
                        push_bare(word, &text);
                    }
                }
            }
            "raw_string" => {
                for word in out.iter_mut() {
                    word.push(Tok::Quotes);
                }
                let inner = text
                    .strip_prefix('\'')
                    .and_then(|t| t.strip_suffix('\''))
                    .unwrap_or(&text);
                Self::push(out, inner, Quoting::Quoted);
            }
            "ansi_c_string" => {
                for word in out.iter_mut() {
                    word.push(Tok::Quotes);
                }
                let inner = text
                    .strip_prefix("$'")
                    .and_then(|t| t.strip_suffix('\''))
                    .unwrap_or(&text);
                Self::push(out, &unescape_c(inner), Quoting::Quoted);
            }
            "string" => {
                for word in out.iter_mut() {
                    word.push(Tok::Quotes);
                }
                let start = node.start_byte() + 1;
                let end = if text.len() > 1 && text.ends_with('"') {
                    node.end_byte() - 1
                } else {
                    node.end_byte()
                };
                self.string_parts(node, start, end, out);
            }
            "translated_string" | "command_name" | "concatenation" => {
                let mut at = node.start_byte();
                let mut cursor = node.walk();
                let children: Vec<Node> = node.children(&mut cursor).collect();
                for child in children {
                    if child.start_byte() > at {
                        let gap = self.src.get(at..child.start_byte()).unwrap_or("");
                        Self::push(out, gap, Quoting::Quoted);
                    }
                    if child.is_named() {
                        self.word(child, quoted, out);
                    } else {
                        let piece = self.text(child).to_owned();
                        for word in out.iter_mut() {
                            push_bare(word, &piece);
                        }
                    }
                    at = child.end_byte();
                }
            }
            "simple_expansion" => {
                let name = text.trim_start_matches('$');
                let values = self.lookup(name);
                self.push_values(out, &values, quoted, &text);
            }
            "expansion" => self.expansion(node, quoted, out),
            "command_substitution" => {
                let output = self.scoped(node);
                match output {
                    Output::Literal(literal) => {
                        let value = vec![Seg::Lit(literal.trim_end_matches('\n').to_owned())];
                        self.push_values(out, &[value], quoted, &text);
                    }
                    Output::Found(paths) => {
                        self.push_values(out, &[vec![Seg::Lit(paths)]], quoted, &text);
                    }
                    Output::Decoded => Self::push_unknown(out, &text, true, quoted),
                    _ => Self::push_unknown(out, &text, false, quoted),
                }
            }
            "process_substitution" => {
                let decoded = self.scoped(node) == Output::Decoded;
                Self::push_unknown(out, &text, decoded, true);
            }
            _ => {
                self.generic(node);
                Self::push_unknown(out, &text, false, quoted);
            }
        }
    }

    /// The inside of a double-quoted string (or an unquoted here-document) from `start` to
    /// `end`: literal text between the expansions.
    pub(super) fn string_parts(
        &mut self,
        node: Node,
        start: usize,
        end: usize,
        out: &mut Vec<Word>,
    ) {
        let mut at = start;
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            if child.start_byte() > at {
                let gap = self.src.get(at..child.start_byte()).unwrap_or("");
                Self::push(out, &unescape_double(gap), Quoting::Quoted);
            }
            match child.kind() {
                "string_content" | "heredoc_content" => {
                    let piece = unescape_double(self.text(child));
                    Self::push(out, &piece, Quoting::Quoted);
                }
                _ => self.word(child, true, out),
            }
            at = child.end_byte().max(at);
        }
        if end > at {
            let gap = self.src.get(at..end).unwrap_or("");
            Self::push(out, &unescape_double(gap), Quoting::Quoted);
        }
    }

    /// `${NAME}`, `${NAME:-default}` and friends; anything fancier is unknown.
    fn expansion(&mut self, node: Node, quoted: bool, out: &mut Vec<Word>) {
        let text = self.text(node).to_owned();
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        let operator = node
            .child_by_field_name("operator")
            .map(|o| self.text(o).to_owned());
        let name = match children.first() {
            Some(first) if first.kind() == "variable_name" => self.text(*first).to_owned(),
            _ => {
                self.generic(node);
                Self::push_unknown(out, &text, false, quoted);
                return;
            }
        };
        match operator.as_deref() {
            None if children.len() == 1 => {
                let values = self.lookup(&name);
                self.push_values(out, &values, quoted, &text);
            }
            Some(op @ (":-" | "-" | ":=" | "=" | ":+" | "+")) => {
                let mut default = vec![Word::new()];
                for child in &children[1..] {
                    self.word(*child, quoted, &mut default);
                }
                let default: Vec<Vec<Seg>> = default.iter().map(|w| collapse(w).segs).collect();
                let set = self.env.vars.contains_key(&name);
                let alternate = matches!(op, ":+" | "+");
                let values = match (set, alternate) {
                    (true, false) => self.lookup(&name),
                    (true, true) => default,
                    (false, false) => [default, self.lookup(&name)].concat(),
                    (false, true) => [default, vec![Vec::new()]].concat(),
                };
                self.push_values(out, &values, quoted, &text);
            }
            _ => {
                self.generic(node);
                Self::push_unknown(out, &text, false, quoted);
            }
        }
    }
}
