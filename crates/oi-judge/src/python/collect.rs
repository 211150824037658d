//! The first pass over a Python block: imports (local names of modules and functions),
//! assignments and loop variables (what names may hold), calls by name and as methods (what
//! a function's parameters may be), and names used as values (functions handed on).

use tree_sitter::Node;

use super::innermost_value;
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
}
