//! The state of reading one Python block, and what an expression may evaluate to.

use std::collections::{HashMap, HashSet};

use tree_sitter::Node;

use crate::scan::Scan;
use crate::word::Field;

/// The most values one expression is followed with.
pub(super) const MAX_VALUES: usize = 16;

/// How deep names are followed through assignments.
pub(super) const MAX_NAME_DEPTH: usize = 8;

/// What an expression may evaluate to.
#[derive(Debug, Clone)]
pub(super) enum Value {
    /// A string (or path), possibly with unknown parts.
    Str(Field),
    /// A list or tuple of such strings.
    List(Vec<Field>),
    /// Anything else.
    Unknown,
}

/// The reader of one Python block.
pub(super) struct Reader<'s, 'p, 't> {
    pub(super) scan: &'s mut Scan<'p>,
    pub(super) src: &'s str,
    /// Local names of imported modules and functions → their qualified names.
    pub(super) aliases: HashMap<String, String>,
    /// Names → the expressions assigned to them (anywhere in the block).
    pub(super) names: HashMap<String, Vec<Binding<'t>>>,
    /// Names → the calls of them by name (`run(…)`).
    pub(super) calls: HashMap<String, Vec<Node<'t>>>,
    /// Attribute names → the calls of them as methods (`x.run(…)`).
    pub(super) method_calls: HashMap<String, Vec<Node<'t>>>,
    /// Names used as values (not called): a function among them is handed on.
    pub(super) referenced: HashSet<String>,
    /// The working directories the block may be in (`None`: one oi cannot know): where it
    /// started, and where its `os.chdir` calls may have taken it.
    pub(super) cwds: Vec<Option<String>>,
    /// Whether the block changes `HOME` (`os.environ['HOME'] = …`, `os.putenv`): then `~`,
    /// `expanduser` and `Path.home()` are places oi cannot know.
    pub(super) home_changed: bool,
    /// Files the block writes (see `written`).
    pub(super) written: Vec<Written>,
    /// Whether the block changes `sys.argv` (then its items are not the command line's).
    pub(super) argv_changed: bool,
    /// Whether the block imports everything from a module oi does not list (`from m import *`):
    /// a bare name that deletes or runs commands may be that module's.
    pub(super) star_unknown: bool,
    /// Whether the block changes `sys.path`.
    pub(super) sys_path_changed: bool,
}

/// How a name got its value.
#[derive(Clone, Copy)]
pub(super) enum Binding<'t> {
    /// `name = expr`, `with expr as name`.
    Is(Node<'t>),
    /// `for name in expr`.
    ElementOf(Node<'t>),
    /// `for a, b, c in expr`: the item at this position of each element.
    PartOf(Node<'t>, usize),
}

/// The positional arguments of a call.
pub(super) fn arguments(call: Node) -> Vec<Node> {
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

/// A file the block writes: its path and, when known, what is written (found by
/// `written.rs`).
#[derive(Debug, Clone)]
pub(super) struct Written {
    /// Where it is written.
    pub(super) path: String,
    /// What is written, when it is a literal.
    pub(super) content: Option<String>,
}
