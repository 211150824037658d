//! How the Python reader evaluates an expression: literal strings and paths, as far as they
//! can be known before the code runs.

use tree_sitter::Node;

use crate::scan::{Limit, MAX_VALUE_LEN};
use crate::word::{self, Field, Seg};

use super::reader::{Binding, MAX_NAME_DEPTH, MAX_VALUES, Reader, Value, arguments};
use super::split::Split;

impl Reader<'_, '_, '_> {
    /// What `node` may evaluate to.
    /// Past the judge's budget (work, value length) the value is unknown and the reading
    /// unsure.
    pub(super) fn values(&self, node: Node, depth: usize) -> Vec<Value> {
        // An evaluation costs about what copying a few dozen characters does.
        if !self.scan.charge(32) {
            return vec![Value::Unknown];
        }
        let mut values = self.values_inner(node, depth);
        values.truncate(MAX_VALUES);
        let lengths = values.iter().map(|value| match value {
            Value::Str(field) => word::segs_len(&field.segs),
            Value::List(items) => items.iter().map(|f| word::segs_len(&f.segs)).sum(),
            Value::Unknown => 0,
        });
        let (mut total, mut longest) = (0, 0);
        for length in lengths {
            total += length;
            longest = longest.max(length);
        }
        if longest > MAX_VALUE_LEN {
            self.scan.exceed(Limit::Length);
            return vec![Value::Unknown];
        }
        if !self.scan.charge(total) {
            return vec![Value::Unknown];
        }
        values
    }

    fn values_inner(&self, node: Node, depth: usize) -> Vec<Value> {
        let text = self.text(node);
        match node.kind() {
            "string" => vec![self.string_literal(node, depth)],
            "concatenated_string" => {
                let mut field = Field::default();
                let mut cursor = node.walk();
                for part in node.named_children(&mut cursor) {
                    match self.string_literal(part, depth) {
                        Value::Str(f) => field.segs.extend(f.segs),
                        _ => field.segs.push(unknown_seg(self.text(part))),
                    }
                }
                vec![Value::Str(field)]
            }
            "parenthesized_expression" => match node.named_child(0) {
                Some(inner) => self.values(inner, depth),
                None => vec![Value::Unknown],
            },
            "list" | "tuple" => {
                let mut cursor = node.walk();
                let items: Vec<Field> = node
                    .named_children(&mut cursor)
                    .map(|item| self.string(item))
                    .collect();
                vec![Value::List(items)]
            }
            "binary_operator" => self.binary(node, depth),
            "identifier" => {
                let mut values = self.name(text, depth);
                if let Some(parameter) = self.parameter_values(node, text, depth) {
                    if self.names.contains_key(text) {
                        values.extend(parameter);
                    } else {
                        values = parameter;
                    }
                }
                values
            }
            "attribute" => match self.qualified(node).as_deref() {
                Some("os.sep" | "os.path.sep") => vec![Value::Str(Field::lit("/"))],
                Some("os.curdir" | "os.path.curdir") => vec![Value::Str(Field::lit("."))],
                Some("os.pardir" | "os.path.pardir") => vec![Value::Str(Field::lit(".."))],
                _ if matches!(
                    self.text_of_field(node, "attribute").as_str(),
                    "name" | "path"
                ) =>
                {
                    self.entry_attribute(node, depth)
                }
                _ if self.text_of_field(node, "attribute") == "parent" => {
                    self.map_str(node.child_by_field_name("object"), depth, |t| {
                        format!("{t}/..")
                    })
                }
                _ => vec![Value::Unknown],
            },
            "subscript" => {
                let base = node
                    .child_by_field_name("value")
                    .and_then(|v| self.qualified(v));
                let key = node
                    .child_by_field_name("subscript")
                    .map(|k| self.string(k).shown());
                match (base.as_deref(), key) {
                    (Some("os.environ"), Some(key)) => self.environment(&key),
                    (Some("sys.argv"), Some(_)) if !self.argv_changed => {
                        vec![Value::Str(argument_field(text))]
                    }
                    _ => vec![Value::Unknown],
                }
            }
            "call" => self.call_value(node, depth),
            _ => vec![Value::Unknown],
        }
    }

    pub(super) fn text_of_field(&self, node: Node, field: &str) -> String {
        node.child_by_field_name(field)
            .map(|f| self.text(f).to_owned())
            .unwrap_or_default()
    }

    fn name(&self, name: &str, depth: usize) -> Vec<Value> {
        if depth >= MAX_NAME_DEPTH {
            return vec![Value::Unknown];
        }
        let Some(bindings) = self.names.get(name) else {
            return vec![Value::Unknown];
        };
        let mut out = Vec::new();
        for binding in bindings {
            match binding {
                Binding::Is(node) => out.extend(self.values(*node, depth + 1)),
                Binding::ElementOf(node) => out.extend(self.elements(*node, depth + 1)),
                Binding::PartOf(node, n) => out.extend(self.parts(*node, *n, depth + 1)),
            }
        }
        out
    }

    fn environment(&self, key: &str) -> Vec<Value> {
        let known = match key {
            "HOME" | "USERPROFILE" => self.home(),
            "PWD" => self.scan.places.cwd(),
            _ => None,
        };
        match known {
            Some(text) => vec![Value::Str(Field::lit(&text))],
            None => vec![Value::Unknown],
        }
    }

    fn binary(&self, node: Node, depth: usize) -> Vec<Value> {
        let operator = self.text_of_field(node, "operator");
        let (Some(left), Some(right)) = (
            node.child_by_field_name("left"),
            node.child_by_field_name("right"),
        ) else {
            return vec![Value::Unknown];
        };
        let separator = match operator.as_str() {
            "+" => "",
            "/" => "/",
            "%" => return self.percent(left, right, depth),
            _ => return vec![Value::Unknown],
        };
        let mut out = Vec::new();
        for l in self.values(left, depth) {
            for r in self.values(right, depth) {
                out.push(match (&l, &r) {
                    (Value::Str(a), Value::Str(b)) if separator == "/" => {
                        Value::Str(join_paths(&[a.clone(), b.clone()]))
                    }
                    (Value::Str(a), Value::Str(b)) => Value::Str(Field {
                        segs: [a.segs.clone(), b.segs.clone()].concat(),
                    }),
                    (Value::List(a), Value::List(b)) if separator.is_empty() => {
                        Value::List([a.clone(), b.clone()].concat())
                    }
                    // Known text or items with an unknown part: the known part is still read
                    // (`'ls ' + path`, `['wc', '-l'] + files`).
                    (Value::Str(a), Value::Unknown) if separator.is_empty() => {
                        let mut field = a.clone();
                        field.segs.push(unknown_seg(self.text(right)));
                        Value::Str(field)
                    }
                    (Value::Unknown, Value::Str(b)) if separator.is_empty() => {
                        let mut field = Field::unknown(self.text(left), false);
                        field.segs.extend(b.segs.iter().cloned());
                        Value::Str(field)
                    }
                    (Value::List(a), Value::Unknown) if separator.is_empty() => {
                        let mut items = a.clone();
                        items.push(Field::unknown(self.text(right), false));
                        Value::List(items)
                    }
                    (Value::Unknown, Value::List(b)) if separator.is_empty() => {
                        let mut items = vec![Field::unknown(self.text(left), false)];
                        items.extend(b.iter().cloned());
                        Value::List(items)
                    }
                    _ => Value::Unknown,
                });
            }
        }
        out
    }

    /// Applies `f` to the known text of each string value of `node`.
    pub(super) fn map_str(
        &self,
        node: Option<Node>,
        depth: usize,
        f: impl Fn(&str) -> String,
    ) -> Vec<Value> {
        let Some(node) = node else {
            return vec![Value::Unknown];
        };
        self.values(node, depth)
            .into_iter()
            .map(|v| match v {
                Value::Str(field) => match field.known() {
                    Some(text) => Value::Str(Field::lit(&f(&text))),
                    None => Value::Str(field),
                },
                other => other,
            })
            .collect()
    }

    fn call_value(&self, node: Node, depth: usize) -> Vec<Value> {
        let Some(function) = node.child_by_field_name("function") else {
            return vec![Value::Unknown];
        };
        let arguments = arguments(node);
        let name = self.qualified(function).unwrap_or_default();
        let object = (function.kind() == "attribute")
            .then(|| function.child_by_field_name("object"))
            .flatten();
        let method = self.text_of_field(function, "attribute");
        let first = arguments.first().copied();
        let home = self.home();
        match name.as_str() {
            "os.path.expanduser" => self.expanded(first, depth),
            "os.path.expandvars" => self.map_str(first, depth, |t| match &home {
                Some(h) => t.replace("${HOME}", h).replace("$HOME", h),
                None => t.to_owned(),
            }),
            "os.path.join"
            | "posixpath.join"
            | "os.path.abspath"
            | "os.path.realpath"
            | "os.path.normpath"
            | "os.fspath"
            | "str"
            | "pathlib.Path"
            | "Path"
            | "pathlib.PurePath"
            | "PurePath"
            | "pathlib.PosixPath"
            | "PosixPath"
            | "pathlib.PurePosixPath" => {
                if arguments.is_empty() {
                    return vec![Value::Str(Field::lit("."))];
                }
                self.joined(&arguments, depth)
            }
            "os.path.dirname" => self.map_str(first, depth, |t| format!("{t}/..")),
            "os.getcwd" | "os.getcwdb" | "pathlib.Path.cwd" | "Path.cwd" => self
                .cwds
                .iter()
                .map(|cwd| match cwd {
                    Some(cwd) => Value::Str(Field::lit(cwd)),
                    // Where the block went, which oi does not know: `.` resolves to it.
                    None => Value::Str(Field::lit(".")),
                })
                .collect(),
            // `compile(source, …)` is run by `exec`/`eval`: its value is the source.
            "compile" | "builtins.compile" | "__builtins__.compile" => match first {
                Some(source) => self.values(source, depth),
                None => vec![Value::Unknown],
            },
            "pathlib.Path.home" | "Path.home" | "os.path.expanduser.home" => match home {
                Some(home) => vec![Value::Str(Field::lit(&home))],
                None => vec![Value::Unknown],
            },
            "os.getenv" | "os.environ.get" => match first {
                Some(key) => self.environment(&self.string(key).shown()),
                None => vec![Value::Unknown],
            },
            "tempfile.mkdtemp" | "tempfile.TemporaryDirectory" => {
                vec![Value::Str(Field::lit(TEMPORARY))]
            }
            "tempfile.gettempdir" => vec![Value::Str(Field::lit("/tmp"))],
            "shlex.split" => self.split(first, Split::Shell, depth),
            "base64.b64decode"
            | "base64.standard_b64decode"
            | "base64.urlsafe_b64decode"
            | "base64.b32decode"
            | "base64.b16decode"
            | "codecs.decode"
            | "bytes.fromhex"
            | "binascii.a2b_base64"
            | "binascii.unhexlify"
            | "zlib.decompress"
            | "gzip.decompress"
            | "bz2.decompress"
            | "lzma.decompress" => {
                vec![Value::Str(Field::unknown(self.text(node), true))]
            }
            _ => match (method.as_str(), object) {
                ("expanduser", Some(object)) => self.expanded(Some(object), depth),
                ("format", Some(object)) => self.formatted(object, &arguments, depth),
                (
                    "resolve" | "absolute" | "decode" | "encode" | "strip" | "rstrip" | "lstrip"
                    | "as_posix",
                    Some(object),
                ) => self.values(object, depth),
                ("split", Some(object)) if arguments.len() <= 1 => {
                    let separator = first.and_then(|f| self.values(f, depth).into_iter().next());
                    match separator {
                        None => self.split(Some(object), Split::Blanks, depth),
                        Some(Value::Str(field)) => match field.known() {
                            Some(separator) if !separator.is_empty() => {
                                self.split(Some(object), Split::At(&separator), depth)
                            }
                            _ => vec![Value::Unknown],
                        },
                        Some(_) => vec![Value::Unknown],
                    }
                }
                ("joinpath", Some(object)) => {
                    let mut parts = vec![self.string(object)];
                    parts.extend(arguments.iter().map(|a| self.string(*a)));
                    vec![Value::Str(join_paths(&parts))]
                }
                ("join", Some(object)) if object.kind() == "string" => {
                    let separator = self.string(object);
                    match first.map(|f| self.values(f, depth)) {
                        Some(values) => values
                            .into_iter()
                            .map(|v| match v {
                                Value::List(items) => Value::Str(join_with(&items, &separator)),
                                other => other,
                            })
                            .collect(),
                        None => vec![Value::Unknown],
                    }
                }
                _ => vec![Value::Unknown],
            },
        }
    }

    /// `os.path.join(a, b, …)` for every value each part may have (`os.getcwd()` after
    /// `os.chdir` has several), as many as [`MAX_VALUES`].
    fn joined(&self, parts: &[Node], depth: usize) -> Vec<Value> {
        let mut joined: Vec<Vec<Field>> = vec![Vec::new()];
        for part in parts {
            let choices: Vec<Field> = self
                .values(*part, depth)
                .into_iter()
                .map(|v| match v {
                    Value::Str(field) => field,
                    _ => Field::unknown(self.text(*part), false),
                })
                .collect();
            let mut next = Vec::new();
            for prefix in &joined {
                for choice in &choices {
                    let mut parts = prefix.clone();
                    parts.push(choice.clone());
                    next.push(parts);
                }
            }
            next.truncate(MAX_VALUES);
            joined = next;
        }
        joined
            .iter()
            .map(|parts| Value::Str(join_paths(parts)))
            .collect()
    }

    /// A string literal: escapes decoded (unless raw), f-string parts evaluated.
    fn string_literal(&self, node: Node, depth: usize) -> Value {
        if node.kind() != "string" {
            return Value::Unknown;
        }
        let prefix = node
            .named_child(0)
            .filter(|c| c.kind() == "string_start")
            .map(|c| self.text(c).to_lowercase())
            .unwrap_or_default();
        let raw = prefix.contains('r');
        let mut field = Field::default();
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            match child.kind() {
                "string_content" => {
                    let text = self.text(child);
                    let text = if raw {
                        text.to_owned()
                    } else {
                        unescape_python(text)
                    };
                    push_lit(&mut field, &text);
                }
                "interpolation" => {
                    let value = child
                        .child_by_field_name("expression")
                        .map(|e| self.values(e, depth + 1));
                    match value.as_deref() {
                        Some([Value::Str(inner)]) => field.segs.extend(inner.segs.clone()),
                        _ => field.segs.push(unknown_seg(self.text(child))),
                    }
                }
                _ => {}
            }
        }
        Value::Str(field)
    }
}

