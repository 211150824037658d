//! What Python does to the paths it deletes, moves away or locks: a recursive delete
//! (`shutil.rmtree`), a move or rename of its source (`os.rename`, `os.replace`, `os.renames`,
//! `shutil.move`, `Path.rename`/`replace`) and a change of mode that takes the owner's rights
//! away (`os.chmod(P, 0)`) are each judged on the place they touch: a protected one is blocked.
//! A target oi cannot evaluate is one it cannot tell — it may be a protected place — unless
//! it is provably below a known place (a fresh temporary directory, a name a listing yields:
//! see [`super::listing::contained`]).
//!
//! Functions that delete or move, used other than by a direct call oi reads (`map(shutil.rmtree,
//! …)`, `Thread(target=os.remove)`, `partial(shutil.rmtree, H)`, `{'a': shutil.rmtree}`,
//! `shutil.rmtree.__call__`) are ones it cannot tell, as `exec` handed on is.

use tree_sitter::Node;

use crate::places::Harm;

use super::listing::{contained, from_argument, pattern_text};
use super::reader::{Reader, Value, arguments};
use super::{keyword_argument, resolved};

/// What a call does to its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Effect {
    /// Deletes it and everything in it.
    Delete,
    /// Moves it away.
    Move,
    /// Takes the owner's rights on it away.
    Lock,
}

impl Effect {
    fn done(self, what: &str) -> String {
        match self {
            Effect::Delete => format!("it recursively deletes {what}"),
            Effect::Move => format!("it moves {what} away"),
            Effect::Lock => format!("it takes the owner's rights on {what} away"),
        }
    }

    fn unknown(self) -> &'static str {
        match self {
            Effect::Delete => {
                "deletes a tree whose path is computed at run time (it may be a protected place)"
            }
            Effect::Move => {
                "moves or renames a path computed at run time (it may be a protected place)"
            }
            Effect::Lock => {
                "takes the rights on a path computed at run time away (it may be a protected place)"
            }
        }
    }

    fn harm(self) -> Harm {
        match self {
            Effect::Lock => Harm::Permissions,
            _ => Harm::Delete,
        }
    }
}

/// Functions that move their first argument away.
const MOVERS: &[&str] = &[
    "os.rename",
    "os.replace",
    "os.renames",
    "shutil.move",
    "posix.rename",
    "posix.replace",
    "pathlib.Path.rename",
    "pathlib.Path.replace",
    "Path.rename",
    "Path.replace",
    "pathlib.PosixPath.rename",
    "PosixPath.rename",
];

/// Functions that change the mode of their first argument.
const CHMODS: &[&str] = &[
    "os.chmod",
    "os.lchmod",
    "posix.chmod",
    "pathlib.Path.chmod",
    "Path.chmod",
    "pathlib.Path.lchmod",
];

/// Functions that delete, move or change the mode of a path: used as values, oi cannot tell
/// what they are given.
const HARMFUL: &[&str] = &[
    "shutil.rmtree",
    "os.remove",
    "os.unlink",
    "os.rmdir",
    "os.removedirs",
    "os.rename",
    "os.replace",
    "os.renames",
    "os.chmod",
    "os.lchmod",
    "os.truncate",
    "shutil.move",
    "posix.remove",
    "posix.unlink",
    "posix.rename",
    "posix.replace",
    "posix.chmod",
    "distutils.dir_util.remove_tree",
    "setuptools.dir_util.remove_tree",
    "pathlib.Path.unlink",
    "pathlib.Path.rmdir",
    "pathlib.Path.rename",
    "pathlib.Path.replace",
    "pathlib.Path.chmod",
    "Path.unlink",
    "Path.rmdir",
    "Path.rename",
    "Path.replace",
    "Path.chmod",
    "os.system",
    "subprocess.run",
    "subprocess.call",
    "subprocess.Popen",
    "subprocess.check_call",
    "subprocess.check_output",
];

/// Methods of paths that delete, move or lock them, used as values.
const HARMFUL_METHODS: &[&str] = &["rmtree", "unlink", "rmdir"];

