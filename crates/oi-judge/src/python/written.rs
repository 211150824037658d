//! Files the block writes and then runs or imports (`open('/tmp/m.py', 'w').write(CODE)` then
//! `import m`, or `subprocess.run(['python3', '/tmp/q.py'])`): the code written is read as
//! what runs when oi can evaluate it, and is "cannot tell" when it cannot. A module imported
//! from a directory the block adds to `sys.path` (it may have been written by an earlier
//! block) is one oi cannot read either.

use tree_sitter::Node;

use crate::env::Env;
use crate::word::Field;

use super::reader::{Binding, Reader, Value, Written, arguments};

/// Modules that are not written by the block: the standard library's and common packages'.
const KNOWN_MODULES: &[&str] = &[
    "os",
    "sys",
    "re",
    "json",
    "math",
    "time",
    "datetime",
    "shutil",
    "subprocess",
    "pathlib",
    "glob",
    "tempfile",
    "io",
    "csv",
    "random",
    "string",
    "typing",
    "collections",
    "itertools",
    "functools",
    "logging",
    "argparse",
    "hashlib",
    "base64",
    "urllib",
    "http",
    "socket",
    "threading",
    "multiprocessing",
    "asyncio",
    "statistics",
    "textwrap",
    "unittest",
    "pprint",
    "copy",
    "dataclasses",
    "enum",
    "decimal",
    "fractions",
    "struct",
    "zipfile",
    "tarfile",
    "gzip",
    "sqlite3",
    "uuid",
    "platform",
    "signal",
    "traceback",
    "inspect",
    "importlib",
    "contextlib",
    "warnings",
    "numpy",
    "pandas",
    "matplotlib",
    "scipy",
    "requests",
    "site",
    "shlex",
    "stat",
    "errno",
    "locale",
    "calendar",
    "heapq",
    "bisect",
    "operator",
    "types",
    "weakref",
    "abc",
    "queue",
    "select",
    "selectors",
    "email",
    "html",
    "xml",
    "codecs",
];

