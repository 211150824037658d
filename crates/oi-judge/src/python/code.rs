//! Python that runs Python given as a string: `exec`, `eval`, `compile` (however they are
//! reached: `builtins.exec`, `__import__('builtins').exec`, `getattr(__builtins__, 'exec')`),
//! `timeit`, the profilers' and debugger's `run`, `runpy`. A string oi can evaluate to a
//! constant is read as Python; anything else — a string computed at run time by any decoder
//! (`''.join(chr(ord(c)-1) …)`, `'…'[::-1]`, a file's contents) — is code oi cannot tell.

use tree_sitter::Node;

use super::reader::{Reader, Value, arguments};

/// Calls that run their first argument (or `stmt=`/`source=`) as Python.
const RUNS_SOURCE: &[&str] = &[
    "exec",
    "eval",
    "compile",
    "builtins.exec",
    "builtins.eval",
    "builtins.compile",
    "__builtins__.exec",
    "__builtins__.eval",
    "__builtins__.compile",
    "timeit.timeit",
    "timeit.repeat",
    "timeit.Timer",
    "cProfile.run",
    "cProfile.runctx",
    "profile.run",
    "profile.runctx",
    "pdb.run",
    "pdb.runeval",
    "pdb.runctx",
    "code.compile_command",
];

/// Calls that run Python oi cannot see (a file, a module, an interactive console).
const RUNS_UNSEEN: &[&str] = &[
    "runpy.run_path",
    "runpy.run_module",
    "runpy._run_module_as_main",
    "runpy._run_code",
    "code.interact",
];

/// Methods that run their argument as Python (`code.InteractiveInterpreter().runsource(s)`,
/// IPython's `get_ipython().run_cell(s)`).
const RUNNING_METHODS: &[&str] = &["runsource", "runcode", "run_cell", "run_cell_async"];

/// IPython's ways of running a magic by name (`get_ipython().run_line_magic('cd', '/')`).
const MAGIC_METHODS: &[&str] = &["run_line_magic", "run_cell_magic", "magic"];

/// Magics that run no code and change no directory.
const QUIET_MAGICS: &[&str] = &[
    "matplotlib",
    "load_ext",
    "reload_ext",
    "autoreload",
    "config",
    "precision",
    "xmode",
    "colors",
    "pwd",
    "who",
    "whos",
];

impl Reader<'_, '_, '_> {
    /// Reads what `call` (named `name`, a method `method`) runs as Python, if it runs any;
    /// true when it does.
    pub(super) fn runs_python(&mut self, call: Node, name: &str, method: &str) -> bool {
        let arguments = arguments(call);
        if RUNS_UNSEEN.contains(&name) {
            self.unsure(
                "runs Python from a file or module oi does not read (runpy, code.interact)",
            );
            return true;
        }
        if MAGIC_METHODS.contains(&method) {
            let magic = arguments
                .first()
                .and_then(|m| match self.values(*m, 0).as_slice() {
                    [Value::Str(field)] => field.known(),
                    _ => None,
                });
            let quiet = magic.is_some_and(|m| {
                let name = m.trim_start_matches('%');
                let name = name.split_whitespace().next().unwrap_or(name);
                QUIET_MAGICS.contains(&name)
            });
            if !quiet {
                self.unsure("runs an IPython magic by name, which oi does not follow");
            }
            return true;
        }
        if !RUNS_SOURCE.contains(&name) && !RUNNING_METHODS.contains(&method) {
            return false;
        }
        let keyword = |key: &str| super::keyword_argument(self.src, call, key);
        let mut sources: Vec<Node> = arguments.first().copied().into_iter().collect();
        let keys = ["source", "stmt", "setup", "cmd", "expression"];
        sources.extend(keys.into_iter().filter_map(keyword));
        let timeit = name.starts_with("timeit.");
        if timeit {
            sources.extend(arguments.get(1).copied());
        }
        for source in sources {
            // `timeit` also takes a function (`timeit(lambda: f())`, `timeit(f)`): that runs
            // code the block shows, which is read where it is written.
            if timeit && self.is_function(source) {
                continue;
            }
            self.python_string(source);
        }
        true
    }

    /// A string run as Python: read when oi can evaluate it to constants, blocked when a
    /// decoder made it, "cannot tell" otherwise.
    fn python_string(&mut self, code: Node) {
        for value in self.values(code, 0) {
            match value {
                Value::Str(field) if field.decoded() => {
                    self.scan.block(
                        "it runs decoded Python with exec (an encoded payload oi cannot read)"
                            .to_owned(),
                    );
                }
                Value::Str(field) => match field.known() {
                    Some(code) => {
                        let cwds = self.cwds.clone();
                        self.scan.python(&code, &cwds);
                    }
                    None => self.unsure("runs Python built at run time (exec, eval, compile)"),
                },
                Value::List(_) | Value::Unknown => {
                    self.unsure("runs Python built at run time (exec, eval, compile)");
                }
            }
        }
    }

    /// Whether `node` is a function (a lambda, or a name never assigned a value here, such as
    /// one defined with `def`).
    fn is_function(&self, node: Node) -> bool {
        match node.kind() {
            "lambda" => true,
            "identifier" => !self.names.contains_key(self.text(node)),
            _ => false,
        }
    }

    /// `exec`/`eval`/`compile` handed on as a value (`map(exec, …)`, `[exec][0](…)`,
    /// `e = exec`): what it will run is not read where it is called.
    pub(super) fn code_runner_reference(&self, node: Node) {
        let Some(parent) = node.parent() else { return };
        let value_position = match parent.kind() {
            "argument_list"
            | "list"
            | "tuple"
            | "set"
            | "expression_list"
            | "pair"
            | "return_statement"
            | "conditional_expression"
            | "boolean_operator"
            | "parenthesized_expression"
            | "lambda" => true,
            "assignment" => parent
                .child_by_field_name("right")
                .is_some_and(|r| r.id() == node.id()),
            "keyword_argument" => parent
                .child_by_field_name("value")
                .is_some_and(|v| v.id() == node.id()),
            _ => false,
        };
        if !value_position
            || (node.kind() == "identifier" && self.names.contains_key(self.text(node)))
        {
            return;
        }
        let name = self.qualified(node).unwrap_or_default();
        let runner = name
            .trim_start_matches("builtins.")
            .trim_start_matches("__builtins__.");
        if matches!(runner, "exec" | "eval" | "compile") {
            self.unsure("hands exec, eval or compile on as a value, so oi cannot see what it runs");
        }
    }
}
