//! `cargo xtask modules`: the import graph of each crate's top-level modules, read from the
//! sources (`crate::module` paths, `use crate::{a, b}` lists), printed as one line per module
//! with what it uses, and checked for cycles (a module that, through others, uses itself),
//! at two levels: top-level modules, and file by file ([`crate::module_files`]), so a circle
//! among the files of one folder is seen too. A test runs the check on the whole workspace,
//! so a new cycle fails `cargo test`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

/// The top-level modules of one crate and the modules each one uses.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Graph {
    /// module → the other top-level modules it names.
    pub edges: BTreeMap<String, BTreeSet<String>>,
}

/// The top-level module a source file belongs to (`src/a.rs`, `src/a/b.rs` → `a`).
fn top_module(src: &Path, file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src).ok()?;
    let first = relative.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (!matches!(name, "lib" | "main")).then(|| name.to_owned())
}

pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            rust_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

fn identifier(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// `text` without its `#[cfg(test)]` items: the attribute, then the item up to its `;` or
/// its closing brace (braces counted, outside comments; good enough for this tree's code).
pub(crate) fn without_test_items(text: &str) -> Vec<&str> {
    let mut kept = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if !line.trim_start().starts_with("#[cfg(test)]") {
            kept.push(line);
            continue;
        }
        let mut depth: i64 = 0;
        let mut opened = false;
        for item_line in lines.by_ref() {
            let code = item_line.split("//").next().unwrap_or("");
            for c in code.chars() {
                match c {
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            let trimmed = code.trim_end();
            if (opened && depth <= 0) || (!opened && trimmed.ends_with(';')) {
                break;
            }
        }
    }
    kept
}

/// The top-level modules `text` names through `crate::`, outside its tests (a test module may
/// use anything; what matters is what the code itself depends on).
fn named_modules(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for line in without_test_items(text) {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            if let Some(list) = after.strip_prefix('{') {
                // `crate::{a, b::c, d}`: the first name of each item (one level of braces).
                let inside = list.split('}').next().unwrap_or("");
                for item in inside.split(',') {
                    let name = identifier(item.trim());
                    if !name.is_empty() {
                        names.insert(name.to_owned());
                    }
                }
            } else {
                let name = identifier(after);
                if !name.is_empty() {
                    names.insert(name.to_owned());
                }
            }
            rest = after;
        }
    }
    names
}

/// Reads one crate's `src` folder.
pub fn crate_graph(src: &Path) -> anyhow::Result<Graph> {
    let mut files = Vec::new();
    rust_files(src, &mut files).with_context(|| format!("reading {}", src.display()))?;
    let modules: BTreeSet<String> = files.iter().filter_map(|f| top_module(src, f)).collect();
    let mut graph = Graph::default();
    for module in &modules {
        graph.edges.entry(module.clone()).or_default();
    }
    for file in &files {
        let Some(module) = top_module(src, file) else {
            continue;
        };
        let text = std::fs::read_to_string(file)?;
        let used: Vec<String> = named_modules(&text)
            .into_iter()
            .filter(|name| name != &module && modules.contains(name))
            .collect();
        graph.edges.entry(module).or_default().extend(used);
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

/// The workspace's crates: (name, src folder).
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
    crates.sort();
    Ok(crates)
}

/// The workspace root (the folder above xtask).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
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
        let file_cycles = self::cycles(&crate::module_files::file_graph(&src)?);
        out.push(CrateModules {
            name,
            graph,
            cycles,
            file_cycles,
        });
    }
    Ok(out)
}

/// `cargo xtask modules`: prints each crate's module graph; fails on a cycle.
pub fn run(_args: &[String]) -> anyhow::Result<()> {
    let mut all_cycles = Vec::new();
    for CrateModules {
        name,
        graph,
        cycles: found,
        file_cycles,
    } in check_workspace(&root())?
    {
        println!("{name}");
        for (module, uses) in &graph.edges {
            let uses: Vec<&str> = uses.iter().map(String::as_str).collect();
            if uses.is_empty() {
                println!("  {module}");
            } else {
                println!("  {module} → {}", uses.join(", "));
            }
        }
        for cycle in found {
            all_cycles.push(format!("{name}: {}", cycle.join(" ↔ ")));
        }
        for cycle in file_cycles {
            all_cycles.push(format!("{name} (files): {}", cycle.join(" ↔ ")));
        }
    }
    if !all_cycles.is_empty() {
        bail!("import cycles:\n  {}", all_cycles.join("\n  "));
    }
    println!("no import cycles");
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn test_items_are_skipped_and_what_follows_them_is_read() {
        let text = "use crate::a;\n#[cfg(test)]\nuse crate::t1;\n#[cfg(test)]\nfn helper() {\n    crate::t2::x();\n}\nuse crate::b;\n#[cfg(test)]\nmod tests {\n    use crate::t3;\n}\n";
        let names: Vec<String> = named_modules(text).into_iter().collect();
        assert_eq!(names, ["a", "b"]);
    }

    #[test]
    fn names_and_cycles() {
        let names = named_modules(
            "use crate::a::b;\nuse crate::{c, d::e};\n// crate::ignored\nlet x = crate::f::g();",
        );
        assert_eq!(
            names,
            ["a", "c", "d", "f"].into_iter().map(String::from).collect()
        );
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

    /// No crate of the workspace has a cycle among its modules (issue 12): a new one fails
    /// `cargo test`.
    #[test]
    fn the_workspace_has_no_import_cycles() {
        let crates = check_workspace(&root()).unwrap();
        let computer_files =
            crate::module_files::file_graph(&root().join("crates/oi-computer/src")).unwrap();
        assert!(
            computer_files.edges.len() > 40,
            "oi-computer's files were read: {:?}",
            computer_files.edges.keys()
        );
        let cycles: Vec<_> = crates
            .iter()
            .filter(|c| !c.cycles.is_empty() || !c.file_cycles.is_empty())
            .map(|c| (c.name.clone(), c.cycles.clone(), c.file_cycles.clone()))
            .collect();
        assert!(cycles.is_empty(), "import cycles: {cycles:?}");
    }
}
