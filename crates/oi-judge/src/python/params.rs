//! Parameters of functions defined in the block: `def run(cmd): subprocess.run(cmd, …)`
//! called as `run("ls -la")` — the parameter may be each argument the block passes at a
//! call (or its default). A function handed on as a value (`map(run, cmds)`) or never
//! called here gets values oi cannot know.

use tree_sitter::Node;

use super::reader::{MAX_NAME_DEPTH, Reader, Value, arguments};

/// Where a parameter sits in its function's signature.
struct Parameter<'t> {
    /// Its position among the positional parameters, if it has one.
    position: Option<usize>,
    /// Its default value.
    default: Option<Node<'t>>,
    /// `*args` or `**kwargs`.
    splat: bool,
}

impl<'t> Reader<'_, '_, 't> {
    /// The values of `node`, the identifier `name`, when it is a parameter of a function
    /// around it; `None` when it is not one.
    pub(super) fn parameter_values(
        &self,
        node: Node<'t>,
        name: &str,
        depth: usize,
    ) -> Option<Vec<Value>> {
        let (function, parameter) = self.enclosing_parameter(node, name)?;
        if parameter.splat || depth >= MAX_NAME_DEPTH {
            return Some(vec![Value::Unknown]);
        }
        let function_name = function
            .child_by_field_name("name")
            .map(|n| self.text(n))
            .unwrap_or_default();
        // A method (`def run(self, cmd)` in a class): called as `x.run(…)`, its first
        // parameter the object (unless it is a static method).
        let decorated = function
            .parent()
            .filter(|p| p.kind() == "decorated_definition");
        let method = decorated
            .unwrap_or(function)
            .parent()
            .and_then(|body| body.parent())
            .is_some_and(|p| p.kind() == "class_definition");
        let unbound = decorated.is_some_and(|d| self.text(d).contains("@staticmethod"));
        let (calls, shift) = if method {
            (self.method_calls.get(function_name), usize::from(!unbound))
        } else {
            (self.calls.get(function_name), 0)
        };
        if self.referenced.contains(function_name) || calls.is_none() {
            return Some(vec![Value::Unknown]);
        }
        let parameter = Parameter {
            position: match parameter.position {
                Some(p) if p >= shift => Some(p - shift),
                Some(_) => return Some(vec![Value::Unknown]),
                None => None,
            },
            ..parameter
        };
        let mut out = Vec::new();
        for call in calls.into_iter().flatten() {
            match self.argument_for(*call, name, &parameter) {
                // The parameter passed on as it is from inside the function (`subprocess.run(cmd)`
                // in `def run(self, cmd)`, a recursive call): nothing new.
                Some(Some(argument))
                    if argument.kind() == "identifier"
                        && self.text(argument) == name
                        && function.byte_range().contains(&call.start_byte()) => {}
                Some(Some(argument)) => out.extend(self.values(argument, depth + 1)),
                Some(None) => out.push(Value::Unknown),
                None => {}
            }
        }
        if let Some(default) = parameter.default {
            out.extend(self.values(default, depth + 1));
        }
        if out.is_empty() {
            out.push(Value::Unknown);
        }
        Some(out)
    }

    /// The innermost function around `node` with a parameter `name`, and that parameter.
    fn enclosing_parameter(&self, node: Node<'t>, name: &str) -> Option<(Node<'t>, Parameter<'t>)> {
        let mut at = node.parent();
        while let Some(scope) = at {
            if scope.kind() == "function_definition" {
                if let Some(parameter) = self.parameter(scope, name) {
                    return Some((scope, parameter));
                }
            }
            at = scope.parent();
        }
        None
    }

    fn parameter(&self, function: Node<'t>, name: &str) -> Option<Parameter<'t>> {
        let list = function.child_by_field_name("parameters")?;
        let mut cursor = list.walk();
        let mut position = Some(0);
        for item in list.named_children(&mut cursor) {
            let (own, default, splat) = match item.kind() {
                "identifier" => (self.text(item), None, false),
                "default_parameter" | "typed_default_parameter" => (
                    item.child_by_field_name("name")
                        .map(|n| self.text(n))
                        .unwrap_or_default(),
                    item.child_by_field_name("value"),
                    false,
                ),
                "typed_parameter" => (
                    item.named_child(0)
                        .map(|n| self.text(n))
                        .unwrap_or_default(),
                    None,
                    false,
                ),
                "list_splat_pattern" | "dictionary_splat_pattern" => (
                    item.named_child(0)
                        .map(|n| self.text(n))
                        .unwrap_or_default(),
                    None,
                    true,
                ),
                _ => ("", None, false),
            };
            if own == name {
                return Some(Parameter {
                    position: position.filter(|_| !splat),
                    default,
                    splat,
                });
            }
            // After `*`, `*args` or `/`… only `/` keeps positions going.
            position = match item.kind() {
                "keyword_separator" | "list_splat_pattern" | "dictionary_splat_pattern" => None,
                "positional_separator" => position,
                _ => position.map(|p| p + 1),
            };
        }
        None
    }

    /// The argument a call passes for the parameter: `Some(Some(node))`, `Some(None)` when oi
    /// cannot tell (`*args`, `**kwargs` at the call), `None` when the call passes none.
    fn argument_for(
        &self,
        call: Node<'t>,
        name: &str,
        parameter: &Parameter<'t>,
    ) -> Option<Option<Node<'t>>> {
        let list = call.child_by_field_name("arguments")?;
        let mut cursor = list.walk();
        let items: Vec<Node<'t>> = list.named_children(&mut cursor).collect();
        if items
            .iter()
            .any(|a| matches!(a.kind(), "list_splat" | "dictionary_splat"))
        {
            return Some(None);
        }
        let keyword = items.iter().find_map(|a| {
            (a.kind() == "keyword_argument"
                && a.child_by_field_name("name").map(|n| self.text(n)) == Some(name))
            .then(|| a.child_by_field_name("value"))
            .flatten()
        });
        if let Some(value) = keyword {
            return Some(Some(value));
        }
        let positional = parameter
            .position
            .and_then(|p| arguments(call).get(p).copied());
        positional.map(Some)
    }
}
