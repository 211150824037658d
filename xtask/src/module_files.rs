//! The file-level import graph of one crate, for `cargo xtask modules`: every source file is
//! a module (`src/a/b.rs` → `a::b`), and a file uses each module its `crate::…`, `super::…`
//! and `self::…` paths (and `use` trees, braces expanded) lead to, the longest path that is a
//! file. A parent declaring and re-exporting its own children is structure, not an import, so
//! an edge from a module to its descendants is not counted; a child that names its parent is.
//! Circles among siblings, or through a parent, are what this finds.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::modules::{Graph, rust_files, without_test_items};

/// The module path of `file` beneath `src` (`a/b.rs` and `a/b/mod.rs` → `a::b`; the crate
/// root → `None`).
fn module_path(src: &Path, file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src).ok()?;
    let mut parts: Vec<String> = relative
        .components()
        .filter_map(|c| c.as_os_str().to_str().map(str::to_owned))
        .collect();
    let last = parts.pop()?;
    let stem = last.strip_suffix(".rs")?;
    if parts.is_empty() && matches!(stem, "lib" | "main") {
        return None;
    }
    if stem != "mod" {
        parts.push(stem.to_owned());
    }
    (!parts.is_empty()).then(|| parts.join("::"))
}

/// The code of `text` without comments and string literals (so `"crate::x"` names nothing),
/// and without its `#[cfg(test)]` items, as one string.
fn code_of(text: &str) -> String {
    let kept = without_test_items(text).join("\n");
    let mut out = String::with_capacity(kept.len());
    let mut chars = kept.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for next in chars.by_ref() {
                    if next == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut previous = ' ';
                for next in chars.by_ref() {
                    if previous == '*' && next == '/' {
                        break;
                    }
                    previous = next;
                }
                out.push(' ');
            }
            '\'' => {
                // A char literal ('"', '\'', '\n'), or a lifetime (left as it is).
                let ahead: Vec<char> = chars.clone().take(3).collect();
                let literal = match ahead.as_slice() {
                    ['\\', _, '\''] => 3,
                    [_, '\'', ..] => 2,
                    _ => 0,
                };
                for _ in 0..literal {
                    chars.next();
                }
                out.push_str("' '");
            }
            'r' if chars.peek() == Some(&'#') => {
                // A raw string r#"…"# (any number of #).
                let mut hashes = 0;
                while chars.peek() == Some(&'#') {
                    chars.next();
                    hashes += 1;
                }
                if chars.peek() == Some(&'"') {
                    chars.next();
                    let closing: String = std::iter::once('"')
                        .chain(std::iter::repeat_n('#', hashes))
                        .collect();
                    let mut seen = String::new();
                    for next in chars.by_ref() {
                        seen.push(next);
                        if seen.ends_with(&closing) {
                            break;
                        }
                    }
                    out.push_str("\"\"");
                } else {
                    out.push('r');
                }
            }
            '"' => {
                let mut escaped = false;
                for next in chars.by_ref() {
                    if !escaped && next == '"' {
                        break;
                    }
                    escaped = !escaped && next == '\\';
                }
                out.push_str("\"\"");
            }
            _ => out.push(c),
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Reads a path that starts at `text` (`a::b::{c, d::e}`), appending every full path (as
/// segment lists, prefixed by `prefix`) to `out`; returns how many bytes it read.
fn read_tree(text: &str, prefix: &[String], out: &mut Vec<Vec<String>>) -> usize {
    let mut segments = prefix.to_vec();
    let mut at = 0;
    loop {
        let rest = &text[at..];
        let skipped = rest.len() - rest.trim_start().len();
        at += skipped;
        let rest = &text[at..];
        if let Some(inside) = rest.strip_prefix('{') {
            at += 1;
            let mut read = 0;
            loop {
                let item = &inside[read..];
                let blank = item.len() - item.trim_start().len();
                read += blank;
                if inside[read..].starts_with('}') || read >= inside.len() {
                    read += 1;
                    break;
                }
                read += read_tree(&inside[read..], &segments, out);
                let after = &inside[read..];
                let blank = after.len() - after.trim_start().len();
                read += blank;
                if inside[read..].starts_with(',') {
                    read += 1;
                }
            }
            return at + read.min(inside.len());
        }
        let end = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
        if end == 0 {
            break;
        }
        segments.push(rest[..end].to_owned());
        at += end;
        if text[at..].starts_with("::") {
            at += 2;
        } else {
            break;
        }
    }
    out.push(segments);
    at
}

/// Every path `code` names from `crate`, `super` or `self`, as absolute module segments from
/// the crate root (`module` is the file's own path).
fn named_paths(code: &str, module: &[String]) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let bytes = code.as_bytes();
    let mut at = 0;
    while at < code.len() {
        let rest = &code[at..];
        let start_ok = at == 0 || !is_ident(bytes[at - 1] as char) && bytes[at - 1] != b':';
        let anchor = ["crate::", "super::", "self::"]
            .into_iter()
            .find(|a| rest.starts_with(a));
        let (Some(anchor), true) = (anchor, start_ok) else {
            at += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        };
        // `super::super::x`: climb once per `super`.
        let mut base: Vec<String> = match anchor {
            "crate::" => Vec::new(),
            "super::" => module[..module.len().saturating_sub(1)].to_vec(),
            _ => module.to_vec(),
        };
        let mut after = at + anchor.len();
        while code[after..].starts_with("super::") {
            base.pop();
            after += "super::".len();
        }
        let mut paths = Vec::new();
        let read = read_tree(&code[after..], &base, &mut paths);
        found.extend(paths);
        at = after + read.max(1);
    }
    found
}

/// Reads one crate's `src` folder, file by file.
pub fn file_graph(src: &Path) -> anyhow::Result<Graph> {
    let mut files: Vec<PathBuf> = Vec::new();
    rust_files(src, &mut files).with_context(|| format!("reading {}", src.display()))?;
    let modules: BTreeSet<String> = files.iter().filter_map(|f| module_path(src, f)).collect();
    let mut graph = Graph::default();
    for file in &files {
        let Some(module) = module_path(src, file) else {
            continue;
        };
        let own: Vec<String> = module.split("::").map(str::to_owned).collect();
        let text = std::fs::read_to_string(file)?;
        let mut used = BTreeSet::new();
        for path in named_paths(&code_of(&text), &own) {
            // The longest prefix of the path that is a file of the crate.
            let target = (1..=path.len())
                .rev()
                .map(|n| path[..n].join("::"))
                .find(|candidate| modules.contains(candidate));
            let Some(target) = target else { continue };
            let descendant = target.starts_with(&format!("{module}::"));
            if target != module && !descendant {
                used.insert(target);
            }
        }
        graph.edges.entry(module).or_default().extend(used);
    }
    Ok(graph)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn strings(paths: Vec<Vec<String>>) -> Vec<String> {
        paths.into_iter().map(|p| p.join("::")).collect()
    }

    #[test]
    fn paths_are_read_from_use_trees_and_code_relative_to_the_file() {
        let module = ["a".to_owned(), "b".to_owned()];
        let code = code_of(
            "use crate::{x::{y, z::W}, v};\nuse super::sib::T;\nuse self::kid::K;\n\
             let s = \"crate::nothing\"; // crate::neither\nlet q = '\"'; let r = r#\"crate::raw\"#;\n\
             fn f<'a>(x: &'a str) { super::super::top::g() }\n",
        );
        assert_eq!(
            strings(named_paths(&code, &module)),
            [
                "x::y",
                "x::z::W",
                "v",
                "a::sib::T",
                "a::b::kid::K",
                "top::g"
            ]
        );
    }

    #[test]
    fn module_paths_of_files() {
        let src = Path::new("/s");
        let path = |p: &str| module_path(src, &src.join(p));
        assert_eq!(path("lib.rs"), None);
        assert_eq!(path("a.rs").as_deref(), Some("a"));
        assert_eq!(path("a/b.rs").as_deref(), Some("a::b"));
        assert_eq!(path("a/mod.rs").as_deref(), Some("a"));
    }
}
