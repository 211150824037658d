//! Reads a shell script with tree-sitter-bash, the way the shell would expand it as far as that
//! can be known without running it: quotes and escapes removed, word pieces joined, `~`,
//! `$HOME`, braces and variables assigned earlier in the script expanded, `$(echo …)` and
//! `printf` of literals evaluated, and the working directory followed through `cd`. Every
//! simple command found (anywhere: in lists, loops, functions, substitutions) goes to
//! [`programs::inspect`].

use tree_sitter::{Node, Parser};

mod context;
mod scripts;
mod walker;
mod words;

use walker::{MAX_ALTERNATIVES, Walker};

use crate::context::Context;
use crate::env::Env;
use crate::escapes::unescape_bare;
use crate::output::Output;
use crate::places;
use crate::programs;
use crate::scan::{Limit, Scan};
use crate::word::{self, Field, Seg, Word, collapse};

/// Reads `source` as a shell script.
pub(crate) fn read(scan: &mut Scan, source: &str, env: Env) -> Output {
    let mut parser = Parser::new();
    if parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .is_err()
    {
        scan.block("oi could not load its shell parser, so it cannot check this code".into());
        return Output::Unknown;
    }
    let Some(tree) = parser.parse(source, None) else {
        scan.block("oi could not parse this shell code to check it".into());
        return Output::Unknown;
    };
    if scan.too_deep(tree.root_node()) {
        return Output::Unknown;
    }
    if tree.root_node().has_error() {
        // What the parser could not read, bash may still run: `[ -d / ]` on one line hid
        // `rm -rf ~` on the next (issue 21 review). Read what parsed; the rest is unknown.
        scan.exceed(Limit::Dynamic(
            "has a part oi's shell parser could not read",
        ));
    }
    let mut walker = Walker {
        scan,
        src: source,
        env,
        last_cd: None,
        writes: Vec::new(),
    };
    walker.statements(tree.root_node())
}

/// Inspects one command given as words (no parsing needed).
pub(crate) fn read_argv(scan: &mut Scan, argv: &[Field], env: Env) {
    let mut walker = Walker {
        scan,
        src: "",
        env,
        last_cd: None,
        writes: Vec::new(),
    };
    walker.scan.note_command(argv);
    programs::inspect(&mut walker, argv, &Output::Nothing);
}

impl Walker<'_, '_> {
    fn text(&self, node: Node) -> &str {
        self.src.get(node.byte_range()).unwrap_or("")
    }

    /// `~user`'s home directory: `~` is `$HOME`, `~root` is `/root`, another user's is a guess
    /// (`/home/NAME`, or `$HOME` when its last component is NAME).
    fn home_of(&self, user: &str) -> Option<String> {
        let home = self.known_var("HOME");
        match user {
            "" => home,
            "+" => self.cwd(),
            "-" => None,
            "root" => Some("/root".to_owned()),
            name => match home {
                Some(home) if home.rsplit('/').next() == Some(name) => Some(home),
                _ => Some(format!("/home/{name}")),
            },
        }
    }

    pub(super) fn known_var(&self, name: &str) -> Option<String> {
        match self.env.vars.get(name).map(Vec::as_slice) {
            Some([value]) => Field {
                segs: value.clone(),
            }
            .known(),
            _ => None,
        }
    }

