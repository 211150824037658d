//! Python that reaches functions by name at run time (`getattr(os, 'sys'+'tem')`,
//! `__import__('o'+'s')`, `importlib.import_module`, `vars(os)[…]`, `ctypes`), loops that
//! never end while they fork.
//!
//! A dynamic lookup whose name oi can evaluate is followed like the plain call; one it
//! cannot evaluate (or `ctypes`, which calls into C) makes the reading "cannot tell".

use tree_sitter::Node;

use crate::scan::Limit;

use super::reader::{Binding, Reader, Value, arguments};

/// Modules whose functions run commands, delete files or fork.
const POWERFUL: &[&str] = &[
    "os",
    "posix",
    "nt",
    "shutil",
    "subprocess",
    "pty",
    "ctypes",
    "builtins",
    "importlib",
    "multiprocessing",
    "pathlib",
    "__builtins__",
    "runpy",
];

impl<'t> Reader<'_, '_, 't> {
    /// The module or function a dynamic lookup names (`__import__('os')` → `os`,
    /// `getattr(os, 'system')` → `os.system`); marks the reading unsure when the name cannot
    /// be evaluated.
    pub(super) fn dynamic_name(&self, node: Node, depth: usize) -> Option<String> {
        match node.kind() {
            "call" => {
                let function = node.child_by_field_name("function")?;
                let name = self.qualified_at(function, depth + 1)?;
                let arguments = arguments(node);
                match name.as_str() {
                    "__import__" | "builtins.__import__" | "importlib.import_module" => {
                        let module = self.known_string(*arguments.first()?);
                        if module.is_none() {
                            self.unsure("imports a module whose name is computed at run time");
                        }
                        module
                    }
                    "getattr" | "builtins.getattr" => {
                        let object = self.qualified_at(*arguments.first()?, depth + 1)?;
                        let attribute = arguments.get(1).and_then(|a| self.known_string(*a));
                        let root = object.split('.').next().unwrap_or(&object);
                        match attribute {
                            Some(attribute) => Some(format!("{object}.{attribute}")),
                            None if POWERFUL.contains(&root) => {
                                self.unsure("looks up a function of a powerful module by a name computed at run time (getattr)");
                                None
                            }
                            None => None,
                        }
                    }
                    _ => None,
                }
            }
            "identifier" => {
                let bindings = self.names.get(self.text(node))?;
                match bindings.as_slice() {
                    [Binding::Is(value)] if depth < 4 && value.kind() == "call" => {
                        self.dynamic_name(*value, depth + 1)
                    }
                    // `e = exec`, `f = os.chdir`, `r = shutil.rmtree`: the name is the function.
                    [Binding::Is(value)]
                        if depth < 4 && matches!(value.kind(), "identifier" | "attribute") =>
                    {
                        self.qualified_at(*value, depth + 1)
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The one known string `node` evaluates to.
    pub(super) fn known_string(&self, node: Node) -> Option<String> {
        match self.values(node, 0).as_slice() {
            [Value::Str(field)] => field.known(),
            _ => None,
        }
    }

    /// Marks the reading "cannot tell".
    pub(super) fn unsure(&self, what: &'static str) {
        self.scan.exceed(Limit::Dynamic(what));
    }

    /// Calls oi cannot follow: through `ctypes`, or a function taken out of a module's
    /// namespace (`vars(os)[…]`, `os.__dict__[…]`, `globals()[…]`).
    pub(super) fn opaque_call(&self, call: Node, name: &str) {
        if name == "ctypes" || name.starts_with("ctypes.") {
            self.unsure("calls C functions through ctypes");
            return;
        }
        let Some(function) = call.child_by_field_name("function") else {
            return;
        };
        if function.kind() != "subscript" {
            return;
        }
        let Some(value) = function.child_by_field_name("value") else {
            return;
        };
        let namespace = match value.kind() {
            "attribute" => value
                .child_by_field_name("attribute")
                .is_some_and(|a| self.text(a) == "__dict__"),
            "call" => value
                .child_by_field_name("function")
                .is_some_and(|f| matches!(self.text(f), "vars" | "globals" | "locals" | "dir")),
            _ => false,
        };
        if namespace {
            self.unsure(
                "calls a function taken out of a namespace by name (vars, __dict__, globals)",
            );
        }
    }

    /// Whether the `for` loop's iterable never ends (`itertools.count()`, `cycle`, `repeat(x)`,
    /// `iter(f, sentinel)`).
    pub(super) fn endless_iterable(&self, iterable: Node) -> bool {
        if iterable.kind() != "call" {
            return false;
        }
        let Some(name) = iterable
            .child_by_field_name("function")
            .and_then(|f| self.qualified(f))
        else {
            return false;
        };
        let count = arguments(iterable).len();
        match name.as_str() {
            "itertools.count" | "itertools.cycle" => true,
            "itertools.repeat" => count == 1,
            "iter" | "builtins.iter" => count == 2,
            _ => false,
        }
    }
}
