//! Reading a Python profile without running it. The original's `.py` profiles are Python
//! scripts; oi never executes profile code, but it reads their common shape — assignments of
//! literal values to `interpreter.<setting>`, `interpreter.llm.<setting>` and
//! `interpreter.computer.<setting>` (strings in any quoting, `"""…""".strip()`, numbers,
//! `True`/`False`/`None`, lists) — with the real Python grammar (tree-sitter-python). Every
//! other statement is skipped with a note naming its line; imports, comments and the module's
//! docstring are skipped silently.

use oi_core::settings::{SettingsPatch, check_keys};
use serde_json::{Map, Value};
use tree_sitter::{Node, Parser};

use super::{ProfileError, ProfileNote};

/// Settings whose Python value `False` means "none" in oi (the original writes
/// `interpreter.llm.execution_instructions = False` to send no instructions).
const FALSE_MEANS_EMPTY: &[&str] = &["llm.execution_instructions"];

/// Parses a Python profile `text` (named `origin` in messages).
pub fn read(text: &str, origin: &str) -> Result<(SettingsPatch, Vec<ProfileNote>), ProfileError> {
    let error = |message: String| ProfileError(format!("profile {origin}: {message}"));
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .map_err(|e| error(format!("the Python grammar could not be loaded: {e}")))?;
    let tree = parser
        .parse(text, None)
        .ok_or_else(|| error("it could not be read as Python".to_owned()))?;
    let root = tree.root_node();
    let mut reader = Reader {
        source: text.as_bytes(),
        tree: Map::new(),
        lines: Vec::new(),
        notes: Vec::new(),
    };
    let mut cursor = root.walk();
    for (index, statement) in root.named_children(&mut cursor).enumerate() {
        reader.statement(statement, index == 0);
    }
    let mut notes = reader.notes;
    let tree = Value::Object(reader.tree);
    let mut kept = tree.clone();
    for unknown in check_keys(&tree) {
        let line = reader
            .lines
            .iter()
            .find(|(key, _)| *key == unknown.key)
            .map(|(_, line)| *line);
        notes.push(ProfileNote {
            line,
            text: format!("{unknown}; skipped"),
        });
        remove_dotted(&mut kept, &unknown.key);
    }
    notes.sort_by_key(|note| note.line);
    let patch: SettingsPatch = serde_json::from_value(kept).map_err(|e| error(format!("{e}")))?;
    Ok((patch, notes))
}

fn remove_dotted(tree: &mut Value, key: &str) {
    match key.split_once('.') {
        Some((section, name)) => {
            if let Some(Value::Object(map)) = tree.get_mut(section) {
                map.remove(name);
            }
        }
        None => {
            if let Value::Object(map) = tree {
                map.remove(key);
            }
        }
    }
}

struct Reader<'a> {
    source: &'a [u8],
    tree: Map<String, Value>,
    /// The line each setting was assigned on (dotted names).
    lines: Vec<(String, usize)>,
    notes: Vec<ProfileNote>,
}