/// `~` and `~user` at the start of a path.
pub(super) fn expand_user(text: &str, home: Option<&str>) -> String {
    let Some(rest) = text.strip_prefix('~') else {
        return text.to_owned();
    };
    let (user, tail) = rest.split_once('/').map_or((rest, ""), |(u, t)| (u, t));
    let base = match (user, home) {
        ("", Some(home)) => home.to_owned(),
        ("", None) => return text.to_owned(),
        ("root", _) => "/root".to_owned(),
        (name, _) => format!("/home/{name}"),
    };
    if tail.is_empty() {
        base
    } else {
        format!("{base}/{tail}")
    }
}

/// `os.path.join`: an absolute part starts over.
pub(super) fn join_paths(parts: &[Field]) -> Field {
    let mut out = Field::default();
    for part in parts {
        if part.shown().starts_with('/') {
            out = Field::default();
        } else if !out.segs.is_empty() {
            push_lit(&mut out, "/");
        }
        out.segs.extend(part.segs.iter().cloned());
    }
    out
}

fn join_with(items: &[Field], separator: &Field) -> Field {
    let mut out = Field::default();
    for (n, item) in items.iter().enumerate() {
        if n > 0 {
            out.segs.extend(separator.segs.iter().cloned());
        }
        out.segs.extend(item.segs.iter().cloned());
    }
    out
}

