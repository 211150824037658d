//! Where Python code is when it runs what it runs. The block starts in the working directory
//! it is given; `os.chdir` (and `contextlib.chdir`, IPython's `%cd`) of a path oi can
//! evaluate adds the directory it leads to, and every later relative path may be relative to
//! any of them. A change oi cannot follow — a computed path, `os.fchdir`, a relative change
//! in a loop or a function (it may repeat), `os.chdir` passed around as a value, or Python
//! run with `exec` that changes directory — adds an unknown directory: relative paths are
//! then unknown places. `subprocess.run(…, cwd=P)` runs its command in `P`, followed the same
//! way.

use tree_sitter::Node;

use super::reader::{Reader, Value, arguments};
use crate::resolve;

/// Functions that change the working directory to their first argument.
const CHDIRS: &[&str] = &["os.chdir", "posix.chdir", "contextlib.chdir", "os.fchdir"];

/// The most directories followed; past it, the block may be anywhere.
const MAX_DIRECTORIES: usize = 8;

/// Nodes whose body may run more than once (or never, or later).
const REPEATING: &[&str] = &[
    "for_statement",
    "while_statement",
    "function_definition",
    "lambda",
    "list_comprehension",
    "set_comprehension",
    "dictionary_comprehension",
    "generator_expression",
    "class_definition",
];

impl<'t> Reader<'_, '_, 't> {
    /// Follows the block's changes of directory in the order they are written (see the
    /// module's documentation).
    pub(super) fn follow_chdirs(&mut self, root: Node<'t>) {
        let mut stack = vec![root];
        while let Some(node) = stack.pop() {
            if !self.scan.charge(1) {
                return;
            }
            match node.kind() {
                "call" => self.chdir_call(node),
                "identifier" | "attribute" => self.chdir_reference(node),
                _ => {}
            }
            let mut cursor = node.walk();
            let children: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
            stack.extend(children.into_iter().rev());
        }
    }

    /// The directories `call`, with the keyword argument `cwd` (given as `dir`), runs in; a
    /// `**mapping` may hold a `cwd` oi cannot see.
    pub(super) fn call_cwds(&self, call: Node, dir: Option<Node>) -> Vec<Option<String>> {
        let Some(dir) = dir else {
            let splat = call.child_by_field_name("arguments").is_some_and(|list| {
                let mut cursor = list.walk();
                list.named_children(&mut cursor)
                    .any(|a| a.kind() == "dictionary_splat")
            });
            return if splat { vec![None] } else { self.cwds.clone() };
        };
        if self.text(dir) == "None" {
            return self.cwds.clone();
        }
        let mut out = Vec::new();
        for target in self.directories(dir) {
            for cwd in &self.cwds {
                let new = match target.as_deref() {
                    Some(t) => resolve::resolve_dirs(t, cwd.as_deref()),
                    None => vec![None],
                };
                for dir in new {
                    if !out.contains(&dir) {
                        out.push(dir);
                    }
                }
            }
        }
        if out.is_empty() || out.len() > MAX_DIRECTORIES {
            return vec![None];
        }
        out
    }

    /// `os.chdir(P)`, or `exec` of code that changes directory.
    fn chdir_call(&mut self, call: Node) {
        let Some(function) = call.child_by_field_name("function") else {
            return;
        };
        let name = self.qualified(function).unwrap_or_default();
        let runs = name
            .trim_start_matches("builtins.")
            .trim_start_matches("__builtins__.");
        if matches!(runs, "exec" | "eval") {
            let changes = arguments(call).first().is_some_and(|code| {
                self.values(*code, 0).iter().any(|v| match v {
                    Value::Str(field) => field.shown().contains("chdir"),
                    _ => false,
                })
            });
            if changes {
                self.enter_directories(vec![None]);
            }
            return;
        }
        if !CHDIRS.contains(&name.as_str()) {
            return;
        }
        let path = arguments(call)
            .first()
            .copied()
            .or_else(|| super::keyword_argument(self.src, call, "path"));
        let repeats = self.repeats(call);
        let targets = match path {
            Some(path) if name != "os.fchdir" => self.directories(path),
            _ => vec![None],
        };
        let mut new = Vec::new();
        for target in targets {
            let relative = target.as_deref().is_some_and(|t| !t.starts_with('/'));
            if target.is_none() || (relative && repeats) {
                new.push(None);
                continue;
            }
            if let Some(target) = target.as_deref() {
                for cwd in &self.cwds {
                    new.extend(resolve::resolve_dirs(target, cwd.as_deref()));
                }
            }
        }
        self.enter_directories(new);
    }

    /// `os.chdir` used other than by calling it (`f = os.chdir`, `map(os.chdir, dirs)`):
    /// the block may go anywhere.
    fn chdir_reference(&mut self, node: Node) {
        let called = node
            .parent()
            .filter(|p| p.kind() == "call")
            .and_then(|p| p.child_by_field_name("function"))
            .is_some_and(|f| f.id() == node.id());
        let part_of_name = node.parent().is_some_and(|p| match p.kind() {
            "attribute" | "dotted_name" => true,
            "keyword_argument" => p
                .child_by_field_name("name")
                .is_some_and(|n| n.id() == node.id()),
            _ => false,
        });
        if called || part_of_name {
            return;
        }
        let name = self.qualified(node).unwrap_or_default();
        if CHDIRS.contains(&name.as_str()) {
            self.enter_directories(vec![None]);
        }
    }

    /// The directories `node` may name (`None`: one oi cannot know).
    fn directories(&self, node: Node) -> Vec<Option<String>> {
        self.values(node, 0)
            .into_iter()
            .map(|value| match value {
                Value::Str(field) => field.known(),
                _ => None,
            })
            .collect()
    }

    /// Whether `node` is inside code that may run more than once.
    fn repeats(&self, node: Node) -> bool {
        let mut at = node.parent();
        while let Some(parent) = at {
            if REPEATING.contains(&parent.kind()) {
                return true;
            }
            at = parent.parent();
        }
        false
    }

    fn enter_directories(&mut self, new: Vec<Option<String>>) {
        for dir in new {
            if !self.cwds.contains(&dir) {
                self.cwds.push(dir);
            }
        }
        if self.cwds.len() > MAX_DIRECTORIES {
            self.cwds = vec![None];
        }
    }
}
