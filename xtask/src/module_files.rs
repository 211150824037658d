//! The file-level import graph of one crate, for `cargo xtask modules`: every source file is
//! a module (`src/a/b.rs` → `a::b`), and a file uses each module its `crate::…`, `super::…`
//! and `self::…` paths (and `use` trees, braces expanded) lead to, the longest path that is a
//! file. A parent declaring and re-exporting its own children is structure, not an import, so
//! an edge from a module to its descendants is not counted; a child that names its parent is.
//! Circles among siblings, or through a parent, are what this finds. A name a module binds
//! with `use` (a `pub use` re-export in lib.rs or a mod.rs, or any import) is followed to the
//! module that defines it: `crate::Interpreter` is an edge to `interpreter`, not to the root.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::Context;

/// A module graph: each module and the modules it uses.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Graph {
    /// module → the other modules it names.
    pub edges: BTreeMap<String, BTreeSet<String>>,
}

/// Every `.rs` file beneath `dir`, appended to `out`.
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

/// The names each module binds with `use` (its re-exports, `pub use`, and its imports): module
/// path (`""` for the crate root) → bound name → the absolute path it stands for. Only paths
/// into the crate are kept (`crate::`, `self::`, `super::`, or a child module of the file).
type Aliases = BTreeMap<String, BTreeMap<String, Vec<String>>>;

/// The tokens of a `use` tree: names, `::`, `{`, `}`, `,`, `*`.
fn use_tokens(text: &str) -> Vec<&str> {
    let mut tokens = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let rest = &text[at..];
        let c = rest.chars().next().unwrap_or(' ');
        let len = if rest.starts_with("::") {
            2
        } else if is_ident(c) {
            rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len())
        } else {
            c.len_utf8()
        };
        if !c.is_whitespace() {
            tokens.push(&rest[..len]);
        }
        at += len;
    }
    tokens
}

/// Reads one `use` tree from `tokens[*at..]` under `prefix`: each path it imports, with the
/// name it binds (`None` for a glob).
fn use_tree(
    tokens: &[&str],
    at: &mut usize,
    prefix: &[String],
    out: &mut Vec<(Vec<String>, Option<String>)>,
) {
    let mut segments = prefix.to_vec();
    while let Some(&token) = tokens.get(*at) {
        *at += 1;
        match token {
            "::" => {}
            "*" => return out.push((segments, None)),
            "{" => {
                while tokens.get(*at).is_some_and(|t| *t != "}") {
                    let before = *at;
                    use_tree(tokens, at, &segments, out);
                    if tokens.get(*at) == Some(&",") || *at == before {
                        *at += 1;
                    }
                }
                *at += 1;
                return;
            }
            name if name.starts_with(is_ident) => {
                segments.push(name.to_owned());
                if tokens.get(*at) == Some(&"::") {
                    continue;
                }
                if name == "self" {
                    segments.pop();
                }
                let mut bound = segments.last().cloned();
                if tokens.get(*at) == Some(&"as") {
                    bound = tokens.get(*at + 1).map(|t| (*t).to_owned());
                    *at += 2;
                }
                return out.push((segments, bound));
            }
            _ => return,
        }
    }
}

/// Every `use` declaration of `code` (a file's code, from [`code_of`]): the paths it imports
/// with their bound names, relative as written.
fn use_declarations(code: &str) -> Vec<(Vec<String>, Option<String>)> {
    let mut found = Vec::new();
    let bytes = code.as_bytes();
    let mut at = 0;
    while let Some(offset) = code[at..].find("use") {
        let start = at + offset;
        at = start + "use".len();
        let before_ok =
            start == 0 || !is_ident(bytes[start - 1] as char) && bytes[start - 1] != b':';
        let after_ok = code[at..].starts_with(|c: char| c.is_whitespace() || c == '{' || c == ':');
        if !(before_ok && after_ok) {
            continue;
        }
        let end = code[at..].find(';').map_or(code.len(), |e| at + e);
        let tokens = use_tokens(&code[at..end]);
        let mut read = 0;
        use_tree(&tokens, &mut read, &[], &mut found);
        at = end;
    }
    found
}

