//! Loops that delete what they list. A loop (or comprehension) whose iterable comes from a
//! listing of a directory (`os.walk`, `os.listdir`, `os.scandir`, `glob`, `Path.rglob`/
//! `glob`/`iterdir`/`walk`, followed through names, `list(…)`, `sorted(…)`, the parts of a
//! walk's elements) and whose body deletes, empties (`open(…, 'w')`), moves or locks what it
//! finds — directly or through a function of the block it calls — does that to the directory.
//! A test of the entry's name against a literal before the effect (`if f.endswith('.tmp')`,
//! `if d == '__pycache__'`) narrows it, like `find -name`. A loop over something oi cannot
//! evaluate whose body does such a thing is one oi cannot tell.

use tree_sitter::Node;

use super::reader::{Binding, Reader, Value, arguments};
use super::targets::Effect;

/// Calls that delete or empty the path they are given.
const DELETERS: &[&str] = &[
    "os.remove",
    "os.unlink",
    "os.rmdir",
    "os.removedirs",
    "os.truncate",
    "shutil.rmtree",
    "pathlib.Path.unlink",
    "pathlib.Path.rmdir",
    "os.rename",
    "os.replace",
    "os.renames",
    "shutil.move",
    "os.chmod",
    "os.lchmod",
];

/// Methods that delete, empty, move or lock their object (`p.unlink()`).
const DELETING_METHODS: &[&str] = &[
    "unlink",
    "rmdir",
    "rmtree",
    "write_text",
    "write_bytes",
    "chmod",
];

/// Calls that list a directory tree (their first argument is the directory, `.` without one).
const WALKERS: &[&str] = &[
    "os.walk",
    "os.fwalk",
    "os.listdir",
    "os.scandir",
    "glob.glob",
    "glob.iglob",
];

/// Methods that list the tree under their object (`Path.home().rglob('*')`).
const WALKING_METHODS: &[&str] = &["rglob", "glob", "iterdir", "walk"];

/// Calls whose elements are those of their first argument.
const WRAPPERS: &[&str] = &[
    "list",
    "sorted",
    "reversed",
    "tuple",
    "set",
    "iter",
    "enumerate",
];

/// Where a loop's elements come from.
enum Origin<'t> {
    /// A listing of a directory (`None`: the working directory), narrowed by its pattern.
    Walk(Option<Node<'t>>, bool),
    /// Numbers (`range`).
    Numbers,
    /// Anything else.
    Other,
}

impl<'t> Reader<'_, '_, 't> {
    /// A loop over `iterable` whose `body` deletes (see the module's documentation).
    pub(super) fn walk_delete(&mut self, iterable: Node<'t>, body: Node<'t>, at: Node<'t>) {
        let mut effects = Vec::new();
        self.effects_in(body, at, 0, &mut effects);
        // Only effects on what the loop yields count (`os.remove(os.path.join(r, f))`, not
        // `open('log.txt', 'w')` once per entry).
        let vars = self.loop_names(at, body);
        // A function of the block may use them through globals: its calls always count.
        effects.retain(|call| {
            mentions(self.src, *call, &vars)
                || call
                    .child_by_field_name("function")
                    .filter(|f| f.kind() == "identifier")
                    .is_some_and(|f| self.definition(self.text(f), at).is_some())
        });
        if effects.is_empty() || effects.iter().all(|call| self.narrowed(*call)) {
            return;
        }
        match self.origin(iterable, 0) {
            Origin::Walk(_, true) | Origin::Numbers => {}
            Origin::Walk(Some(directory), false) => self.deleted(directory, at),
            Origin::Walk(None, false) => {
                let cwds = self.cwds.clone();
                let here = vec![Value::Str(crate::word::Field::lit("."))];
                self.harmed_values(here, at, &cwds, Effect::Delete);
            }
            Origin::Other => {
                let unknown = self
                    .elements(iterable, 0)
                    .iter()
                    .any(|v| !matches!(v, Value::Str(_)));
                if unknown {
                    self.unsure(
                        "deletes, empties or moves in a loop over something computed at run time",
                    );
                }
            }
        }
    }

    /// The names a loop binds, and those assigned in its body from them (`q = os.path.join(p,
    /// f)`), twice over.
    fn loop_names(&self, at: Node, body: Node) -> Vec<String> {
        let mut names = Vec::new();
        if let Some(left) = at.child_by_field_name("left") {
            identifiers(self.src, left, &mut names);
        }
        for _ in 0..2 {
            let mut stack = vec![body];
            while let Some(node) = stack.pop() {
                let assigned = match node.kind() {
                    "assignment" | "augmented_assignment" => node
                        .child_by_field_name("right")
                        .filter(|r| mentions(self.src, *r, &names))
                        .and(node.child_by_field_name("left")),
                    "for_statement" | "for_in_clause" | "with_item" | "as_pattern" => {
                        let source = node
                            .child_by_field_name("right")
                            .or_else(|| node.named_child(0));
                        source.filter(|r| mentions(self.src, *r, &names)).and(
                            node.child_by_field_name("left")
                                .or_else(|| node.child_by_field_name("alias")),
                        )
                    }
                    _ => None,
                };
                if let Some(left) = assigned {
                    identifiers(self.src, left, &mut names);
                }
                let mut cursor = node.walk();
                stack.extend(node.named_children(&mut cursor));
            }
        }
        names
    }