    /// Every statement among `node`'s children; the output of the last.
    fn statements(&mut self, node: Node) -> Output {
        let mut output = Output::Nothing;
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            output = self.statement(child, Output::Nothing);
        }
        output
    }

    fn statement(&mut self, node: Node, stdin: Output) -> Output {
        if !self.scan.charge(1) {
            return Output::Unknown;
        }
        match node.kind() {
            "comment" | "heredoc_start" | "heredoc_end" | "heredoc_body" => Output::Nothing,
            "command" => self.command(node, stdin),
            "pipeline" => self.pipeline(node, stdin),
            "list" => self.list(node),
            "redirected_statement" => self.redirected(node, stdin),
            "subshell" | "command_substitution" | "process_substitution" => self.scoped(node),
            "program" | "compound_statement" | "do_group" => self.statements(node),
            "variable_assignment" => {
                self.assign(node);
                Output::Nothing
            }
            "declaration_command" | "variable_assignments" => {
                self.declaration(node);
                Output::Nothing
            }
            "unset_command" => {
                self.unset(node);
                Output::Nothing
            }
            "function_definition" => {
                self.function(node);
                Output::Nothing
            }
            "for_statement" => {
                self.for_loop(node);
                Output::Nothing
            }
            "if_statement"
            | "while_statement"
            | "case_statement"
            | "c_style_for_statement"
            | "elif_clause"
            | "else_clause"
            | "case_item" => {
                self.env.conditional += 1;
                self.generic(node);
                self.env.conditional -= 1;
                Output::Unknown
            }
            _ => {
                self.generic(node);
                Output::Unknown
            }
        }
    }

    /// Walks the children of a construct oi does not model: statements are read, and command
    /// substitutions in expressions still count (they run).
    fn generic(&mut self, node: Node) {
        if !self.scan.charge(1) {
            return;
        }
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            if is_statement(child.kind()) {
                self.statement(child, Output::Nothing);
            } else {
                self.generic(child);
            }
        }
    }

    /// A subshell or substitution: its variables and `cd` do not leak out.
    fn scoped(&mut self, node: Node) -> Output {
        let saved = self.env.clone();
        let output = self.statements(node);
        self.restore(saved);
        output
    }

    /// Back to `saved` after a subshell, substitution or function body: its variables and
    /// directory do not leak out, but the files it wrote stay written, and aliases it defined
    /// are kept (a function's aliases hold once it runs).
    fn restore(&mut self, saved: Env) {
        let inner = std::mem::replace(&mut self.env, saved);
        self.env.files = inner.files;
        self.env.wrote_unknown = inner.wrote_unknown;
        self.env.aliases = inner.aliases;
    }

    fn pipeline(&mut self, node: Node, stdin: Output) -> Output {
        let mut input = stdin;
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            if child.kind() != "comment" {
                input = self.statement(child, input);
            }
        }
        input
    }

    fn list(&mut self, node: Node) -> Output {
        let (Some(left), Some(right)) = (node.named_child(0), node.named_child(1)) else {
            self.generic(node);
            return Output::Unknown;
        };
        let and = (0..node.child_count())
            .filter_map(|i| node.child(i))
            .any(|c| c.kind() == "&&");
        let before = self.env.cwds.clone();
        self.last_cd = None;
        self.statement(left, Output::Nothing);
        if let (true, Some(new)) = (and, self.last_cd.take()) {
            self.env.cwds = new;
        }
        self.env.conditional += 1;
        let output = self.statement(right, Output::Nothing);
        self.env.conditional -= 1;
        for dir in before {
            if !self.env.cwds.contains(&dir) {
                self.env.cwds.push(dir);
            }
        }
        if self.env.cwds.len() > MAX_ALTERNATIVES {
            self.env.cwds = vec![None];
        }
        output
    }

    fn redirected(&mut self, node: Node, stdin: Output) -> Output {
        let outer = std::mem::take(&mut self.writes);
        let output = self.redirected_inner(node, stdin);
        let writes = std::mem::replace(&mut self.writes, outer);
        self.record_writes(writes, &output);
        output
    }

    /// Records the files the redirections `writes` write, with `output` when it is known.
    fn record_writes(&mut self, writes: Vec<(Field, bool)>, output: &Output) {
        let content = match output {
            Output::Literal(text) => Some(text.clone()),
            Output::Nothing => Some(String::new()),
            _ => None,
        };
        for (file, append) in writes {
            self.record_write(&file, content.clone(), append);
        }
    }

    fn redirected_inner(&mut self, node: Node, stdin: Output) -> Output {
        let mut stdin = stdin;
        let mut after: Vec<Node> = Vec::new();
        let mut cursor = node.walk();
        let redirects: Vec<Node> = node
            .named_children(&mut cursor)
            .filter(|c| Some(*c) != node.child_by_field_name("body"))
            .collect();
        for redirect in redirects {
            if let Some(input) = self.redirect(redirect) {
                stdin = input;
            }
            if redirect.kind() == "heredoc_redirect" {
                let mut inner = redirect.walk();
                after.extend(
                    redirect
                        .named_children(&mut inner)
                        .filter(|c| is_statement(c.kind())),
                );
            }
        }
        let mut output = match node.child_by_field_name("body") {
            Some(body) => self.statement(body, stdin),
            None => Output::Unknown,
        };
        for next in after {
            output = match next.kind() {
                "pipeline" => self.pipeline(next, output),
                _ => self.statement(next, Output::Nothing),
            };
        }
        output
    }

    /// Checks one redirection; returns what it feeds to standard input, if it does.
    fn redirect(&mut self, node: Node) -> Option<Output> {
        match node.kind() {
            "file_redirect" => {
                let operator = (0..node.child_count())
                    .filter_map(|i| node.child(i))
                    .find(|c| !c.is_named())
                    .map(|c| self.text(c).to_owned())
                    .unwrap_or_default();
                let destination = node.child_by_field_name("destination")?;
                if destination.kind() == "process_substitution" && operator == "<" {
                    return Some(self.scoped(destination));
                }
                let fields = self.fields(destination);
                let writes = matches!(operator.as_str(), ">" | ">>" | ">|" | "&>" | "&>>" | "<>")
                    || (operator == ">&" && destination.kind() != "number");
                if writes && operator != "<>" {
                    let append = operator.contains(">>");
                    for field in &fields {
                        self.writes.push((field.clone(), append));
                    }
                }
                if writes {
                    for field in &fields {
                        if !field.starts_unknown()
                            && self.targets(field).iter().any(places::is_disk)
                        {
                            self.block(format!(
                                "it writes onto a disk device (`{operator}{}`)",
                                field.shown()
                            ));
                        }
                    }
                }
                (operator == "<").then(|| match fields.as_slice() {
                    [file] => self
                        .file_content(file)
                        .map_or(Output::Unknown, Output::Literal),
                    _ => Output::Unknown,
                })
            }
            "herestring_redirect" => {
                let mut cursor = node.walk();
                let value = node.named_children(&mut cursor).find(|c| c.is_named())?;
                let fields = self.fields(value);
                Some(output_of(&fields, "\n"))
            }
            "heredoc_redirect" => {
                let mut cursor = node.walk();
                let children: Vec<Node> = node.named_children(&mut cursor).collect();
                let quoted = children
                    .iter()
                    .find(|c| c.kind() == "heredoc_start")
                    .is_some_and(|s| self.text(*s).contains(['\'', '"', '\\']));
                // `cat <<EOF > FILE`: the redirection after the here-document's start.
                for child in children.iter().filter(|c| c.kind() == "file_redirect") {
                    self.redirect(*child);
                }
                let body = children.iter().find(|c| c.kind() == "heredoc_body")?;
                if quoted {
                    return Some(Output::Literal(self.text(*body).to_owned()));
                }
                let mut words = vec![Word::new()];
                self.string_parts(*body, body.start_byte(), body.end_byte(), &mut words);
                let fields: Vec<Field> = words.iter().map(collapse).collect();
                Some(output_of(&fields, ""))
            }
            _ => {
                self.generic(node);
                None
            }
        }
    }

    fn command(&mut self, node: Node, stdin: Output) -> Output {
        if !self.scan.step() {
            return Output::Unknown;
        }
        let outer = std::mem::take(&mut self.writes);
        // Assignments before the command (`CDPATH=/x cd home`, `HOME=/x cd`) hold for it.
        let saved_vars = self.env.vars.clone();
        let output = self.command_inner(node, stdin);
        self.env.vars = saved_vars;
        let writes = std::mem::replace(&mut self.writes, outer);
        self.record_writes(writes, &output);
        output
    }

    fn command_inner(&mut self, node: Node, stdin: Output) -> Output {
        let mut stdin = stdin;
        let mut first: Vec<Vec<Field>> = Vec::new();
        let mut rest: Vec<Field> = Vec::new();
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            match child.kind() {
                "variable_assignment" => self.assign(child),
                "file_redirect" | "herestring_redirect" => {
                    if let Some(input) = self.redirect(child) {
                        stdin = input;
                    }
                }
                "command_name" => {
                    first = self
                        .words(child)
                        .iter()
                        .map(|w| word::expand(w, &|u| self.home_of(u)))
                        .collect();
                }
                "subshell" => {
                    self.scoped(child);
                }
                _ => rest.extend(self.fields(child)),
            }
        }
        if first.is_empty() {
            first.push(Vec::new());
        }
        let mut output = Output::Unknown;
        for (n, alternative) in first.into_iter().enumerate() {
            let argv: Vec<Field> = alternative.into_iter().chain(rest.clone()).collect();
            if argv.is_empty() {
                continue;
            }
            let argv = self.aliased(argv);
            if argv.first().is_some_and(|p| p.is("alias")) {
                self.define_aliases(&argv[1..]);
            }
            self.scan.note_command(&argv);
            let result = programs::inspect(self, &argv, &stdin);
            if n == 0 {
                output = result;
            }
        }
        output
    }

    /// `argv` with an alias the block defined replaced by its text (aliases are followed
    /// whether or not `expand_aliases` is on); "cannot tell" for one oi cannot know.
    fn aliased(&mut self, argv: Vec<Field>) -> Vec<Field> {
        let Some(name) = argv.first().and_then(Field::known) else {
            return argv;
        };
        match self.env.aliases.get(&name) {
            None => argv,
            Some(None) => {
                self.scan
                    .exceed(Limit::Dynamic("runs an alias whose text oi cannot know"));
                argv
            }
            Some(Some(text)) => {
                let mut out: Vec<Field> = text.split_whitespace().map(Field::lit).collect();
                out.extend(argv.into_iter().skip(1));
                out
            }
        }
    }

    /// `alias NAME=TEXT…`: remembered for later commands; the text is read as code too.
    fn define_aliases(&mut self, args: &[Field]) {
        for arg in args {
            let Some(Seg::Lit(first)) = arg.segs.first() else {
                self.scan
                    .exceed(Limit::Dynamic("defines an alias oi cannot read"));
                continue;
            };
            let Some((name, _)) = first.split_once('=') else {
                continue;
            };
            let name = name.to_owned();
            let text = arg.known().map(|t| t[name.len() + 1..].to_owned());
            if let Some(text) = &text {
                let env = self.env.clone();
                self.scan.shell(text, env);
            }
            self.env.aliases.insert(name, text);
        }
    }

    fn assign(&mut self, node: Node) {
        let Some(name) = node.child_by_field_name("name") else {
            return;
        };
        let name = self.text(name).to_owned();
        let append = (0..node.child_count())
            .filter_map(|i| node.child(i))
            .any(|c| c.kind() == "+=");
        let values: Vec<Vec<Seg>> = match node.child_by_field_name("value") {
            Some(value) if value.kind() == "array" => {
                self.generic(value);
                vec![vec![Seg::Unknown {
                    raw: self.text(value).to_owned(),
                    decoded: false,
                }]]
            }
            Some(value) => self
                .words(value)
                .iter()
                .map(|w| word::assignment_value(w, &|u| self.home_of(u)))
                .collect(),
            None => vec![Vec::new()],
        };
        if matches!(name.as_str(), "BASH_ENV" | "ENV") {
            // Every shell started later reads this file first.
            for value in &values {
                let file = Field {
                    segs: value.clone(),
                };
                self.script(&file, crate::context::Script::Shell);
            }
        }
        let values = if append {
            let old = self.lookup(&name);
            let mut joined = Vec::new();
            for before in &old {
                for value in &values {
                    joined.push([before.clone(), value.clone()].concat());
                }
            }
            joined
        } else {
            values
        };
        self.set(&name, values);
    }

    fn set(&mut self, name: &str, values: Vec<Vec<Seg>>) {
        let mut values = values;
        if self.env.conditional > 0 {
            let mut old = self.lookup(name);
            old.retain(|v| !values.contains(v));
            values.extend(old);
        }
        if values.len() > MAX_ALTERNATIVES {
            values = vec![vec![Seg::Unknown {
                raw: format!("${name}"),
                decoded: false,
            }]];
        }
        self.env.vars.insert(name.to_owned(), values);
    }

    /// A variable's possible values (unknown when the script did not set it).
    fn lookup(&self, name: &str) -> Vec<Vec<Seg>> {
        match self.env.vars.get(name) {
            Some(values) => values.clone(),
            None => vec![vec![Seg::Unknown {
                raw: format!("${name}"),
                decoded: false,
            }]],
        }
    }

    fn declaration(&mut self, node: Node) {
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            if child.kind() == "variable_assignment" {
                self.assign(child);
            } else {
                self.generic(child);
            }
        }
    }

    fn unset(&mut self, node: Node) {
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            let name = self.text(child).to_owned();
            self.env.vars.remove(&name);
        }
    }

    fn for_loop(&mut self, node: Node) {
        let mut values: Vec<Vec<Seg>> = Vec::new();
        let mut cursor = node.walk();
        let value_nodes: Vec<Node> = node.children_by_field_name("value", &mut cursor).collect();
        for value in &value_nodes {
            values.extend(self.fields(*value).into_iter().map(|f| f.segs));
        }
        if value_nodes.is_empty() {
            values.push(vec![Seg::Unknown {
                raw: "$@".into(),
                decoded: false,
            }]);
        }
        self.env.conditional += 1;
        if let Some(variable) = node.child_by_field_name("variable") {
            let name = self.text(variable).to_owned();
            if values.len() > MAX_ALTERNATIVES {
                values = self.lookup("__oi_too_many_values");
            }
            self.env.vars.insert(name, values);
        }
        if let Some(body) = node.child_by_field_name("body") {
            self.statements(body);
        }
        self.env.conditional -= 1;
    }

    fn function(&mut self, node: Node) {
        let name = node
            .child_by_field_name("name")
            .map(|n| unescape_bare(self.text(n)))
            .unwrap_or_default();
        if let Some(body) = node.child_by_field_name("body") {
            if !name.is_empty() && self.forks_itself(body, &name) {
                self.block(format!(
                    "it is a fork bomb (the function `{name}` starts copies of itself in a pipe or in the background)"
                ));
            }
            let saved = self.env.clone();
            for n in 0..10 {
                self.env.vars.remove(&n.to_string());
            }
            for key in ["@", "*", "#"] {
                self.env.vars.remove(key);
            }
            self.env.conditional += 1;
            self.statement(body, Output::Nothing);
            self.restore(saved);
        }
    }

    /// Whether the function body calls `name` inside a pipeline or in the background.
    fn forks_itself(&self, body: Node, name: &str) -> bool {
        let mut stack = vec![body];
        while let Some(node) = stack.pop() {
            if node.kind() == "command" {
                let called = node
                    .child_by_field_name("name")
                    .map(|n| unescape_bare(self.text(n)));
                if called.as_deref() == Some(name) && forked(node, body) {
                    return true;
                }
            }
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
        false
    }
}