/// `path` as written in module `own` (a `use` path), made absolute from the crate root; `None`
/// for a path outside the crate (another crate, `std`).
fn absolute(path: &[String], own: &[String], modules: &BTreeSet<String>) -> Option<Vec<String>> {
    let first = path.first()?;
    let (mut base, mut rest) = match first.as_str() {
        "crate" => (Vec::new(), &path[1..]),
        "self" => (own.to_vec(), &path[1..]),
        "super" => (own[..own.len().saturating_sub(1)].to_vec(), &path[1..]),
        _ => {
            let child = own
                .iter()
                .chain([first])
                .cloned()
                .collect::<Vec<_>>()
                .join("::");
            if !modules.contains(&child) {
                return None;
            }
            (own.to_vec(), path)
        }
    };
    while rest.first().is_some_and(|s| s == "super") {
        base.pop();
        rest = &rest[1..];
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The module a path (absolute segments) leads to: its longest prefix that is a file of the
/// crate, following the names modules bind with `use` (so `crate::Interpreter`, re-exported
/// by lib.rs, leads to `interpreter`, the module that defines it). `None` for the crate root.
fn resolve(path: &[String], modules: &BTreeSet<String>, aliases: &Aliases) -> Option<String> {
    let mut path = path.to_vec();
    let prefix_module = |path: &[String]| {
        (0..=path.len())
            .rev()
            .find(|&n| n == 0 || modules.contains(&path[..n].join("::")))
            .unwrap_or(0)
    };
    for _ in 0..16 {
        let n = prefix_module(&path);
        let module = path[..n].join("::");
        let target = path.get(n).and_then(|name| aliases.get(&module)?.get(name));
        match target {
            Some(target) => {
                let next: Vec<String> = target.iter().chain(&path[n + 1..]).cloned().collect();
                if next == path {
                    break;
                }
                path = next;
            }
            None => break,
        }
    }
    let n = prefix_module(&path);
    (n > 0).then(|| path[..n].join("::"))
}

/// Reads one crate's `src` folder, file by file.
pub fn file_graph(src: &Path) -> anyhow::Result<Graph> {
    let mut files: Vec<PathBuf> = Vec::new();
    rust_files(src, &mut files).with_context(|| format!("reading {}", src.display()))?;
    let modules: BTreeSet<String> = files.iter().filter_map(|f| module_path(src, f)).collect();
    let mut codes = Vec::new();
    let mut aliases = Aliases::new();
    for file in &files {
        let Some(relative) = file.strip_prefix(src).ok() else {
            continue;
        };
        let module = module_path(src, file);
        let is_root = relative.components().count() == 1
            && matches!(relative.to_str(), Some("lib.rs" | "main.rs"));
        if module.is_none() && !is_root {
            continue;
        }
        let own: Vec<String> = module
            .iter()
            .flat_map(|m| m.split("::"))
            .map(str::to_owned)
            .collect();
        let code = code_of(&std::fs::read_to_string(file)?);
        let bound = aliases
            .entry(module.clone().unwrap_or_default())
            .or_default();
        for (path, name) in use_declarations(&code) {
            if let (Some(name), Some(target)) = (name, absolute(&path, &own, &modules)) {
                bound.insert(name, target);
            }
        }
        if let Some(module) = module {
            codes.push((module, own, code));
        }
    }
    let mut graph = Graph::default();
    for (module, own, code) in codes {
        let mut used = BTreeSet::new();
        for path in named_paths(&code, &own) {
            let Some(target) = resolve(&path, &modules, &aliases) else {
                continue;
            };
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
    fn test_items_are_skipped_and_what_follows_them_is_read() {
        let code = code_of(
            "use crate::a;\n#[cfg(test)]\nuse crate::t1;\n#[cfg(test)]\nfn helper() {\n    crate::t2::x();\n}\nuse crate::b;\n#[cfg(test)]\nmod tests {\n    use crate::t3;\n}\n",
        );
        assert_eq!(strings(named_paths(&code, &[])), ["a", "b"]);
    }

    #[test]
    fn use_declarations_bind_names() {
        let code = code_of(
            "pub use approval::{Id, Request as Asked};\npub(crate) use self::kid::{self, K};\n\
             use crate::x::*;\nuse std::io;\nfn f() -> impl Sized + use<> {}\n",
        );
        let found: Vec<(String, Option<String>)> = use_declarations(&code)
            .into_iter()
            .map(|(p, b)| (p.join("::"), b))
            .collect();
        let some = |p: &str, b: &str| (p.to_owned(), Some(b.to_owned()));
        assert_eq!(
            found,
            [
                some("approval::Id", "Id"),
                some("approval::Request", "Asked"),
                some("self::kid", "kid"),
                some("self::kid::K", "K"),
                ("crate::x".to_owned(), None),
                some("std::io", "io"),
            ]
        );
    }

    /// `crate::Name`, re-exported by lib.rs (or a mod.rs) from the module that defines it,
    /// leads to that module (issue 41: the re-export hid oi-core's interpreter ↔ computer_api).
    #[test]
    fn re_exports_lead_to_the_defining_module() {
        let dir = std::env::temp_dir().join(format!("oi-modules-{}", std::process::id()));
        let write = |path: &str, text: &str| {
            let file = dir.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
        };
        write(
            "lib.rs",
            "mod a;\nmod b;\nmod c;\npub use a::Thing;\npub use c::Other as Renamed;\n",
        );
        write("a.rs", "pub struct Thing;\nfn f() { crate::b::g() }\n");
        write("b.rs", "pub fn g(_: &crate::Thing) {}\n");
        write("c/mod.rs", "mod d;\npub use d::Other;\n");
        write("c/d.rs", "pub struct Other;\nfn h(_: crate::Renamed) {}\n");
        write("e.rs", "use crate::c::Other;\n");
        let graph = file_graph(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let uses = |m: &str| graph.edges[m].iter().cloned().collect::<Vec<_>>();
        assert_eq!(uses("a"), ["b"]);
        assert_eq!(uses("b"), ["a"]);
        assert!(uses("c::d").is_empty(), "its own re-export is itself");
        assert_eq!(uses("e"), ["c::d"]);
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
