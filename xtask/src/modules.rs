//! `cargo xtask modules`: the import graph of each crate's top-level modules (and xtask's),
//! read from the sources (`crate::`/`super::`/`self::` paths and `use` trees, a re-exported
//! name counted as the module that defines it), printed as one line per module with what it
//! uses, and checked for cycles (a module that, through others, uses itself), at two levels:
//! top-level modules, and file by file ([`crate::module_files`]), so a circle among the files
//! of one folder is seen too. Circles still to break are listed in [`KNOWN_CIRCLES`] with
//! their issue; any other circle, or a listed one that is gone, fails the check. A test runs
//! the check on the whole workspace, so a new cycle fails `cargo test`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::bail;

use crate::module_files::{Graph, file_graph};

/// The top-level module of a module path (`a::b` → `a`).
fn top_module(module: &str) -> &str {
    module.split("::").next().unwrap_or(module)
}

/// One crate's graph of top-level modules: its file graph ([`file_graph`]) with each file
/// counted as its top-level module (so re-exports are resolved the same way).
pub fn crate_graph(src: &Path) -> anyhow::Result<Graph> {
    let files = file_graph(src)?;
    let mut graph = Graph::default();
    for (module, uses) in &files.edges {
        let from = top_module(module);
        let used = uses
            .iter()
            .map(|u| top_module(u))
            .filter(|u| *u != from)
            .map(str::to_owned);
        graph.edges.entry(from.to_owned()).or_default().extend(used);
    }
    Ok(graph)
}

/// The cycles of `graph`: each a set of modules that all reach one another (Tarjan's strongly
/// connected components with more than one module).
pub fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    struct State<'a> {
        graph: &'a Graph,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        next: usize,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(state: &mut State<'a>, node: &'a str) {
        state.index.insert(node, state.next);
        state.low.insert(node, state.next);
        state.next += 1;
        state.stack.push(node);
        state.on_stack.insert(node);
        let graph = state.graph;
        for next in graph.edges.get(node).into_iter().flatten() {
            let next = next.as_str();
            if !state.index.contains_key(next) {
                visit(state, next);
                let low = state.low[node].min(state.low[next]);
                state.low.insert(node, low);
            } else if state.on_stack.contains(next) {
                let low = state.low[node].min(state.index[next]);
                state.low.insert(node, low);
            }
        }
        if state.low[node] == state.index[node] {
            let mut component = Vec::new();
            while let Some(member) = state.stack.pop() {
                state.on_stack.remove(member);
                component.push(member.to_owned());
                if member == node {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                state.found.push(component);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        found: Vec::new(),
    };
    for node in graph.edges.keys() {
        if !state.index.contains_key(node.as_str()) {
            visit(&mut state, node);
        }
    }
    state.found
}

/// The workspace's crates, xtask among them: (name, src folder).
fn workspace_crates(root: &Path) -> anyhow::Result<Vec<(String, PathBuf)>> {
    let mut crates = Vec::new();
    for entry in std::fs::read_dir(root.join("crates"))? {
        let dir = entry?.path();
        let src = dir.join("src");
        if src.is_dir() {
            let name = dir
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("?")
                .to_owned();
            crates.push((name, src));
        }
    }
    crates.push(("xtask".to_owned(), root.join("xtask/src")));
    crates.sort();
    Ok(crates)
}

/// The workspace root (the folder above xtask).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// A circle the check knows of and accepts until it is broken: each one names the issue that
/// will break it. The list can only shrink: a listed circle that no longer exists fails the
/// check (take it off the list), and so does any circle not on it.
pub struct KnownCircle {
    /// The crate's folder name.
    pub krate: &'static str,
    /// Whether the circle is among files ([`file_graph`]) rather than top-level modules.
    pub files: bool,
    /// Its modules, sorted.
    pub modules: &'static [&'static str],
    /// The issue that breaks it.
    pub issue: u32,
}

/// The circles still to break.
pub const KNOWN_CIRCLES: &[KnownCircle] = &[];

impl KnownCircle {
    fn describe(&self) -> String {
        circle_name(self.krate, self.files, self.modules)
    }
}

/// A circle as the check prints it (`oi-core (files): a ↔ b`).
fn circle_name(krate: &str, files: bool, modules: &[impl AsRef<str>]) -> String {
    let level = if files { " (files)" } else { "" };
    let names: Vec<&str> = modules.iter().map(AsRef::as_ref).collect();
    format!("{krate}{level}: {}", names.join(" ↔ "))
}

/// One crate's module graph and the cycles in it.
pub struct CrateModules {
    /// The crate's folder name.
    pub name: String,
    /// Its graph.
    pub graph: Graph,
    /// Its cycles (empty when there are none).
    pub cycles: Vec<Vec<String>>,
    /// Its cycles among files (empty when there are none).
    pub file_cycles: Vec<Vec<String>>,
}

/// Every crate's graph and cycles.
pub fn check_workspace(root: &Path) -> anyhow::Result<Vec<CrateModules>> {
    let mut out = Vec::new();
    for (name, src) in workspace_crates(root)? {
        let graph = crate_graph(&src)?;
        let cycles = cycles(&graph);
        let file_cycles = self::cycles(&file_graph(&src)?);
        out.push(CrateModules {
            name,
            graph,
            cycles,
            file_cycles,
        });
    }
    Ok(out)
}

