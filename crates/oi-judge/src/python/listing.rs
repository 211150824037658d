//! Values the Python reader knows only in part: the entries a listing of a directory yields
//! (`os.listdir(D)` yields names, `os.walk(D)` a directory below `D` and names in it,
//! `Path(D).iterdir()`/`rglob`/`glob` paths below `D`), `%` and `str.format` of known parts,
//! and the home directory once the block changes `HOME`.
//!
//! A name from a listing is one component, never `..` and never absolute, and a directory
//! `os.walk` yields is below the one it walks: paths built from them stay below what is
//! listed ([`contained`]). Any other unknown part of a path may be anything.

use tree_sitter::Node;

use crate::word::{Field, Seg};

use super::reader::{Binding, Reader, Value, arguments};
use super::values::{ARGUMENT, TEMPORARY, expand_user, join_paths, push_lit, unknown_seg};

/// Marks (at the start of an unknown part's source text) a name a listing yields: one
/// component, not `..`.
const NAME: char = '\u{4}';

/// Marks a directory `os.walk` yields below the one it walks (any depth, no `..`).
const BELOW: char = '\u{5}';

/// The text of `field` for a path pattern: a name a listing yields is any name (`*`), or,
/// when the code tests it against a literal first (`narrowed`), a name that is none of the
/// protected ones; a directory `os.walk` yields is any depth below; other unknown parts are
/// unknown.
pub(super) fn pattern_text(field: &Field, narrowed: bool) -> String {
    let mut out = String::new();
    for seg in &field.segs {
        match seg {
            Seg::Lit(text) => out.push_str(text),
            Seg::Unknown { raw, .. } if raw.starts_with(NAME) => {
                out.push_str(if narrowed { NARROWED } else { "*" });
            }
            Seg::Unknown { .. } => out.push(crate::places::UNKNOWN),
        }
    }
    out
}

/// A name tested against a literal: it matches no protected name.
const NARROWED: &str = "\u{7}narrowed";

/// Whether `field` starts with an argument of the command line (judged where it is given).
pub(super) fn from_argument(field: &Field) -> bool {
    matches!(field.segs.first(), Some(Seg::Unknown { raw, .. }) if raw.starts_with(ARGUMENT))
}

/// Calls whose elements are the names in a directory.
const NAMES: &[&str] = &["os.listdir"];

/// Calls whose elements are paths of entries in their first argument.
const ENTRIES: &[&str] = &["os.scandir"];

/// Calls whose elements are what their (glob) pattern matches.
const GLOBS: &[&str] = &["glob.glob", "glob.iglob"];

/// Calls that walk a tree: `(directory below, [names], [names])`.
const WALKS: &[&str] = &["os.walk", "os.fwalk"];

/// Calls whose elements are those of their first argument.
const WRAPPERS: &[&str] = &[
    "list",
    "sorted",
    "reversed",
    "tuple",
    "set",
    "iter",
    "builtins.list",
    "builtins.sorted",
];

fn name_field(raw: &str) -> Field {
    Field {
        segs: vec![Seg::Unknown {
            raw: format!("{NAME}{raw}"),
            decoded: false,
        }],
    }
}

fn below(directory: &Field, raw: &str) -> Field {
    let mut out = directory.clone();
    push_lit(&mut out, "/");
    out.segs.push(Seg::Unknown {
        raw: format!("{BELOW}{raw}"),
        decoded: false,
    });
    out
}

fn child(directory: &Field, raw: &str) -> Field {
    join_paths(&[directory.clone(), name_field(raw)])
}

/// Whether every unknown part of `field` is a name or a directory from a listing, after a
/// known start, with no `..` after them: the path stays below its known start.
pub(super) fn contained(field: &Field) -> bool {
    let mut after_unknown = false;
    for (n, seg) in field.segs.iter().enumerate() {
        match seg {
            Seg::Unknown { raw, .. } => {
                let listed = raw.starts_with(NAME)
                    || (n == 0 && raw.starts_with(ARGUMENT))
                    || (n > 0 && raw.starts_with(BELOW));
                if !listed {
                    return false;
                }
                after_unknown = true;
            }
            Seg::Lit(text) if after_unknown => {
                if text.split('/').any(|c| c == "..") {
                    return false;
                }
            }
            Seg::Lit(_) => {}
        }
    }
    true
}

impl<'t> Reader<'_, '_, 't> {
    /// The home directory, unless the block changes `HOME`.
    pub(super) fn home(&self) -> Option<String> {
        if self.home_changed {
            None
        } else {
            self.scan.places.home()
        }
    }

