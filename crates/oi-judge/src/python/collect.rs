//! The first pass over a Python block: imports (local names of modules and functions),
//! assignments and loop variables (what names may hold), calls by name and as methods (what
//! a function's parameters may be), and names used as values (functions handed on).

use tree_sitter::Node;

use super::innermost_value;

/// The functions a `from MODULE import *` brings in by bare name that oi follows.
const STAR_NAMES: &[(&str, &[&str])] = &[
    (
        "os",
        &[
            "system",
            "popen",
            "remove",
            "unlink",
            "rmdir",
            "removedirs",
            "rename",
            "replace",
            "renames",
            "chmod",
            "lchmod",
            "chdir",
            "fchdir",
            "execv",
            "execve",
            "execvp",
            "execvpe",
            "execl",
            "execlp",
            "execle",
            "execlpe",
            "spawnv",
            "spawnl",
            "spawnvp",
            "spawnlp",
            "posix_spawn",
            "posix_spawnp",
            "symlink",
            "fork",
            "walk",
            "listdir",
            "scandir",
            "getcwd",
            "environ",
            "putenv",
            "getenv",
            "open",
            "fwalk",
        ],
    ),
    ("shutil", &["rmtree", "move", "copytree", "chown"]),
    (
        "subprocess",
        &[
            "run",
            "call",
            "check_call",
            "check_output",
            "Popen",
            "getoutput",
            "getstatusoutput",
        ],
    ),
    (
        "pathlib",
        &["Path", "PosixPath", "PurePath", "PurePosixPath"],
    ),
    (
        "os.path",
        &[
            "join",
            "expanduser",
            "expandvars",
            "abspath",
            "realpath",
            "dirname",
        ],
    ),
    ("glob", &["glob", "iglob"]),
    ("tempfile", &["mkdtemp", "TemporaryDirectory", "gettempdir"]),
];
use super::reader::{Binding, Reader};

impl<'t> Reader<'_, '_, 't> {
    /// First pass: imports and assignments.
    pub(super) fn collect(&mut self, root: Node<'t>) {
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
                    self.home_assignment(node);
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
                "call" => match node.child_by_field_name("function") {
                    Some(f) if self.changes_home(f) => self.home_changed = true,
                    Some(f) if f.kind() == "identifier" => {
                        let name = self.text(f).to_owned();
                        self.calls.entry(name).or_default().push(node);
                    }
                    Some(f) if f.kind() == "attribute" => {
                        if let Some(method) = f.child_by_field_name("attribute") {
                            let name = self.text(method).to_owned();
                            self.method_calls.entry(name).or_default().push(node);
                        }
                    }
                    _ => {}
                },
                // `map(self.run, …)`: a method handed on as a value.
                "attribute" => {
                    let called = node
                        .parent()
                        .and_then(|p| p.child_by_field_name("function"))
                        .is_some_and(|f| f.id() == node.id());
                    if let Some(name) = node.child_by_field_name("attribute").filter(|_| !called) {
                        self.referenced.insert(self.text(name).to_owned());
                    }
                }
                "identifier" => {
                    let called = node
                        .parent()
                        .and_then(|p| p.child_by_field_name("function"))
                        .is_some_and(|f| f.id() == node.id());
                    // Not a value: a definition's or parameter's name, an attribute's name
                    // (`subprocess.run`), a keyword (`cwd=`), an imported name.
                    let named = node.parent().is_some_and(|p| {
                        let field = |f: &str| {
                            p.child_by_field_name(f)
                                .is_some_and(|n| n.id() == node.id())
                        };
                        match p.kind() {
                            "function_definition"
                            | "class_definition"
                            | "keyword_argument"
                            | "default_parameter"
                            | "typed_default_parameter" => field("name"),
                            "attribute" => field("attribute"),
                            "parameters"
                            | "typed_parameter"
                            | "dotted_name"
                            | "aliased_import"
                            | "list_splat_pattern"
                            | "dictionary_splat_pattern" => true,
                            _ => false,
                        }
                    });
                    if !called && !named {
                        self.referenced.insert(self.text(node).to_owned());
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

    /// `os.environ['HOME'] = …` (or `del`, augmented): `HOME` is no longer known.
    fn home_assignment(&mut self, node: Node) {
        let Some(left) = node.child_by_field_name("left") else {
            return;
        };
        if !self.text(left).contains("environ") {
            return;
        }
        // `os.environ['PATH'] = …` leaves HOME alone; any other key may be HOME.
        let other_key = left.kind() == "subscript"
            && left
                .child_by_field_name("subscript")
                .is_some_and(|k| k.kind() == "string" && !self.text(k).contains("HOME"));
        if !other_key {
            self.home_changed = true;
        }
    }

    /// `os.putenv('HOME', …)`, `os.environ.update(…)`, `os.environ.setdefault(…)`, …
    fn changes_home(&self, function: Node) -> bool {
        let text = self.text(function);
        let name = self.qualified(function).unwrap_or_default();
        let method = text.rsplit('.').next().unwrap_or("");
        name.ends_with("putenv")
            || name.ends_with("unsetenv")
            || (text.contains("environ")
                && matches!(
                    method,
                    "update" | "setdefault" | "pop" | "clear" | "__setitem__" | "popitem"
                ))
    }

    /// `from shutil import *`: the module's functions that delete, move or run commands are
    /// known by their bare names.
    fn star_import(&mut self, module: &str) {
        if !STAR_NAMES.iter().any(|(owner, _)| *owner == module) {
            self.star_unknown = true;
        }
        for (owner, names) in STAR_NAMES {
            if *owner == module {
                for name in *names {
                    self.aliases
                        .insert((*name).to_owned(), format!("{module}.{name}"));
                }
            }
        }
    }

    fn import(&mut self, node: Node, module: Option<String>) {
        if let Some(module) = &module {
            let mut cursor = node.walk();
            let star = node
                .named_children(&mut cursor)
                .any(|c| c.kind() == "wildcard_import");
            if star {
                self.star_import(module);
            }
        }
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
            // `import a.b` binds `a` to the package `a` itself.
            let plain_dotted = module.is_none() && alias.is_none();
            let local = alias.unwrap_or_else(|| match &module {
                Some(_) => dotted.clone(),
                None => dotted.split('.').next().unwrap_or(&dotted).to_owned(),
            });
            if !plain_dotted && (module.is_some() || local != qualified) {
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
                // `for root, dirs, files in os.walk(D)`: each name is one part of each element.
                _ => {
                    if let Binding::ElementOf(iterable) = binding {
                        let mut cursor = target.walk();
                        let parts: Vec<Node<'t>> = target.named_children(&mut cursor).collect();
                        for (n, part) in parts.into_iter().enumerate() {
                            self.bind(part, Binding::PartOf(iterable, n));
                        }
                    }
                    return;
                }
            },
            _ => return,
        };
        self.names.entry(name).or_default().push(binding);
    }
}