pub(super) fn push_lit(field: &mut Field, text: &str) {
    if let Some(Seg::Lit(last)) = field.segs.last_mut() {
        last.push_str(text);
    } else {
        field.segs.push(Seg::Lit(text.to_owned()));
    }
}

pub(super) fn unknown_seg(raw: &str) -> Seg {
    Seg::Unknown {
        raw: raw.to_owned(),
        decoded: false,
    }
}

/// Python string escapes: `\n`, `\t`, `\\`, `\'`, `\"`, `\xHH`, `\ooo`, `\uHHHH`, `\UHHHHHHHH`.
fn unescape_python(text: &str) -> String {
    super::super::escapes::unescape_c(text)
}

/// Marks an argument of the command line (`sys.argv[N]`): whoever runs the code with
/// arguments (`python3 -c CODE ARG`) has them judged there.
pub(super) const ARGUMENT: char = '\u{6}';

/// `sys.argv[N]`: an argument the command line's reader judges.
pub(super) fn argument_field(raw: &str) -> Field {
    Field {
        segs: vec![Seg::Unknown {
            raw: format!("{ARGUMENT}{raw}"),
            decoded: false,
        }],
    }
}

/// What `tempfile.mkdtemp()` and `TemporaryDirectory()` stand for: a fresh directory.
pub(super) const TEMPORARY: &str = "/tmp/tmp.oi-mkdtemp";