    /// `os.path.expanduser(P)`: `~` is unknown once the block changes `HOME`.
    pub(super) fn expanded(&self, node: Option<Node>, depth: usize) -> Vec<Value> {
        let Some(node) = node else {
            return vec![Value::Unknown];
        };
        let home = self.home();
        let changed = self.home_changed;
        self.values(node, depth)
            .into_iter()
            .map(|value| match value {
                Value::Str(field) => match field.known() {
                    Some(text) if changed && (text == "~" || text.starts_with("~/")) => {
                        let mut out = Field::unknown("~", false);
                        push_lit(&mut out, &text[1..]);
                        Value::Str(out)
                    }
                    Some(text) => Value::Str(Field::lit(&expand_user(&text, home.as_deref()))),
                    None if field.shown().starts_with('~') => Value::Unknown,
                    None => Value::Str(field),
                },
                other => other,
            })
            .collect()
    }

    /// What each element of the iterable `node` may be.
    pub(super) fn elements(&self, node: Node<'t>, depth: usize) -> Vec<Value> {
        if depth >= super::reader::MAX_NAME_DEPTH {
            return vec![Value::Unknown];
        }
        if let Some(values) = self.listing_elements(node, None, depth) {
            return values;
        }
        let mut out = Vec::new();
        for value in self.values(node, depth) {
            match value {
                Value::List(items) => out.extend(items.into_iter().map(Value::Str)),
                _ => out.push(Value::Unknown),
            }
        }
        out
    }

    /// What the item at position `n` of each element of `node` may be.
    pub(super) fn parts(&self, node: Node<'t>, n: usize, depth: usize) -> Vec<Value> {
        if depth >= super::reader::MAX_NAME_DEPTH {
            return vec![Value::Unknown];
        }
        if let Some(values) = self.listing_elements(node, Some(n), depth) {
            return values;
        }
        vec![Value::Unknown]
    }