impl Reader<'_> {
    fn text(&self, node: Node<'_>) -> &str {
        node.utf8_text(self.source).unwrap_or("")
    }

    fn note(&mut self, node: Node<'_>, why: &str) {
        let first_line = self.text(node).lines().next().unwrap_or("").trim();
        let shown: String = first_line.chars().take(60).collect();
        self.notes.push(ProfileNote {
            line: Some(node.start_position().row + 1),
            text: format!(
                "`{shown}` {why}; skipped (oi reads settings from profiles, it never runs them)"
            ),
        });
    }

    fn statement(&mut self, node: Node<'_>, first: bool) {
        match node.kind() {
            "import_statement"
            | "import_from_statement"
            | "future_import_statement"
            | "comment" => {}
            "expression_statement" => {
                let Some(inner) = node.named_child(0) else {
                    return;
                };
                match inner.kind() {
                    "assignment" => self.assignment(inner),
                    "string" | "concatenated_string" if first => {}
                    _ => self.note(node, "is not an assignment of a value to a setting"),
                }
            }
            _ => self.note(node, "is not an assignment of a value to a setting"),
        }
    }

    fn assignment(&mut self, node: Node<'_>) {
        let (Some(left), Some(right)) = (
            node.child_by_field_name("left"),
            node.child_by_field_name("right"),
        ) else {
            self.note(node, "is not a plain assignment");
            return;
        };
        let Some(key) = self.setting_name(left) else {
            self.note(node, "does not set `interpreter.…`");
            return;
        };
        let Some(mut value) = self.literal(right) else {
            self.note(node, "assigns something other than a literal value");
            return;
        };
        if value == Value::Bool(false) && FALSE_MEANS_EMPTY.contains(&key.as_str()) {
            value = Value::String(String::new());
        }
        self.lines
            .push((key.clone(), node.start_position().row + 1));
        match key.split_once('.') {
            Some((section, name)) => {
                let entry = self
                    .tree
                    .entry(section.to_owned())
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(map) = entry {
                    map.insert(name.to_owned(), value);
                }
            }
            None => {
                self.tree.insert(key, value);
            }
        }
    }

    /// `interpreter.x` → `x`; `interpreter.llm.x` → `llm.x`; `interpreter.computer.x` →
    /// `computer.x`.
    fn setting_name(&self, node: Node<'_>) -> Option<String> {
        let mut parts = Vec::new();
        let mut current = node;
        while current.kind() == "attribute" {
            let attribute = current.child_by_field_name("attribute")?;
            parts.push(self.text(attribute).to_owned());
            current = current.child_by_field_name("object")?;
        }
        if current.kind() != "identifier" || self.text(current) != "interpreter" {
            return None;
        }
        parts.reverse();
        match parts.as_slice() {
            [name] => Some(name.clone()),
            [section, name] if section == "llm" || section == "computer" => {
                Some(format!("{section}.{name}"))
            }
            _ => None,
        }
    }

    /// The value of a literal expression, or `None` when it is not one.
    fn literal(&self, node: Node<'_>) -> Option<Value> {
        match node.kind() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            "none" => Some(Value::Null),
            "integer" => self
                .text(node)
                .replace('_', "")
                .parse::<i64>()
                .ok()
                .map(Value::from),
            "float" => self
                .text(node)
                .replace('_', "")
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number),
            "unary_operator" if self.text(node).starts_with('-') => {
                let operand = node.child_by_field_name("argument")?;
                match self.literal(operand)? {
                    Value::Number(n) => n.as_i64().map(|i| Value::from(-i)).or_else(|| {
                        n.as_f64()
                            .and_then(|f| serde_json::Number::from_f64(-f))
                            .map(Value::Number)
                    }),
                    _ => None,
                }
            }
            "parenthesized_expression" => self.literal(node.named_child(0)?),
            "string" => self.string(node).map(Value::String),
            "concatenated_string" => {
                let mut joined = String::new();
                let mut cursor = node.walk();
                for part in node.named_children(&mut cursor) {
                    joined.push_str(&self.string(part)?);
                }
                Some(Value::String(joined))
            }
            "list" | "tuple" => {
                let mut items = Vec::new();
                let mut cursor = node.walk();
                for item in node.named_children(&mut cursor) {
                    items.push(self.literal(item)?);
                }
                Some(Value::Array(items))
            }
            "call" => self.stripped(node),
            _ => None,
        }
    }

    /// `"…".strip()` (and `lstrip`/`rstrip`) on a string literal.
    fn stripped(&self, node: Node<'_>) -> Option<Value> {
        let function = node.child_by_field_name("function")?;
        let arguments = node.child_by_field_name("arguments")?;
        if function.kind() != "attribute" || arguments.named_child_count() != 0 {
            return None;
        }
        let method = self.text(function.child_by_field_name("attribute")?);
        let Value::String(text) = self.literal(function.child_by_field_name("object")?)? else {
            return None;
        };
        let result = match method {
            "strip" => text.trim(),
            "lstrip" => text.trim_start(),
            "rstrip" => text.trim_end(),
            _ => return None,
        };
        Some(Value::String(result.to_owned()))
    }

    /// A string literal's value: quotes removed, escapes decoded (raw strings kept as they
    /// are); f-strings and byte strings are not literals.
    fn string(&self, node: Node<'_>) -> Option<String> {
        if node.kind() != "string" {
            return None;
        }
        let text = self.text(node);
        let prefix_len = text.find(['"', '\'']).unwrap_or(0);
        let prefix = text[..prefix_len].to_ascii_lowercase();
        if prefix.contains('f') || prefix.contains('b') {
            return None;
        }
        let body = &text[prefix_len..];
        let quote = ["\"\"\"", "'''", "\"", "'"]
            .into_iter()
            .find(|q| body.starts_with(q) && body.len() >= 2 * q.len() && body.ends_with(q))?;
        let inner = &body[quote.len()..body.len() - quote.len()];
        if prefix.contains('r') {
            return Some(inner.to_owned());
        }
        Some(unescape(inner))
    }
}

