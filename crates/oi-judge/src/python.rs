//! Reads Python with tree-sitter-python: the calls that delete trees (`shutil.rmtree`), run
//! shell commands (`os.system`, `subprocess.*`, `os.exec*`), run more Python (`exec`, `eval`,
//! `compile`, …: see `code`), write onto disks (`open('/dev/sda', 'wb')`), make links, and
//! loops that fork forever. Arguments are evaluated as far as they are literal: strings
//! (f-strings with known parts), `+` and `/`, `os.path.join`/`expanduser`, `Path.home()`,
//! `os.environ['HOME']`, `split`/`shlex.split`, `base64.b64decode` of a literal, names
//! assigned such values anywhere in the block, and parameters of the block's own functions
//! (the arguments it passes). Relative paths resolve against every directory the block may
//! be in (`os.chdir`, `cwd=`: see `cwd`). A command or code computed at run time is one oi
//! cannot tell, and so is a tree delete, move or mode change of a path it cannot work out
//! (`targets`; `%`/`str.format` of known parts and the entries of listings are evaluated:
//! `listing`), a deleting function handed on as a value, a loop deleting what it gets from
//! something computed (`walks`), and a module or script the block writes with contents oi
//! cannot see (`written`).

use std::collections::{HashMap, HashSet};

mod code;
mod collect;
mod cwd;
mod dynamic;
mod listing;
mod params;
mod reader;
mod split;
mod targets;
mod values;
mod walks;
mod written;

use tree_sitter::{Node, Parser};

use crate::places;
use crate::resolve;
use crate::scan::Scan;
use crate::word::Field;

use reader::{Reader, Value, arguments};
use targets::Effect;

/// Reads `source` as Python, started in one of `cwds`.
pub(crate) fn read(scan: &mut Scan, source: &str, cwds: &[Option<String>]) {
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
    if scan.too_deep(root) {
        return;
    }
    let mut reader = Reader {
        scan,
        src: source,
        aliases: HashMap::new(),
        names: HashMap::new(),
        calls: HashMap::new(),
        method_calls: HashMap::new(),
        referenced: HashSet::new(),
        cwds: cwds.to_vec(),
        home_changed: false,
        written: Vec::new(),
        sys_path_changed: false,
        argv_changed: false,
        star_unknown: false,
    };
    reader.collect(root);
    reader.find_written(root);
    reader.follow_chdirs(root);
    reader.check(root);
}

impl<'t> Reader<'_, '_, 't> {
    pub(super) fn text(&self, node: Node) -> &str {
        self.src.get(node.byte_range()).unwrap_or("")
    }