    /// Elements (or parts of elements) of a listing of a directory, followed through
    /// `list(…)`, `sorted(…)`, names assigned one, `enumerate`; `None` when `node` is none.
    fn listing_elements(
        &self,
        node: Node<'t>,
        part: Option<usize>,
        depth: usize,
    ) -> Option<Vec<Value>> {
        match node.kind() {
            "identifier" => {
                let bindings = self.names.get(self.text(node))?;
                let mut out = Vec::new();
                for binding in bindings {
                    match binding {
                        Binding::Is(value) => {
                            out.extend(self.listing_elements(*value, part, depth + 1)?);
                        }
                        _ => return None,
                    }
                }
                Some(out)
            }
            "parenthesized_expression" => self.listing_elements(node.named_child(0)?, part, depth),
            "call" => {
                let function = node.child_by_field_name("function")?;
                let name = self.qualified(function).unwrap_or_default();
                let arguments = arguments(node);
                let first = arguments.first().copied();
                let method = if function.kind() == "attribute" {
                    self.text_of_field(function, "attribute")
                } else {
                    String::new()
                };
                let raw = self.text(node);
                if WRAPPERS.contains(&name.as_str()) {
                    return self.listing_elements(first?, part, depth + 1);
                }
                if name == "enumerate" || name == "builtins.enumerate" {
                    return match part {
                        Some(1) => Some(self.elements(first?, depth + 1)),
                        _ => Some(vec![Value::Unknown]),
                    };
                }
                let directories = |node: Option<Node>| -> Vec<Field> {
                    match node {
                        None => vec![Field::lit(".")],
                        Some(node) => self
                            .values(node, depth + 1)
                            .into_iter()
                            .map(|v| match v {
                                Value::Str(field) => field,
                                _ => Field::unknown(self.text(node), false),
                            })
                            .collect(),
                    }
                };
                let whole = |values: Vec<Field>| {
                    Some(match part {
                        None => values.into_iter().map(Value::Str).collect(),
                        Some(_) => vec![Value::Unknown],
                    })
                };
                if NAMES.contains(&name.as_str()) {
                    return whole(vec![name_field(raw)]);
                }
                if ENTRIES.contains(&name.as_str()) {
                    return whole(directories(first).iter().map(|d| child(d, raw)).collect());
                }
                if GLOBS.contains(&name.as_str()) {
                    return whole(directories(first));
                }
                let object = function.child_by_field_name("object");
                let walk = WALKS.contains(&name.as_str()) || (method == "walk" && object.is_some());
                if walk {
                    let start = if WALKS.contains(&name.as_str()) {
                        first
                    } else {
                        object
                    };
                    let dirs = directories(start);
                    return Some(match part {
                        Some(0) => dirs.iter().map(|d| Value::Str(below(d, raw))).collect(),
                        Some(1 | 2) => vec![Value::List(vec![name_field(raw)])],
                        _ => vec![Value::Unknown],
                    });
                }
                let object = object?;
                match method.as_str() {
                    "iterdir" => whole(
                        directories(Some(object))
                            .iter()
                            .map(|d| child(d, raw))
                            .collect(),
                    ),
                    "glob" | "rglob" => {
                        let pattern = first
                            .map(|p| self.string(p))
                            .unwrap_or_else(|| Field::lit("*"));
                        let mut pattern = pattern;
                        if method == "rglob" {
                            let mut deep = Field::lit("**/");
                            deep.segs.extend(pattern.segs);
                            pattern = deep;
                        }
                        whole(
                            directories(Some(object))
                                .iter()
                                .map(|d| join_paths(&[d.clone(), pattern.clone()]))
                                .collect(),
                        )
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// `entry.name`, `entry.path` (a `DirEntry`), `TemporaryDirectory().name`.
    pub(super) fn entry_attribute(&self, node: Node, depth: usize) -> Vec<Value> {
        let Some(object) = node.child_by_field_name("object") else {
            return vec![Value::Unknown];
        };
        let attribute = self.text_of_field(node, "attribute");
        self.values(object, depth)
            .into_iter()
            .map(|value| match value {
                Value::Str(field) if attribute == "path" => Value::Str(field),
                Value::Str(field) if field.is(TEMPORARY) => Value::Str(field),
                Value::Str(field) => match field.segs.last() {
                    Some(Seg::Unknown { raw, .. }) if raw.starts_with(NAME) => {
                        Value::Str(name_field(raw.trim_start_matches(NAME)))
                    }
                    _ => Value::Unknown,
                },
                other => other,
            })
            .collect()
    }

    /// `FORMAT % ARGS` of known parts (`%s`, `%r`, `%d`, `%%`).
    pub(super) fn percent(&self, left: Node, right: Node, depth: usize) -> Vec<Value> {
        let args: Vec<Field> = match right.kind() {
            "tuple" => {
                let mut cursor = right.walk();
                right
                    .named_children(&mut cursor)
                    .map(|item| self.string(item))
                    .collect()
            }
            _ => vec![self.string(right)],
        };
        self.values(left, depth)
            .into_iter()
            .map(|value| {
                let Value::Str(format) = value else {
                    return Value::Unknown;
                };
                let Some(format) = format.known() else {
                    return Value::Unknown;
                };
                let mut out = Field::default();
                let mut next = args.iter();
                let mut chars = format.chars().peekable();
                while let Some(c) = chars.next() {
                    if c != '%' {
                        push_lit(&mut out, &c.to_string());
                        continue;
                    }
                    match chars.next() {
                        Some('%') => push_lit(&mut out, "%"),
                        Some('s' | 'r' | 'd' | 'i' | 'a') => match next.next() {
                            Some(arg) => out.segs.extend(arg.segs.iter().cloned()),
                            None => return Value::Unknown,
                        },
                        _ => return Value::Unknown,
                    }
                }
                Value::Str(out)
            })
            .collect()
    }

    /// `FORMAT.format(ARGS)` of known parts (`{}`, `{0}`, `{{`, `}}`).
    pub(super) fn formatted(&self, object: Node, arguments: &[Node], depth: usize) -> Vec<Value> {
        let args: Vec<Field> = arguments.iter().map(|a| self.string(*a)).collect();
        self.values(object, depth)
            .into_iter()
            .map(|value| {
                let Value::Str(format) = value else {
                    return Value::Unknown;
                };
                let Some(format) = format.known() else {
                    return Value::Unknown;
                };
                let mut out = Field::default();
                let mut auto = 0;
                let mut chars = format.chars().peekable();
                while let Some(c) = chars.next() {
                    match c {
                        '{' if chars.peek() == Some(&'{') => {
                            chars.next();
                            push_lit(&mut out, "{");
                        }
                        '}' if chars.peek() == Some(&'}') => {
                            chars.next();
                            push_lit(&mut out, "}");
                        }
                        '{' => {
                            let mut spec = String::new();
                            for c in chars.by_ref() {
                                if c == '}' {
                                    break;
                                }
                                spec.push(c);
                            }
                            let index = if spec.is_empty() {
                                auto += 1;
                                auto - 1
                            } else {
                                match spec.parse::<usize>() {
                                    Ok(n) => n,
                                    Err(_) => {
                                        out.segs.push(unknown_seg(&spec));
                                        continue;
                                    }
                                }
                            };
                            match args.get(index) {
                                Some(arg) => out.segs.extend(arg.segs.iter().cloned()),
                                None => out.segs.push(unknown_seg(&spec)),
                            }
                        }
                        other => push_lit(&mut out, &other.to_string()),
                    }
                }
                Value::Str(out)
            })
            .collect()
    }
}
