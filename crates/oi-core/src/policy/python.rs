//! Reads Python with tree-sitter-python: the calls that delete trees (`shutil.rmtree`), run
//! shell commands (`os.system`, `subprocess.*`, `os.exec*`), run more Python (`exec`), write
//! onto disks (`open('/dev/sda', 'wb')`), and loops that fork forever. Arguments are evaluated
//! as far as they are literal: strings (f-strings with known parts), `+` and `/`,
//! `os.path.join`/`expanduser`, `Path.home()`, `os.environ['HOME']`, `base64.b64decode` of a
//! literal, and names assigned such values anywhere in the block.

use std::collections::HashMap;

use tree_sitter::{Node, Parser};

use super::places::{self, Harm};
use super::scan::Scan;
use super::word::{Field, Seg};

/// The most values one expression is followed with.
const MAX_VALUES: usize = 16;

/// How deep names are followed through assignments.
const MAX_NAME_DEPTH: usize = 8;

/// What an expression may evaluate to.
#[derive(Debug, Clone)]
enum Value {
    /// A string (or path), possibly with unknown parts.
    Str(Field),
    /// A list or tuple of such strings.
    List(Vec<Field>),
    /// Anything else.
    Unknown,
}

/// Reads `source` as Python.
pub(crate) fn read(scan: &mut Scan, source: &str) {
    let mut parser = Parser::new();
    if parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .is_err()
    {
        scan.block("oi could not load its Python parser, so it cannot check this code".into());
        return;
    }
    let Some(tree) = parser.parse(source, None) else {
        scan.block("oi could not parse this Python code to check it".into());
        return;
    };
    let root = tree.root_node();
    let mut reader = Reader {
        scan,
        src: source,
        aliases: HashMap::new(),
        names: HashMap::new(),
    };
    reader.collect(root);
    reader.check(root);
}

struct Reader<'s, 'p, 't> {
    scan: &'s mut Scan<'p>,
    src: &'s str,
    /// Local names of imported modules and functions → their qualified names.
    aliases: HashMap<String, String>,
    /// Names → the expressions assigned to them (anywhere in the block).
    names: HashMap<String, Vec<Binding<'t>>>,
}