impl<'t> Reader<'_, '_, 't> {
    /// First pass over the block: the files it writes with literal paths, and whether it
    /// changes `sys.path`.
    pub(super) fn find_written(&mut self, root: Node<'t>) {
        let mut stack = vec![root];
        while let Some(node) = stack.pop() {
            if !self.scan.charge(1) {
                return;
            }
            match node.kind() {
                "call" => self.writing_call(node),
                "assignment" | "augmented_assignment" => {
                    let left = node
                        .child_by_field_name("left")
                        .map(|l| self.text(l))
                        .unwrap_or_default();
                    let (path, argv) = (left.starts_with("sys.path"), left.contains("argv"));
                    self.sys_path_changed |= path;
                    self.argv_changed |= argv;
                }
                _ => {}
            }
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
    }

    fn writing_call(&mut self, call: Node<'t>) {
        let Some(function) = call.child_by_field_name("function") else {
            return;
        };
        let name = self.qualified(function).unwrap_or_default();
        if self.text(function).contains("argv.") || name.starts_with("sys.argv.") {
            self.argv_changed = true;
        }
        if name.starts_with("sys.path.") || name == "site.addsitedir" {
            self.sys_path_changed = true;
            return;
        }
        let method = if function.kind() == "attribute" {
            self.text_of_field(function, "attribute")
        } else {
            String::new()
        };
        let Some(object) = function.child_by_field_name("object") else {
            return;
        };
        let first = arguments(call).first().copied();
        let (paths, content) = match method.as_str() {
            "write_text" | "write_bytes" => (self.values(object, 0), first),
            "write" | "writelines" => match self.opened_path(object, 0) {
                Some(path) => (self.values(path, 0), first),
                None => return,
            },
            _ => return,
        };
        let content = content.and_then(|c| match self.values(c, 0).as_slice() {
            [Value::Str(field)] => field.known(),
            _ => None,
        });
        for path in paths {
            let path = match path {
                Value::Str(field) => field.known().unwrap_or_else(|| field.shown()),
                _ => continue,
            };
            self.written.push(Written {
                path,
                content: content.clone(),
            });
        }
    }

    /// The path `open(PATH, 'w')` (or a name bound to one) opens for writing.
    fn opened_path(&self, node: Node<'t>, depth: usize) -> Option<Node<'t>> {
        if depth > 4 {
            return None;
        }
        match node.kind() {
            "call" => {
                let function = node.child_by_field_name("function")?;
                let name = self.qualified(function).unwrap_or_default();
                let method = self.text_of_field(function, "attribute");
                if matches!(name.as_str(), "open" | "io.open" | "builtins.open") {
                    return arguments(node).first().copied();
                }
                if method == "open" {
                    return function.child_by_field_name("object");
                }
                None
            }
            "identifier" => {
                let bindings = self.names.get(self.text(node))?;
                bindings.iter().find_map(|binding| match binding {
                    Binding::Is(value) => self.opened_path(*value, depth + 1),
                    _ => None,
                })
            }
            _ => None,
        }
    }

    /// `import NAME` (statement, `importlib.import_module`, `__import__`): the code of a
    /// module the block wrote is read; one from a directory it added to `sys.path` is unknown.
    pub(super) fn imported(&mut self, module: &str) {
        let top = module.split('.').next().unwrap_or(module);
        let file = format!("{top}.py");
        let written: Vec<Written> = self
            .written
            .iter()
            .filter(|w| {
                let base = w.path.rsplit('/').next().unwrap_or(&w.path);
                base == file || w.path.split('/').any(|c| c == top)
            })
            .cloned()
            .collect();
        if !written.is_empty() {
            self.run_written(&written, true);
            return;
        }
        if self.sys_path_changed && !KNOWN_MODULES.contains(&top) {
            self.unsure(
                "imports a module from a directory it adds to sys.path, which oi does not read",
            );
        }
    }

    /// Whether the block writes `path` (as written in the code).
    pub(super) fn wrote(&self, path: &str) -> bool {
        self.written.iter().any(|w| w.path == path)
    }

    /// A file the block wrote, loaded as a module.
    pub(super) fn imported_file(&mut self, path: &str) {
        let written: Vec<Written> = self
            .written
            .iter()
            .filter(|w| w.path == path)
            .cloned()
            .collect();
        self.run_written(&written, true);
    }

    /// The import statements of `node` (an `import_statement` or `import_from_statement`).
    pub(super) fn import_statement(&mut self, node: Node) {
        let modules: Vec<String> = if node.kind() == "import_from_statement" {
            node.child_by_field_name("module_name")
                .map(|m| self.text(m).to_owned())
                .into_iter()
                .collect()
        } else {
            let mut cursor = node.walk();
            node.children_by_field_name("name", &mut cursor)
                .map(|n| {
                    let n = if n.kind() == "aliased_import" {
                        n.child_by_field_name("name").unwrap_or(n)
                    } else {
                        n
                    };
                    self.text(n).to_owned()
                })
                .collect()
        };
        for module in modules {
            if !module.starts_with('.') {
                self.imported(&module);
            }
        }
    }

    /// The shell environment a command the block runs starts in, from one of `cwds`: the
    /// files the block wrote are known to it (`subprocess.run(['sh', '/tmp/q.sh'])` reads what
    /// was written there).
    pub(super) fn shell_env(&self, cwds: &[Option<String>]) -> Env {
        let mut env = Env::in_dirs(self.scan.places, cwds);
        if self.home_changed {
            // The block set HOME: the shell it starts expands `~` and `$HOME` to that.
            let unknown = vec![crate::word::Seg::Unknown {
                raw: "$HOME".to_owned(),
                decoded: false,
            }];
            env.vars.insert("HOME".to_owned(), vec![unknown]);
        }
        for file in &self.written {
            let mut paths = Vec::new();
            if file.path.starts_with('/') {
                paths.push(file.path.clone());
            } else {
                for cwd in cwds.iter().flatten() {
                    paths.push(format!("{}/{}", cwd.trim_end_matches('/'), file.path));
                }
                if cwds.iter().any(Option::is_none) {
                    env.wrote_unknown = true;
                }
            }
            for path in paths {
                let path = normal(&path);
                env.files.insert(path, file.content.clone());
            }
        }
        env
    }

    /// Runs the argument vector `argv` from one of `cwds`, knowing the files the block wrote.
    pub(super) fn run_argv(&mut self, argv: &[Field], cwds: &[Option<String>]) {
        if self.written.is_empty() && !self.home_changed {
            self.scan.argv(argv, cwds);
            return;
        }
        let script: Vec<String> = argv
            .iter()
            .map(|field| format!("'{}'", field.rendered().replace('\'', "'\\''")))
            .collect();
        let env = self.shell_env(cwds);
        self.scan.shell(&script.join(" "), env);
    }

    fn run_written(&mut self, written: &[Written], python: bool) {
        for file in written {
            match &file.content {
                Some(code) if python || file.path.ends_with(".py") => {
                    let cwds = self.cwds.clone();
                    self.scan.python(code, &cwds);
                }
                Some(code) => self.scan.foreign(code),
                None => self.unsure("runs a file it writes with contents oi cannot read"),
            }
        }
    }
}

/// `path` with `.` and `..` components and repeated slashes removed (lexically).
fn normal(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            name => out.push(name),
        }
    }
    format!("/{}", out.join("/"))
}