    /// Second pass: every call and loop.
    fn check(&mut self, root: Node<'t>) {
        let mut stack = vec![root];
        while let Some(node) = stack.pop() {
            if !self.scan.charge(1) {
                return;
            }
            match node.kind() {
                "call" => self.call(node),
                "identifier" | "attribute" => {
                    self.code_runner_reference(node);
                    self.harmful_reference(node);
                }
                "assignment" => self.temporary_renamed(node),
                "import_statement" | "import_from_statement" => self.import_statement(node),
                "while_statement" => self.endless_fork(node),
                "for_statement" => {
                    if let (Some(iterable), Some(body)) = (
                        node.child_by_field_name("right"),
                        node.child_by_field_name("body"),
                    ) {
                        if self.endless_iterable(iterable) && self.forks(body) {
                            self.scan.block(
                                "it is a fork bomb (an endless loop that calls fork)".to_owned(),
                            );
                        }
                        self.walk_delete(iterable, body, node);
                    }
                }
                "for_in_clause" => {
                    if let (Some(iterable), Some(comprehension)) =
                        (node.child_by_field_name("right"), node.parent())
                    {
                        self.walk_delete(iterable, comprehension, node);
                    }
                }
                _ => {}
            }
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
    }

    /// The qualified name of a callee (`sh.rmtree` → `shutil.rmtree` after `import shutil as sh`,
    /// `__import__('os').system` → `os.system`).
    fn qualified(&self, node: Node) -> Option<String> {
        self.qualified_at(node, 0)
    }

    fn qualified_at(&self, node: Node, depth: usize) -> Option<String> {
        if depth > 8 {
            return None;
        }
        match node.kind() {
            "identifier" => {
                let name = self.text(node);
                if let Some(alias) = self.aliases.get(name) {
                    return Some(alias.clone());
                }
                Some(
                    self.dynamic_name(node, depth)
                        .unwrap_or_else(|| name.to_owned()),
                )
            }
            "attribute" => {
                let object = self.qualified_at(node.child_by_field_name("object")?, depth + 1)?;
                let attribute = self.text(node.child_by_field_name("attribute")?);
                Some(format!("{object}.{attribute}"))
            }
            "call" => self.dynamic_name(node, depth),
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
        self.opaque_call(node, &name);
        self.imported_by_name(node, &name);
        if self.star_unknown
            && function.kind() == "identifier"
            && STAR_HARMFUL.contains(&name.as_str())
        {
            let own = self.names.contains_key(name.as_str())
                || self
                    .text(self.src_root(node))
                    .contains(&format!("def {name}("));
            if !own {
                self.unsure("calls a function a `from … import *` may have brought in, which oi does not know");
            }
        }
        if self.runs_python(node, &name, &method) || self.moved_or_locked(node, &name, &method) {
            return;
        }
        match name.as_str() {
            "shutil.rmtree"
            | "distutils.dir_util.remove_tree"
            | "setuptools.dir_util.remove_tree" => {
                // `dir_fd=` makes a relative path relative to a directory oi does not know.
                let cwds = match keyword("dir_fd") {
                    Some(fd) if self.text(fd) != "None" => vec![None],
                    _ => self.cwds.clone(),
                };
                match first {
                    Some(target) => self.harmed_in(target, node, &cwds, Effect::Delete),
                    None => self.unsure("deletes a tree whose path oi cannot see (`*args`)"),
                }
            }
            "os.system"
            | "os.popen"
            | "subprocess.getoutput"
            | "subprocess.getstatusoutput"
            | "commands.getoutput"
            | "commands.getstatusoutput"
            | "asyncio.create_subprocess_shell" => {
                let cwds = self.call_cwds(node, keyword("cwd"));
                if let Some(command) = first.or_else(|| keyword("cmd")) {
                    self.shell_string(command, &cwds);
                }
            }
            "subprocess.run"
            | "subprocess.call"
            | "subprocess.check_call"
            | "subprocess.check_output"
            | "subprocess.Popen" => {
                let shell = keyword("shell").is_some_and(|v| self.text(v) != "False");
                let cwds = self.call_cwds(node, keyword("cwd"));
                if let Some(command) = first.or_else(|| keyword("args")) {
                    if shell {
                        self.shell_string(command, &cwds);
                    } else {
                        self.argv(command, &cwds);
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
                let cwds = self.call_cwds(node, keyword("cwd"));
                self.run_argv(&fields, &cwds);
            }
            "os.execv" | "os.execve" | "os.execvp" | "os.execvpe" | "os.posix_spawn"
            | "os.posix_spawnp" => {
                if let Some(list) = arguments.get(1) {
                    self.argv(*list, &self.cwds.clone());
                }
            }
            "os.spawnv" | "os.spawnve" | "os.spawnvp" | "os.spawnvpe" => {
                if let Some(list) = arguments.get(2) {
                    self.argv(*list, &self.cwds.clone());
                }
            }
            "os.spawnl" | "os.spawnle" | "os.spawnlp" | "os.spawnlpe" => {
                let fields: Vec<Field> =
                    arguments.iter().skip(2).map(|a| self.string(*a)).collect();
                let cwds = self.cwds.clone();
                self.run_argv(&fields, &cwds);
            }
            // `os.symlink(TARGET, LINK)`: paths through `LINK` lead to `TARGET`.
            "os.symlink" | "posix.symlink" => {
                let link = arguments.get(1).copied().or_else(|| keyword("dst"));
                let target = first.or_else(|| keyword("src"));
                self.symlink(link, target);
            }
            "pty.spawn" => {
                if let Some(command) = first {
                    self.argv(command, &self.cwds.clone());
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
            _ if method == "symlink_to" => {
                let link = function.child_by_field_name("object");
                self.symlink(link, first.or_else(|| keyword("target")));
            }
            _ if method == "rmtree" => {
                if let Some(object) = function.child_by_field_name("object") {
                    self.deleted(object, node);
                }
            }
            _ => {}
        }
    }

    /// A link the block makes at `link` to `target` (see [`crate::links`]).
    fn symlink(&mut self, link: Option<Node>, target: Option<Node>) {
        let Some(link) = link else { return };
        let to = target.and_then(|t| match self.values(t, 0).as_slice() {
            [Value::Str(field)] => field.known(),
            _ => None,
        });
        let mut at = Vec::new();
        for value in self.values(link, 0) {
            let text = match value {
                Value::Str(field) => field.pattern_text(),
                _ => places::UNKNOWN.to_string(),
            };
            at.extend(resolved(&text, &self.cwds));
        }
        self.scan.link(at, to.as_deref());
    }

    /// The root of the tree `node` is in.
    fn src_root<'n>(&self, node: Node<'n>) -> Node<'n> {
        let mut root = node;
        while let Some(parent) = root.parent() {
            root = parent;
        }
        root
    }

    /// A recursive delete of each value `target` may have.
    fn deleted(&mut self, target: Node, call: Node) {
        let cwds = self.cwds.clone();
        self.harmed_in(target, call, &cwds, Effect::Delete);
    }

    /// An import of a module by name (`importlib.import_module('m')`).
    fn imported_by_name(&mut self, call: Node, name: &str) {
        // Loading a module from a file: what the block wrote there, or unknown.
        if matches!(
            name,
            "importlib.util.spec_from_file_location"
                | "importlib.machinery.SourceFileLoader"
                | "imp.load_source"
                | "importlib.util.spec_from_loader"
                | "zipimport.zipimporter"
        ) {
            let path = arguments(call).get(1).copied();
            let file = path.and_then(|p| match self.values(p, 0).as_slice() {
                [Value::Str(field)] => field.known(),
                _ => None,
            });
            match file {
                Some(file) if self.wrote(&file) => self.imported_file(&file),
                _ => self.unsure("loads a module from a file oi does not read"),
            }
            return;
        }
        if !matches!(
            name,
            "importlib.import_module" | "__import__" | "builtins.__import__"
        ) {
            return;
        }
        let module = arguments(call)
            .first()
            .and_then(|m| match self.values(*m, 0).as_slice() {
                [Value::Str(field)] => field.known(),
                _ => None,
            });
        if let Some(module) = module {
            self.imported(&module);
        }
    }

    /// `t.name = …` on a `TemporaryDirectory`: its `cleanup()` deletes what it was given.
    fn temporary_renamed(&mut self, node: Node) {
        let renamed = node.child_by_field_name("left").is_some_and(|left| {
            left.kind() == "attribute" && self.text_of_field(left, "attribute") == "name"
        });
        if renamed && self.src.contains("TemporaryDirectory") {
            self.unsure("changes the directory a TemporaryDirectory deletes");
        }
    }

    /// A string handed to the shell, run in one of `cwds`: read as a shell script. A command
    /// computed at run time is one oi cannot tell.
    fn shell_string(&mut self, command: Node, cwds: &[Option<String>]) {
        for value in self.values(command, 0) {
            match value {
                Value::Unknown => self.unsure("runs a shell command computed at run time"),
                Value::Str(field)
                    if !field.decoded() && field.known().is_none() && field.segs.len() == 1 =>
                {
                    self.unsure("runs a shell command computed at run time");
                }
                Value::Str(field)
                    if field.decoded() && field.known().is_none() && field.segs.len() == 1 =>
                {
                    self.scan.block(
                        "it hands decoded data to the shell (an encoded payload oi cannot read)"
                            .to_owned(),
                    );
                }
                Value::Str(field) => {
                    let env = self.shell_env(cwds);
                    self.scan.shell(&field.rendered(), env);
                }
                Value::List(fields) => {
                    if let Some(script) = fields.first() {
                        let env = self.shell_env(cwds);
                        self.scan.shell(&script.rendered(), env);
                    }
                }
            }
        }
    }

    /// An argument vector (`["rm", "-rf", "/"]`), run in one of `cwds`: read as one command.
    /// A vector computed at run time is one oi cannot tell.
    fn argv(&mut self, command: Node, cwds: &[Option<String>]) {
        for value in self.values(command, 0) {
            match value {
                Value::List(fields) => self.run_argv(&fields, cwds),
                Value::Str(field) => self.run_argv(&[field], cwds),
                Value::Unknown => self.unsure("runs a command computed at run time"),
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
                && self
                    .scan
                    .through_links(resolved(&field.pattern_text(), &self.cwds))
                    .iter()
                    .any(places::is_disk)
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
                if matches!(
                    name.as_deref(),
                    Some(
                        "os.fork"
                            | "os.forkpty"
                            | "pty.fork"
                            | "subprocess.Popen"
                            | "multiprocessing.Process"
                    )
                ) {
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
}

/// Bare names that delete, move or run commands in some module (`from m import *`).
const STAR_HARMFUL: &[&str] = &[
    "rmtree",
    "remove_tree",
    "rename",
    "renames",
    "move",
    "chmod",
    "unlink",
    "remove",
    "rmdir",
    "removedirs",
    "system",
    "popen",
    "Popen",
    "check_call",
    "check_output",
    "getoutput",
    "spawn",
    "execv",
    "execvp",
    "execl",
    "execlp",
    "rm_rf",
    "delete",
];

/// The patterns `text` may name from each of `cwds`.
fn resolved(text: &str, cwds: &[Option<String>]) -> Vec<places::Pattern> {
    let mut out: Vec<places::Pattern> = Vec::new();
    for cwd in cwds {
        let base = cwd.as_deref().map(|c| places::pattern(c, None));
        for pattern in resolve::resolve(text, base.as_ref()) {
            if !out.contains(&pattern) {
                out.push(pattern);
            }
        }
    }
    out
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
pub(super) fn innermost_value(node: Node) -> Node {
    let mut node = node;
    while node.kind() == "assignment" {
        match node.child_by_field_name("right") {
            Some(right) => node = right,
            None => break,
        }
    }
    node
}