/// Python's backslash escapes.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('0') => out.push('\0'),
            Some('\\') => out.push('\\'),
            Some('\'') => out.push('\''),
            Some('"') => out.push('"'),
            Some('\n') => {}
            Some(kind @ ('x' | 'u' | 'U')) => {
                let digits = match kind {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let hex: String = (0..digits).filter_map(|_| chars.next()).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(decoded) => out.push(decoded),
                    None => {
                        out.push('\\');
                        out.push(kind);
                        out.push_str(&hex);
                    }
                }
            }
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn the_originals_profile_shape_is_read_without_running_it() {
        let text = r#""""
This is an Open Interpreter profile.
"""

from interpreter import interpreter

interpreter.system_message = """You are terse.
Now, your turn:""".strip()

# Message templates
interpreter.code_output_template = '''Output: """{content}"""\n\nNext?'''
interpreter.code_output_sender = "user"
interpreter.user_message_template = (
    "Write code for: `{content}`"
)

interpreter.llm.model = "ollama/codestral"
interpreter.llm.supports_functions = False
interpreter.llm.execution_instructions = False
interpreter.llm.max_tokens = 1000
interpreter.llm.temperature = -0.0
interpreter.llm.load()  # Loads Ollama models
interpreter.computer.import_computer_api = True
interpreter.auto_run = False
interpreter.offline = True
interpreter.speak_messages = True
import os
os.system("touch /tmp/never")
interpreter.display_message("> Model set")
"#;
        let (patch, notes) = read(text, "codestral.py").unwrap();
        assert_eq!(
            patch.system_message.as_deref(),
            Some("You are terse.\nNow, your turn:")
        );
        assert_eq!(
            patch.code_output_template.as_deref(),
            Some("Output: \"\"\"{content}\"\"\"\n\nNext?")
        );
        assert_eq!(
            patch.user_message_template.as_deref(),
            Some("Write code for: `{content}`")
        );
        let llm = patch.llm.clone().unwrap();
        assert_eq!(llm.model.as_deref(), Some("ollama/codestral"));
        assert_eq!(llm.supports_functions, Some(Some(false)));
        assert_eq!(llm.execution_instructions.as_deref(), Some(""));
        assert_eq!(llm.max_tokens, Some(Some(1000)));
        assert_eq!(patch.computer.unwrap().import_computer_api, Some(true));
        assert_eq!((patch.auto_run, patch.offline), (Some(false), Some(true)));
        let shown: Vec<String> = notes.iter().map(ToString::to_string).collect();
        assert_eq!(shown.len(), 4, "{shown:#?}");
        let lines: Vec<Option<usize>> = notes.iter().map(|n| n.line).collect();
        assert_eq!(lines, [Some(22), Some(26), Some(28), Some(29)]);
        assert!(shown[0].contains("`interpreter.llm.load()` is not an assignment"));
        assert_eq!(
            shown[1],
            "line 26: unknown setting `speak_messages`; skipped"
        );
        assert!(shown[2].contains("`os.system(\"touch /tmp/never\")`"));
        assert!(shown[3].contains("`interpreter.display_message(\"> Model set\")`"));
    }
}