    /// Where the elements of `iterable` come from.
    fn origin(&self, iterable: Node<'t>, depth: usize) -> Origin<'t> {
        if depth > 8 {
            return Origin::Other;
        }
        match iterable.kind() {
            "parenthesized_expression" => match iterable.named_child(0) {
                Some(inner) => self.origin(inner, depth + 1),
                None => Origin::Other,
            },
            // `[f for f in os.listdir('.') if f.endswith('.log')]`: what it loops over,
            // narrowed by its tests.
            "list_comprehension" | "generator_expression" | "set_comprehension" => {
                let mut cursor = iterable.walk();
                let children: Vec<Node<'t>> = iterable.named_children(&mut cursor).collect();
                let narrowed = children.iter().any(|c| {
                    c.kind() == "if_clause" && c.named_child(0).is_some_and(|t| self.narrows(t, 0))
                });
                let source = children
                    .iter()
                    .find(|c| c.kind() == "for_in_clause")
                    .and_then(|c| c.child_by_field_name("right"));
                match source.map(|s| self.origin(s, depth + 1)) {
                    Some(Origin::Walk(dir, by_pattern)) => {
                        Origin::Walk(dir, by_pattern || narrowed)
                    }
                    Some(Origin::Numbers) => Origin::Numbers,
                    _ => Origin::Other,
                }
            }
            "identifier" => {
                let Some(bindings) = self.names.get(self.text(iterable)) else {
                    return Origin::Other;
                };
                for binding in bindings {
                    let from = match binding {
                        Binding::Is(value) => self.origin(*value, depth + 1),
                        Binding::ElementOf(value) | Binding::PartOf(value, _) => {
                            self.origin(*value, depth + 1)
                        }
                    };
                    if let Origin::Walk(..) = from {
                        return from;
                    }
                }
                Origin::Other
            }
            "call" => {
                let Some(function) = iterable.child_by_field_name("function") else {
                    return Origin::Other;
                };
                let arguments = arguments(iterable);
                let name = self.qualified(function).unwrap_or_default();
                let bare = name.trim_start_matches("builtins.");
                if WALKERS.contains(&name.as_str()) {
                    return Origin::Walk(arguments.first().copied(), false);
                }
                if matches!(bare, "range") {
                    return Origin::Numbers;
                }
                if WRAPPERS.contains(&bare) {
                    return match arguments.first() {
                        Some(first) => self.origin(*first, depth + 1),
                        None => Origin::Other,
                    };
                }
                let method = (function.kind() == "attribute")
                    .then(|| function.child_by_field_name("attribute"))
                    .flatten()
                    .map(|m| self.text(m))
                    .unwrap_or_default();
                if !WALKING_METHODS.contains(&method) {
                    return Origin::Other;
                }
                let narrowed = arguments
                    .first()
                    .and_then(|p| self.known_string(*p))
                    .is_some_and(|p| !crate::places::wildcard_all(p.trim_start_matches("**/")));
                match function.child_by_field_name("object") {
                    Some(object) => Origin::Walk(Some(object), narrowed),
                    None => Origin::Other,
                }
            }
            _ => Origin::Other,
        }
    }

    /// The calls in `body` that delete, empty, move or lock a path, directly or through a
    /// function of the block (the call of that function is listed).
    fn effects_in(&self, body: Node<'t>, at: Node<'t>, depth: usize, out: &mut Vec<Node<'t>>) {
        let mut stack = vec![body];
        while let Some(node) = stack.pop() {
            if !self.scan.charge(1) {
                return;
            }
            if node.kind() == "call" && self.has_effect(node, at, depth) {
                out.push(node);
            }
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
    }

    fn has_effect(&self, call: Node<'t>, at: Node<'t>, depth: usize) -> bool {
        let Some(function) = call.child_by_field_name("function") else {
            return false;
        };
        let name = self.qualified(function).unwrap_or_default();
        let method = (function.kind() == "attribute")
            .then(|| function.child_by_field_name("attribute"))
            .flatten()
            .map(|a| self.text(a))
            .unwrap_or_default();
        if DELETERS.contains(&name.as_str()) || DELETING_METHODS.contains(&method) {
            return true;
        }
        if matches!(method, "rename" | "replace") && arguments(call).len() == 1 {
            return true;
        }
        if matches!(name.as_str(), "open" | "io.open" | "builtins.open") {
            let mode = arguments(call)
                .get(1)
                .copied()
                .or_else(|| super::keyword_argument(self.src, call, "mode"));
            return mode.is_some_and(|m| {
                self.values(m, 0).iter().any(|v| match v {
                    Value::Str(f) => f.shown().contains('w'),
                    _ => true,
                })
            });
        }
        // A function of the block: what its body does.
        if function.kind() == "identifier" && depth < 4 {
            if let Some(definition) = self.definition(self.text(function), at) {
                if let Some(body) = definition.child_by_field_name("body") {
                    let mut inner = Vec::new();
                    self.effects_in(body, at, depth + 1, &mut inner);
                    return !inner.is_empty();
                }
            }
        }
        false
    }

    /// The `def NAME` of the block.
    fn definition(&self, name: &str, at: Node<'t>) -> Option<Node<'t>> {
        let mut root = at;
        while let Some(parent) = root.parent() {
            root = parent;
        }
        let mut stack = vec![root];
        while let Some(node) = stack.pop() {
            if node.kind() == "function_definition"
                && node
                    .child_by_field_name("name")
                    .is_some_and(|n| self.text(n) == name)
            {
                return Some(node);
            }
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
        None
    }

    /// Whether `call` runs only after a test of a name against a literal (`if
    /// f.endswith('.tmp'):`, `if d == '__pycache__':`, `if p.suffix in ('.pyc', '.pyo'):`).
    pub(super) fn narrowed(&self, call: Node) -> bool {
        let mut child = call;
        while let Some(parent) = child.parent() {
            match parent.kind() {
                "if_statement" => {
                    let in_consequence = parent
                        .child_by_field_name("consequence")
                        .is_some_and(|c| c.id() == child.id());
                    if in_consequence
                        && parent
                            .child_by_field_name("condition")
                            .is_some_and(|c| self.narrows(c, 0))
                    {
                        return true;
                    }
                }
                "conditional_expression" => {
                    let first = parent.named_child(0).is_some_and(|c| c.id() == child.id());
                    if first && parent.named_child(1).is_some_and(|c| self.narrows(c, 0)) {
                        return true;
                    }
                }
                "function_definition" | "module" => return false,
                _ => {}
            }
            child = parent;
        }
        false
    }

    /// Whether `condition` holds only for names matching a literal that is not everything.
    fn narrows(&self, condition: Node, depth: usize) -> bool {
        if depth > 6 {
            return false;
        }
        let literal = |node: Node| -> bool {
            match node.kind() {
                "string" => self
                    .known_string(node)
                    .is_some_and(|t| !t.is_empty() && !crate::places::wildcard_all(&t)),
                "tuple" | "list" | "set" => {
                    let mut cursor = node.walk();
                    let items: Vec<Node> = node.named_children(&mut cursor).collect();
                    !items.is_empty()
                        && items.iter().all(|i| {
                            i.kind() == "string"
                                && self.known_string(*i).is_some_and(|t| !t.is_empty())
                        })
                }
                _ => false,
            }
        };
        match condition.kind() {
            "parenthesized_expression" => condition
                .named_child(0)
                .is_some_and(|c| self.narrows(c, depth + 1)),
            "boolean_operator" => {
                let operator = self.text_of_field(condition, "operator");
                let (Some(left), Some(right)) = (
                    condition.child_by_field_name("left"),
                    condition.child_by_field_name("right"),
                ) else {
                    return false;
                };
                if operator == "and" {
                    self.narrows(left, depth + 1) || self.narrows(right, depth + 1)
                } else {
                    self.narrows(left, depth + 1) && self.narrows(right, depth + 1)
                }
            }
            "comparison_operator" => {
                let text = self.text(condition);
                let negated = text.contains("!=") || text.contains("not in");
                let mut cursor = condition.walk();
                let operands: Vec<Node> = condition.named_children(&mut cursor).collect();
                let ordering = [" < ", " > ", " <= ", " >= ", " is "]
                    .iter()
                    .any(|o| text.contains(o));
                !negated && !ordering && operands.len() == 2 && operands.iter().any(|o| literal(*o))
            }
            "call" => {
                let Some(function) = condition.child_by_field_name("function") else {
                    return false;
                };
                let name = self.qualified(function).unwrap_or_default();
                let method = self.text_of_field(function, "attribute");
                let arguments = arguments(condition);
                if matches!(
                    method.as_str(),
                    "endswith" | "startswith" | "match" | "fnmatch"
                ) || name.starts_with("fnmatch.")
                {
                    return arguments.last().is_some_and(|a| literal(*a));
                }
                false
            }
            _ => false,
        }
    }
}

/// The identifiers in `node`, added to `out`.
fn identifiers(src: &str, node: Node, out: &mut Vec<String>) {
    let mut stack = vec![node];
    while let Some(node) = stack.pop() {
        if node.kind() == "identifier" {
            let text = src.get(node.byte_range()).unwrap_or("").to_owned();
            if !out.contains(&text) {
                out.push(text);
            }
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
}

/// Whether `node` uses one of `names`.
fn mentions(src: &str, node: Node, names: &[String]) -> bool {
    let mut found = Vec::new();
    identifiers(src, node, &mut found);
    found.iter().any(|f| names.contains(f))
}