/// Modules with functions that delete: `from M import *` brings them in unseen.
impl<'t> Reader<'_, '_, 't> {
    /// Each value `target` may have, deleted, moved away or locked, from one of `cwds`.
    pub(super) fn harmed_in(
        &mut self,
        target: Node,
        call: Node,
        cwds: &[Option<String>],
        effect: Effect,
    ) {
        let values = self.values(target, 0);
        self.harmed_values(values, call, cwds, effect);
    }

    /// Each of `values`, deleted, moved away or locked by `call`, from one of `cwds`.
    pub(super) fn harmed_values(
        &mut self,
        values: Vec<Value>,
        call: Node,
        cwds: &[Option<String>],
        effect: Effect,
    ) {
        let narrowed = self.narrowed(call);
        for value in values {
            let field = match value {
                Value::Str(field) => field,
                Value::List(_) | Value::Unknown => {
                    self.unsure(effect.unknown());
                    continue;
                }
            };
            // `python3 -c CODE ARG`: the command line's reader judges ARG when CODE deletes
            // (not when it moves or locks: those are judged here, and an argument is unknown).
            if from_argument(&field) && effect == Effect::Delete {
                continue;
            }
            let text = pattern_text(&field, narrowed);
            let protected = self
                .scan
                .through_links(resolved(&text, cwds))
                .iter()
                .find_map(|pattern| self.scan.places.protected(pattern, effect.harm()));
            if let Some(what) = protected {
                let shown = field.shown();
                let call = self.text(call);
                let what = effect.done(what);
                let verb = match effect {
                    Effect::Delete => "deletes",
                    Effect::Move => "moves",
                    Effect::Lock => "changes the mode of",
                };
                self.scan.block(if call.contains(&shown) {
                    format!("{what} (`{call}`)")
                } else {
                    format!("{what} (`{call}` {verb} `{shown}`)")
                });
                return;
            }
            if field.decoded() || !contained(&field) {
                self.unsure(effect.unknown());
            }
        }
    }

    /// Moves and changes of mode (`os.rename(SRC, DST)`, `os.chmod(P, MODE)`, `P.rename(…)`,
    /// `P.chmod(MODE)`); true when `call` is one.
    pub(super) fn moved_or_locked(&mut self, call: Node, name: &str, method: &str) -> bool {
        let arguments = arguments(call);
        let keyword = |key: &str| keyword_argument(self.src, call, key);
        let cwds = self.cwds.clone();
        if MOVERS.contains(&name) {
            match arguments.first().copied().or_else(|| keyword("src")) {
                Some(source) => self.harmed_in(source, call, &cwds, Effect::Move),
                None => self.unsure(Effect::Move.unknown()),
            }
            return true;
        }
        if CHMODS.contains(&name) {
            let mode = arguments.get(1).copied().or_else(|| keyword("mode"));
            if !self.keeps_owner_rights(mode) {
                match arguments.first().copied().or_else(|| keyword("path")) {
                    Some(path) => self.harmed_in(path, call, &cwds, Effect::Lock),
                    None => self.unsure(Effect::Lock.unknown()),
                }
            }
            return true;
        }
        let Some(function) = call.child_by_field_name("function") else {
            return false;
        };
        let object = (function.kind() == "attribute")
            .then(|| function.child_by_field_name("object"))
            .flatten();
        let Some(object) = object.filter(|o| self.is_path(*o, 0)) else {
            return false;
        };
        match method {
            "rename" | "replace" if arguments.len() == 1 || keyword("target").is_some() => {
                self.harmed_in(object, call, &cwds, Effect::Move);
                true
            }
            "chmod" | "lchmod" => {
                let mode = arguments.first().copied().or_else(|| keyword("mode"));
                if !self.keeps_owner_rights(mode) {
                    self.harmed_in(object, call, &cwds, Effect::Lock);
                }
                true
            }
            _ => false,
        }
    }