/// How a name got its value.
#[derive(Clone, Copy)]
enum Binding<'t> {
    /// `name = expr`, `with expr as name`.
    Is(Node<'t>),
    /// `for name in expr`.
    ElementOf(Node<'t>),
}

impl<'t> Reader<'_, '_, 't> {
    fn text(&self, node: Node) -> &str {
        self.src.get(node.byte_range()).unwrap_or("")
    }

    /// First pass: imports and assignments.
    fn collect(&mut self, root: Node<'t>) {
        let mut stack = vec![root];
        while let Some(node) = stack.pop() {
            match node.kind() {
                "import_statement" => self.import(node, None),
                "import_from_statement" => {
                    let module = node
                        .child_by_field_name("module_name")
                        .map(|m| self.text(m).to_owned());
                    self.import(node, module);
                }
                "assignment" => {
                    if let (Some(left), Some(right)) = (
                        node.child_by_field_name("left"),
                        node.child_by_field_name("right"),
                    ) {
                        let right = innermost_value(right);
                        self.bind(left, Binding::Is(right));
                    }
                }
                "for_statement" | "for_in_clause" => {
                    if let (Some(left), Some(right)) = (
                        node.child_by_field_name("left"),
                        node.child_by_field_name("right"),
                    ) {
                        self.bind(left, Binding::ElementOf(right));
                    }
                }
                "as_pattern" => {
                    if let (Some(value), Some(alias)) =
                        (node.named_child(0), node.child_by_field_name("alias"))
                    {
                        self.bind(alias, Binding::Is(value));
                    }
                }
                _ => {}
            }
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
    }

    fn import(&mut self, node: Node, module: Option<String>) {
        let mut cursor = node.walk();
        for name in node.children_by_field_name("name", &mut cursor) {
            let (dotted, alias) = match name.kind() {
                "aliased_import" => (
                    name.child_by_field_name("name")
                        .map(|n| self.text(n).to_owned()),
                    name.child_by_field_name("alias")
                        .map(|n| self.text(n).to_owned()),
                ),
                _ => (Some(self.text(name).to_owned()), None),
            };
            let Some(dotted) = dotted else { continue };
            let qualified = match &module {
                Some(module) => format!("{module}.{dotted}"),
                None => dotted.clone(),
            };
            let local = alias.unwrap_or_else(|| match &module {
                Some(_) => dotted.clone(),
                None => dotted.split('.').next().unwrap_or(&dotted).to_owned(),
            });
            if module.is_some() || local != qualified {
                self.aliases.insert(local, qualified);
            }
        }
    }

    fn bind(&mut self, target: Node<'t>, binding: Binding<'t>) {
        let name = match target.kind() {
            "identifier" => self.text(target).to_owned(),
            "as_pattern_target" | "pattern_list" | "tuple_pattern" => match target.named_child(0) {
                Some(inner) if target.named_child_count() == 1 => {
                    return self.bind(inner, binding);
                }
                _ => return,
            },
            _ => return,
        };
        self.names.entry(name).or_default().push(binding);
    }

    /// Second pass: every call and loop.
    fn check(&mut self, root: Node<'t>) {
        let mut stack = vec![root];
        while let Some(node) = stack.pop() {
            match node.kind() {
                "call" => self.call(node),
                "while_statement" => self.endless_fork(node),
                _ => {}
            }
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
    }

    /// The qualified name of a callee (`sh.rmtree` → `shutil.rmtree` after `import shutil as sh`).
    fn qualified(&self, node: Node) -> Option<String> {
        match node.kind() {
            "identifier" => {
                let name = self.text(node);
                Some(
                    self.aliases
                        .get(name)
                        .cloned()
                        .unwrap_or_else(|| name.to_owned()),
                )
            }
            "attribute" => {
                let object = self.qualified(node.child_by_field_name("object")?)?;
                let attribute = self.text(node.child_by_field_name("attribute")?);
                Some(format!("{object}.{attribute}"))
            }
            _ => None,
        }
    }

    fn call(&mut self, node: Node<'t>) {
        let Some(function) = node.child_by_field_name("function") else {
            return;
        };
        let arguments = arguments(node);
        let keyword = |name: &str| keyword_argument(self.src, node, name);
        let name = self.qualified(function).unwrap_or_default();
        let method = (function.kind() == "attribute")
            .then(|| function.child_by_field_name("attribute"))
            .flatten()
            .map(|a| self.text(a).to_owned())
            .unwrap_or_default();
        let first = arguments.first().copied().or_else(|| keyword("path"));
        match name.as_str() {
            "shutil.rmtree"
            | "distutils.dir_util.remove_tree"
            | "setuptools.dir_util.remove_tree" => {
                if let Some(target) = first {
                    self.deleted(target, node);
                }
            }
            "os.system"
            | "os.popen"
            | "subprocess.getoutput"
            | "subprocess.getstatusoutput"
            | "commands.getoutput"
            | "commands.getstatusoutput"
            | "asyncio.create_subprocess_shell" => {
                if let Some(command) = first.or_else(|| keyword("cmd")) {
                    self.shell_string(command);
                }
            }
            "subprocess.run"
            | "subprocess.call"
            | "subprocess.check_call"
            | "subprocess.check_output"
            | "subprocess.Popen" => {
                let shell = keyword("shell").is_some_and(|v| self.text(v) != "False");
                if let Some(command) = first.or_else(|| keyword("args")) {
                    if shell {
                        self.shell_string(command);
                    } else {
                        self.argv(command);
                    }
                }
            }
            "asyncio.create_subprocess_exec"
            | "os.execl"
            | "os.execlp"
            | "os.execle"
            | "os.execlpe" => {
                let skip = usize::from(name.starts_with("os."));
                let fields: Vec<Field> = arguments
                    .iter()
                    .skip(skip)
                    .map(|a| self.string(*a))
                    .collect();
                self.scan.argv(&fields);
            }
            "os.execv" | "os.execve" | "os.execvp" | "os.execvpe" | "os.posix_spawn"
            | "os.posix_spawnp" => {
                if let Some(list) = arguments.get(1) {
                    self.argv(*list);
                }
            }
            "os.spawnv" | "os.spawnve" | "os.spawnvp" | "os.spawnvpe" => {
                if let Some(list) = arguments.get(2) {
                    self.argv(*list);
                }
            }
            "os.spawnl" | "os.spawnle" | "os.spawnlp" | "os.spawnlpe" => {
                let fields: Vec<Field> =
                    arguments.iter().skip(2).map(|a| self.string(*a)).collect();
                self.scan.argv(&fields);
            }
            "pty.spawn" => {
                if let Some(command) = first {
                    self.argv(command);
                }
            }
            "exec" | "eval" | "builtins.exec" | "builtins.eval" => {
                if let Some(code) = first {
                    self.python_string(code);
                }
            }
            "open" | "io.open" | "builtins.open" | "os.open" => {
                self.opened(
                    node,
                    &name,
                    first,
                    arguments.get(1).copied().or_else(|| keyword("mode")),
                );
            }
            _ if method == "rmtree" => {
                if let Some(object) = function.child_by_field_name("object") {
                    self.deleted(object, node);
                }
            }
            _ => {}
        }
    }

    /// A recursive delete of each value `target` may have.
    fn deleted(&mut self, target: Node, call: Node) {
        for value in self.values(target, 0) {
            let Value::Str(field) = value else { continue };
            if field.starts_unknown() {
                continue;
            }
            let pattern = places::pattern(&field.pattern_text(), self.cwd_pattern().as_ref());
            if let Some(what) = self.scan.places.protected(&pattern, Harm::Delete) {
                let shown = field.shown();
                let call = self.text(call);
                self.scan.block(if call.contains(&shown) {
                    format!("it recursively deletes {what} (`{call}`)")
                } else {
                    format!("it recursively deletes {what} (`{call}` deletes `{shown}`)")
                });
                return;
            }
        }
    }

    fn cwd_pattern(&self) -> Option<places::Pattern> {
        self.scan.places.cwd().map(|c| places::pattern(&c, None))
    }

    /// A string handed to the shell: read as a shell script.
    fn shell_string(&mut self, command: Node) {
        for value in self.values(command, 0) {
            match value {
                Value::Str(field)
                    if field.decoded() && field.known().is_none() && field.segs.len() == 1 =>
                {
                    self.scan.block(
                        "it hands decoded data to the shell (an encoded payload oi cannot read)"
                            .to_owned(),
                    );
                }
                Value::Str(field) => {
                    let env = super::shell::Env::new(self.scan.places);
                    self.scan.shell(&field.rendered(), env);
                }
                Value::List(fields) => {
                    if let Some(script) = fields.first() {
                        let env = super::shell::Env::new(self.scan.places);
                        self.scan.shell(&script.rendered(), env);
                    }
                }
                Value::Unknown => {}
            }
        }
    }

    /// An argument vector (`["rm", "-rf", "/"]`): read as one command.
    fn argv(&mut self, command: Node) {
        for value in self.values(command, 0) {
            match value {
                Value::List(fields) => self.scan.argv(&fields),
                Value::Str(field) => self.scan.argv(&[field]),
                Value::Unknown => {}
            }
        }
    }

    /// A string run as Python (`exec(...)`).
    fn python_string(&mut self, code: Node) {
        for value in self.values(code, 0) {
            if let Value::Str(field) = value {
                if field.decoded() {
                    self.scan.block(
                        "it runs decoded Python with exec (an encoded payload oi cannot read)"
                            .to_owned(),
                    );
                } else if let Some(code) = field.known() {
                    self.scan.python(&code);
                }
            }
        }
    }

    /// `open('/dev/sda', 'wb')`, `os.open('/dev/sda', os.O_WRONLY)`.
    fn opened(&mut self, call: Node, name: &str, path: Option<Node>, mode: Option<Node>) {
        let Some(path) = path else { return };
        let writes = match (name, mode) {
            ("os.open", Some(flags)) => {
                let flags = self.text(flags);
                flags.contains("O_WRONLY") || flags.contains("O_RDWR")
            }
            (_, Some(mode)) => self
                .values(mode, 0)
                .iter()
                .any(|v| matches!(v, Value::Str(f) if f.shown().contains(['w', 'a', '+', 'x']))),
            (_, None) => false,
        };
        if !writes {
            return;
        }
        for value in self.values(path, 0) {
            let Value::Str(field) = value else { continue };
            if !field.starts_unknown()
                && places::is_disk(&places::pattern(&field.pattern_text(), None))
            {
                self.scan.block(format!(
                    "it overwrites a disk device (`{}`)",
                    self.text(call)
                ));
                return;
            }
        }
    }

    /// `while True:` (or another constant true condition) whose body forks.
    fn endless_fork(&mut self, node: Node) {
        let endless = node.child_by_field_name("condition").is_some_and(|c| {
            let text = self.text(c).trim();
            match c.kind() {
                "true" => true,
                "integer" => !text.trim_start_matches(['0', '_']).is_empty(),
                "string" => text.len() > 2,
                _ => false,
            }
        });
        let Some(body) = node.child_by_field_name("body") else {
            return;
        };
        if endless && self.forks(body) {
            self.scan
                .block("it is a fork bomb (an endless loop that calls fork)".to_owned());
        }
    }

    fn forks(&self, body: Node) -> bool {
        let mut stack = vec![body];
        while let Some(node) = stack.pop() {
            if matches!(node.kind(), "function_definition" | "class_definition") {
                continue;
            }
            if node.kind() == "call" {
                let name = node
                    .child_by_field_name("function")
                    .and_then(|f| self.qualified(f));
                if matches!(name.as_deref(), Some("os.fork" | "os.forkpty" | "pty.fork")) {
                    return true;
                }
            }
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
        false
    }

    /// The first string value of `node` (an unknown field when it has none).
    fn string(&self, node: Node) -> Field {
        match self.values(node, 0).into_iter().next() {
            Some(Value::Str(field)) => field,
            _ => Field::unknown(self.text(node), false),
        }
    }

    /// What `node` may evaluate to.
    fn values(&self, node: Node, depth: usize) -> Vec<Value> {
        let mut values = self.values_inner(node, depth);
        values.truncate(MAX_VALUES);
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
            "identifier" => self.name(text, depth),
            "attribute" => match self.qualified(node).as_deref() {
                Some("os.sep" | "os.path.sep") => vec![Value::Str(Field::lit("/"))],
                Some("os.curdir" | "os.path.curdir") => vec![Value::Str(Field::lit("."))],
                Some("os.pardir" | "os.path.pardir") => vec![Value::Str(Field::lit(".."))],
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
                    _ => vec![Value::Unknown],
                }
            }
            "call" => self.call_value(node, depth),
            _ => vec![Value::Unknown],
        }
    }

    fn text_of_field(&self, node: Node, field: &str) -> String {
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
                Binding::ElementOf(node) => {
                    for value in self.values(*node, depth + 1) {
                        match value {
                            Value::List(items) => out.extend(items.into_iter().map(Value::Str)),
                            _ => out.push(Value::Unknown),
                        }
                    }
                }
            }
        }
        out
    }

    fn environment(&self, key: &str) -> Vec<Value> {
        let known = match key {
            "HOME" | "USERPROFILE" => self.scan.places.home(),
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
                    _ => Value::Unknown,
                });
            }
        }
        out
    }

    /// Applies `f` to the known text of each string value of `node`.
    fn map_str(&self, node: Option<Node>, depth: usize, f: impl Fn(&str) -> String) -> Vec<Value> {
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
        let home = self.scan.places.home();
        match name.as_str() {
            "os.path.expanduser" => self.map_str(first, depth, |t| expand_user(t, home.as_deref())),
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
                let parts: Vec<Field> = arguments.iter().map(|a| self.string(*a)).collect();
                vec![Value::Str(join_paths(&parts))]
            }
            "os.path.dirname" => self.map_str(first, depth, |t| format!("{t}/..")),
            "os.getcwd" | "os.getcwdb" | "pathlib.Path.cwd" | "Path.cwd" => {
                match self.scan.places.cwd() {
                    Some(cwd) => vec![Value::Str(Field::lit(&cwd))],
                    None => vec![Value::Unknown],
                }
            }
            "pathlib.Path.home" | "Path.home" => match home {
                Some(home) => vec![Value::Str(Field::lit(&home))],
                None => vec![Value::Unknown],
            },
            "os.getenv" | "os.environ.get" => match first {
                Some(key) => self.environment(&self.string(key).shown()),
                None => vec![Value::Unknown],
            },
            "tempfile.mkdtemp" | "tempfile.TemporaryDirectory" => {
                vec![Value::Str(Field::lit("/tmp/tmp.oi-mkdtemp"))]
            }
            "tempfile.gettempdir" => vec![Value::Str(Field::lit("/tmp"))],
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
                ("expanduser", Some(object)) => {
                    self.map_str(Some(object), depth, |t| expand_user(t, home.as_deref()))
                }
                (
                    "resolve" | "absolute" | "decode" | "encode" | "strip" | "rstrip" | "lstrip"
                    | "as_posix",
                    Some(object),
                ) => self.values(object, depth),
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
fn expand_user(text: &str, home: Option<&str>) -> String {
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
fn join_paths(parts: &[Field]) -> Field {
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

fn push_lit(field: &mut Field, text: &str) {
    if let Some(Seg::Lit(last)) = field.segs.last_mut() {
        last.push_str(text);
    } else {
        field.segs.push(Seg::Lit(text.to_owned()));
    }
}

fn unknown_seg(raw: &str) -> Seg {
    Seg::Unknown {
        raw: raw.to_owned(),
        decoded: false,
    }
}

/// The positional arguments of a call.
fn arguments(call: Node) -> Vec<Node> {
    let Some(list) = call.child_by_field_name("arguments") else {
        return Vec::new();
    };
    let mut cursor = list.walk();
    list.named_children(&mut cursor)
        .filter(|a| {
            !matches!(
                a.kind(),
                "keyword_argument" | "comment" | "list_splat" | "dictionary_splat"
            )
        })
        .collect()
}

/// The value of the keyword argument `name` of a call.
fn keyword_argument<'t>(src: &str, call: Node<'t>, name: &str) -> Option<Node<'t>> {
    let list = call.child_by_field_name("arguments")?;
    let mut cursor = list.walk();
    let found = list
        .named_children(&mut cursor)
        .filter(|a| a.kind() == "keyword_argument")
        .find(|a| {
            a.child_by_field_name("name")
                .and_then(|n| src.get(n.byte_range()))
                == Some(name)
        });
    found.and_then(|a| a.child_by_field_name("value"))
}

/// `a = b = expr`: the expression at the end of a chain of assignments.
fn innermost_value(node: Node) -> Node {
    let mut node = node;
    while node.kind() == "assignment" {
        match node.child_by_field_name("right") {
            Some(right) => node = right,
            None => break,
        }
    }
    node
}

/// Python string escapes: `\n`, `\t`, `\\`, `\'`, `\"`, `\xHH`, `\ooo`, `\uHHHH`, `\UHHHHHHHH`.
fn unescape_python(text: &str) -> String {
    super::shell::unescape_c(text)
}