/// What the check found, against [`KNOWN_CIRCLES`].
#[derive(Debug, Default)]
pub struct Verdict {
    /// Circles on the list, still there (accepted, printed).
    pub known: Vec<String>,
    /// Circles not on the list (the check fails).
    pub new: Vec<String>,
    /// Listed circles that no longer exist (the check fails until they leave the list).
    pub gone: Vec<String>,
}

/// Sorts the circles `crates` hold into known, new, and (listed but) gone.
pub fn judge(crates: &[CrateModules], known: &[KnownCircle]) -> Verdict {
    let mut found = BTreeSet::new();
    for c in crates {
        for (files, cycles) in [(false, &c.cycles), (true, &c.file_cycles)] {
            for cycle in cycles {
                found.insert(circle_name(&c.name, files, cycle));
            }
        }
    }
    let listed: BTreeMap<String, u32> = known.iter().map(|k| (k.describe(), k.issue)).collect();
    let mut verdict = Verdict::default();
    for circle in &found {
        match listed.get(circle) {
            Some(issue) => verdict.known.push(format!("{circle} (issue {issue})")),
            None => verdict.new.push(circle.clone()),
        }
    }
    for (circle, issue) in listed {
        if !found.contains(&circle) {
            verdict.gone.push(format!("{circle} (issue {issue})"));
        }
    }
    verdict
}

/// `cargo xtask modules`: prints each crate's module graph; fails on a cycle not in
/// [`KNOWN_CIRCLES`], or on a listed one that is gone.
pub fn run(_args: &[String]) -> anyhow::Result<()> {
    let crates = check_workspace(&root())?;
    for CrateModules { name, graph, .. } in &crates {
        println!("{name}");
        for (module, uses) in &graph.edges {
            let uses: Vec<&str> = uses.iter().map(String::as_str).collect();
            if uses.is_empty() {
                println!("  {module}");
            } else {
                println!("  {module} → {}", uses.join(", "));
            }
        }
    }
    report(&judge(&crates, KNOWN_CIRCLES))
}

/// Prints the known circles; an error for new ones and for listed ones that are gone.
fn report(verdict: &Verdict) -> anyhow::Result<()> {
    for circle in &verdict.known {
        println!("known import cycle, still to break: {circle}");
    }
    let mut problems = Vec::new();
    if !verdict.new.is_empty() {
        problems.push(format!("import cycles:\n  {}", verdict.new.join("\n  ")));
    }
    if !verdict.gone.is_empty() {
        problems.push(format!(
            "listed in KNOWN_CIRCLES (xtask/src/modules.rs) but gone, take them off the list:\n  {}",
            verdict.gone.join("\n  ")
        ));
    }
    if !problems.is_empty() {
        bail!("{}", problems.join("\n"));
    }
    println!("no import cycles beyond the {} known", verdict.known.len());
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn cycles_are_the_strongly_connected_components() {
        let mut graph = Graph::default();
        for (from, to) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")] {
            graph
                .edges
                .entry(from.to_owned())
                .or_default()
                .insert(to.to_owned());
        }
        graph.edges.entry("d".to_owned()).or_default();
        assert_eq!(cycles(&graph), vec![vec!["a", "b", "c"]]);
    }

    #[test]
    fn a_listed_circle_is_accepted_a_new_one_fails_and_a_gone_one_fails() {
        let crates = [CrateModules {
            name: "k".to_owned(),
            graph: Graph::default(),
            cycles: vec![vec!["a".to_owned(), "b".to_owned()]],
            file_cycles: vec![vec!["x".to_owned(), "y".to_owned()]],
        }];
        let known = [
            KnownCircle {
                krate: "k",
                files: false,
                modules: &["a", "b"],
                issue: 1,
            },
            KnownCircle {
                krate: "k",
                files: true,
                modules: &["p", "q"],
                issue: 2,
            },
        ];
        let verdict = judge(&crates, &known);
        assert_eq!(verdict.known, ["k: a ↔ b (issue 1)"]);
        assert_eq!(verdict.new, ["k (files): x ↔ y"]);
        assert_eq!(verdict.gone, ["k (files): p ↔ q (issue 2)"]);
        assert!(report(&verdict).is_err());
        let fine = judge(&crates[..0], &[]);
        assert!(report(&fine).is_ok());
    }

    /// No crate of the workspace (xtask included) has a cycle among its modules (issue 12)
    /// beyond [`KNOWN_CIRCLES`], and each of those still exists (issue 41): a new cycle fails
    /// `cargo test`, and so does a broken one left on the list.
    #[test]
    fn the_workspace_has_no_import_cycles() {
        let crates = check_workspace(&root()).unwrap();
        let computer_files = file_graph(&root().join("crates/oi-computer/src")).unwrap();
        assert!(
            computer_files.edges.len() > 40,
            "oi-computer's files were read: {:?}",
            computer_files.edges.keys()
        );
        assert!(
            crates
                .iter()
                .any(|c| c.name == "xtask" && c.graph.edges.len() > 10),
            "xtask was read"
        );
        let verdict = judge(&crates, KNOWN_CIRCLES);
        for circle in &verdict.known {
            println!("known import cycle, still to break: {circle}");
        }
        assert!(verdict.new.is_empty(), "import cycles: {:?}", verdict.new);
        assert!(
            verdict.gone.is_empty(),
            "gone, take them off KNOWN_CIRCLES: {:?}",
            verdict.gone
        );
    }
}