    /// Whether `mode` is a literal mode that leaves the owner read, write and search rights.
    fn keeps_owner_rights(&self, mode: Option<Node>) -> bool {
        let Some(mode) = mode else { return false };
        let text = self.text(mode).replace('_', "");
        let parsed = if let Some(octal) = text.strip_prefix("0o").or(text.strip_prefix("0O")) {
            u32::from_str_radix(octal, 8).ok()
        } else if let Some(hex) = text.strip_prefix("0x").or(text.strip_prefix("0X")) {
            u32::from_str_radix(hex, 16).ok()
        } else {
            text.parse::<u32>().ok()
        };
        match parsed {
            Some(mode) => mode & 0o700 == 0o700,
            None => text.contains("S_IRWXU"),
        }
    }

    /// Whether `node` is a path object (`Path(…)`, `Path.home()`, `p / 'x'`, a name assigned
    /// one, an entry of a listing of paths).
    fn is_path(&self, node: Node, depth: usize) -> bool {
        if depth > 6 {
            return false;
        }
        match node.kind() {
            "call" => {
                let Some(function) = node.child_by_field_name("function") else {
                    return false;
                };
                let name = self.qualified(function).unwrap_or_default();
                let last = name.rsplit('.').next().unwrap_or("");
                name.contains("Path")
                    || matches!(
                        last,
                        "home"
                            | "cwd"
                            | "joinpath"
                            | "expanduser"
                            | "resolve"
                            | "absolute"
                            | "with_name"
                            | "with_suffix"
                            | "with_stem"
                    )
            }
            "binary_operator" => self.text_of_field(node, "operator") == "/",
            "attribute" => self.text_of_field(node, "attribute") == "parent",
            "parenthesized_expression" => node
                .named_child(0)
                .is_some_and(|inner| self.is_path(inner, depth + 1)),
            "identifier" => self.names.get(self.text(node)).is_some_and(|bindings| {
                bindings.iter().any(|binding| match binding {
                    super::reader::Binding::Is(value) => self.is_path(*value, depth + 1),
                    super::reader::Binding::ElementOf(iterable) => {
                        let text = self.text(*iterable);
                        ["glob(", "iterdir(", "rglob("]
                            .iter()
                            .any(|m| text.contains(m))
                            && !text.starts_with("glob.")
                    }
                    super::reader::Binding::PartOf(..) => false,
                })
            }),
            _ => false,
        }
    }

    /// A function that deletes, moves or runs commands, handed on as a value
    /// (`map(shutil.rmtree, …)`, `Thread(target=shutil.rmtree)`, `shutil.rmtree.__call__`):
    /// what it will be given is not read where it is called.
    pub(super) fn harmful_reference(&self, node: Node) {
        let Some(parent) = node.parent() else { return };
        let called = parent.kind() == "call"
            && parent
                .child_by_field_name("function")
                .is_some_and(|f| f.id() == node.id());
        let part_of_name = match parent.kind() {
            "attribute" => parent
                .child_by_field_name("attribute")
                .is_some_and(|a| a.id() == node.id()),
            "dotted_name" | "aliased_import" | "import_from_statement" | "import_statement" => true,
            "keyword_argument" => parent
                .child_by_field_name("name")
                .is_some_and(|n| n.id() == node.id()),
            "assignment" => parent
                .child_by_field_name("left")
                .is_some_and(|l| l.id() == node.id()),
            "function_definition" | "class_definition" | "parameters" | "default_parameter" => true,
            _ => false,
        };
        if called || part_of_name {
            return;
        }
        // A name the block assigns itself (`remove = []`) is not the module's function.
        if node.kind() == "identifier" {
            let text = self.text(node);
            if self.names.contains_key(text) || !self.aliases.contains_key(text) {
                return;
            }
        }
        let name = self.qualified(node).unwrap_or_default();
        let harmful = HARMFUL.contains(&name.as_str())
            || (node.kind() == "attribute"
                && HARMFUL_METHODS.contains(&self.text_of_field(node, "attribute").as_str())
                && !called);
        if harmful {
            self.unsure(
                "hands a function that deletes, moves or runs commands on as a value, so oi cannot see what it is given",
            );
        }
    }
}