/// What `fields` feed to standard input (a here-string, a here-document).
fn output_of(fields: &[Field], newline: &str) -> Output {
    if fields.iter().any(Field::decoded) {
        return Output::Decoded;
    }
    let known: Option<Vec<String>> = fields.iter().map(Field::known).collect();
    match known {
        Some(parts) => Output::Literal(format!("{}{newline}", parts.join(" "))),
        None => Output::Unknown,
    }
}

fn is_statement(kind: &str) -> bool {
    matches!(
        kind,
        "command"
            | "pipeline"
            | "list"
            | "redirected_statement"
            | "subshell"
            | "compound_statement"
            | "do_group"
            | "variable_assignment"
            | "variable_assignments"
            | "declaration_command"
            | "unset_command"
            | "function_definition"
            | "for_statement"
            | "c_style_for_statement"
            | "while_statement"
            | "if_statement"
            | "case_statement"
            | "negated_command"
            | "test_command"
            | "command_substitution"
            | "process_substitution"
    )
}

/// Whether `command` (inside `body`) runs in a pipeline or in the background.
fn forked(command: Node, body: Node) -> bool {
    let mut node = command;
    loop {
        if node.kind() == "pipeline" {
            return true;
        }
        if node.next_sibling().is_some_and(|s| s.kind() == "&") {
            return true;
        }
        if node.id() == body.id() {
            return false;
        }
        match node.parent() {
            Some(parent) => node = parent,
            None => return false,
        }
    }
}
