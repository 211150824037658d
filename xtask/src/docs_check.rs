//! `cargo xtask docs-check`: every file and every `path::test` README.md and docs/*.md name
//! exists (issue 41). A path (`crates/oi-server/tests/ws.rs`) must be a file or folder of the
//! workspace (or, for a relative link, beside the document); `path::name` must name a
//! function, test or module in that file (`fn name`, `def name`, `function name`, `mod name`);
//! `…::name` after a full path on the same line (docs/security.md's table cells) is read
//! against that path; a bare `file.rs::name` against the workspace's files of that name. A
//! test runs the check, so a stale reference fails `cargo test`.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

/// The extensions a token needs to be read as a file path.
const EXTENSIONS: &[&str] = &[
    "rs", "md", "py", "pyi", "toml", "yaml", "yml", "json", "jsonl", "js", "html", "css", "sh",
    "txt", "svg", "png", "gguf", "lock", "cfg",
];

/// Folders never searched for a bare file name.
const SKIPPED_DIRS: &[&str] = &["target", ".git", "node_modules", ".venv", "venv"];

/// One reference that does not resolve: where it is and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stale {
    /// The document (relative to the workspace root).
    pub doc: String,
    /// Its line, from 1.
    pub line: usize,
    /// The reference as written.
    pub reference: String,
    /// What is missing.
    pub problem: String,
}

/// A reference read from a document: a file path, with the item it names (if any).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Reference {
    /// As written.
    text: String,
    /// The file part (`crates/x/tests/y.rs`; `None` for a `…::name` continuation).
    path: Option<String>,
    /// The item named after the file (`name` of `y.rs::name` or `y.rs::module::name`).
    item: Option<String>,
}

/// The words of a line that might be references: each inline code span without spaces
/// (`` `crates/x/tests/y.rs::name` ``) and each link target (`[text](../README.md)`); prose,
/// code with spaces in it and fenced blocks (diagrams, shell sessions) are not read.
fn words(line: &str) -> Vec<&str> {
    let mut found: Vec<&str> = line
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|span| !span.contains(char::is_whitespace))
        .collect();
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        let target = &rest[at + 2..];
        let end = target.find(')').unwrap_or(target.len());
        let target = &target[..end];
        found.push(target.split('#').next().unwrap_or(target));
        rest = &rest[at + 2 + end..];
    }
    found
}

/// Whether `name` is an identifier (a test or function name).
fn is_identifier(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// The reference `word` is, if it is one: `dir/file.ext`, `dir/file.rs::a::name`,
/// `file.rs::name`, or `…::name`.
fn reference(word: &str) -> Option<Reference> {
    if let Some(item) = word.strip_prefix("…::") {
        let item = item.rsplit("::").next().unwrap_or(item);
        return is_identifier(item).then(|| Reference {
            text: word.to_owned(),
            path: None,
            item: Some(item.to_owned()),
        });
    }
    let (path, item) = match word.split_once("::") {
        Some((path, rest)) => (path, Some(rest.rsplit("::").next().unwrap_or(rest))),
        None => (word, None),
    };
    if item.is_some_and(|i| !is_identifier(i)) {
        return None;
    }
    let extension = path.rsplit_once('.').map(|(_, e)| e)?;
    let odd = |c: char| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'));
    let plain =
        !path.starts_with(['/', '~', '.']) || path.starts_with(".ci/") || path.starts_with("../");
    let usable = EXTENSIONS.contains(&extension)
        && plain
        && !path.contains("://")
        && !path.contains(odd)
        && !path.ends_with('/');
    // A bare file name counts if it is Rust (`store.rs`: some file of the workspace) or has an
    // item (`file.rs::name`); a bare `page.html` or `default.yaml` is just a name.
    let counts = path.contains('/') || item.is_some() || extension == "rs";
    (usable && counts).then(|| Reference {
        text: word.to_owned(),
        path: Some(path.to_owned()),
        item: item.map(str::to_owned),
    })
}

/// Whether `text` (a source file) defines `name` (a function, test, module, constant or type).
fn defines(text: &str, name: &str) -> bool {
    let keywords = [
        "fn ",
        "def ",
        "function ",
        "mod ",
        "const ",
        "static ",
        "struct ",
        "enum ",
        "trait ",
        "type ",
        "class ",
    ];
    keywords.iter().any(|keyword| {
        let needle = format!("{keyword}{name}");
        text.match_indices(&needle).any(|(at, _)| {
            let after = text[at + needle.len()..].chars().next();
            let before = text[..at].chars().next_back();
            !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
                && !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
    })
}

/// Whether `path` is a placeholder or a file made at run time, not one of the workspace's
/// (`local/PATH.gguf`, `target/bench-tasks/runs/LABEL/TASK-N.txt`).
fn not_in_the_workspace(path: &str) -> bool {
    const PLACEHOLDERS: &[&str] = &["PATH", "LABEL", "TASK", "N", "DIR", "FILE", "NAME"];
    let placeholder = path
        .split(['/', '.', '-', '_'])
        .any(|part| PLACEHOLDERS.contains(&part));
    placeholder || path.starts_with("target/") || ELSEWHERE.contains(&path)
}

/// Files that documents name in another repository: Open Interpreter 0.4.3's own tests,
/// fetched at run time by `cargo xtask original-tests` (docs/differences.md).
const ELSEWHERE: &[&str] = &[
    "tests/test_interpreter.py",
    "tests/core/test_async_core.py",
    "tests/core/computer/test_computer.py",
    "tests/core/computer/files/test_files.py",
];

/// Every file beneath `dir` (skipping build output and hidden folders), relative to `root`.
fn all_files(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let file_name = entry.file_name();
        let file_name = file_name.to_string_lossy();
        if path.is_dir() {
            if !SKIPPED_DIRS.contains(&file_name.as_ref()) && !file_name.starts_with('.') {
                all_files(root, &path, out);
            }
        } else if let Ok(relative) = path.strip_prefix(root) {
            out.push(relative.to_string_lossy().into_owned());
        }
    }
}

/// The files `path` may mean: itself beneath the root or beside the document, else every file
/// whose path ends with it (`sandbox/beneath.rs`, a bare `tests.rs`, named within a crate).
fn files_meant(root: &Path, doc_dir: &Path, files: &[String], path: &str) -> Vec<PathBuf> {
    let direct = [root.join(path), doc_dir.join(path)]
        .into_iter()
        .find(|p| p.exists());
    if let Some(direct) = direct {
        return vec![direct];
    }
    let tail = format!("/{path}");
    files
        .iter()
        .filter(|f| f.ends_with(&tail))
        .map(|f| root.join(f))
        .collect()
}

/// Checks one document's text; `doc` is its path relative to `root`.
pub fn check_text(root: &Path, doc: &str, text: &str) -> Vec<Stale> {
    let mut files = Vec::new();
    all_files(root, root, &mut files);
    let doc_dir = root
        .join(doc)
        .parent()
        .map_or_else(|| root.to_path_buf(), Path::to_path_buf);
    let mut stale = Vec::new();
    let mut fenced = false;
    for (index, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // The files of the last `path::name` on the line, for `…::name` after it.
        let mut last: Vec<PathBuf> = Vec::new();
        for word in words(line) {
            let Some(found) = reference(word) else {
                continue;
            };
            let mut problem = |problem: String| {
                stale.push(Stale {
                    doc: doc.to_owned(),
                    line: index + 1,
                    reference: found.text.clone(),
                    problem,
                });
            };
            let candidates = match &found.path {
                None if last.is_empty() => {
                    problem("`…::` with no `path::name` before it on the line".to_owned());
                    continue;
                }
                None => last.clone(),
                Some(path) if not_in_the_workspace(path) => continue,
                Some(path) => {
                    let meant = files_meant(root, &doc_dir, &files, path);
                    if meant.is_empty() {
                        problem("no such file".to_owned());
                        continue;
                    }
                    if found.item.is_some() {
                        last.clone_from(&meant);
                    }
                    meant
                }
            };
            let Some(item) = &found.item else { continue };
            let defined = candidates
                .iter()
                .any(|file| std::fs::read_to_string(file).is_ok_and(|text| defines(&text, item)));
            if !defined {
                let files: Vec<String> = candidates
                    .iter()
                    .map(|f| f.strip_prefix(root).unwrap_or(f).display().to_string())
                    .collect();
                problem(format!("no `fn {item}` in {}", files.join(", ")));
            }
        }
    }
    stale
}

/// The documents checked: README.md and docs/*.md, relative to `root`.
fn documents(root: &Path) -> anyhow::Result<Vec<String>> {
    let mut docs = vec!["README.md".to_owned()];
    let mut more: Vec<String> = std::fs::read_dir(root.join("docs"))
        .context("reading docs/")?
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_owned))
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
        .collect();
    more.sort();
    docs.extend(more);
    Ok(docs)
}

/// Checks README.md and docs/*.md beneath `root`.
pub fn check(root: &Path) -> anyhow::Result<Vec<Stale>> {
    let mut stale = Vec::new();
    for doc in documents(root)? {
        let text =
            std::fs::read_to_string(root.join(&doc)).with_context(|| format!("reading {doc}"))?;
        stale.extend(check_text(root, &doc, &text));
    }
    Ok(stale)
}

/// The workspace root (the folder above xtask).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// `cargo xtask docs-check`: lists every reference in README.md and docs/*.md that does not
/// resolve; fails if there is one.
pub fn run(_args: &[String]) -> anyhow::Result<()> {
    let stale = check(&root())?;
    if stale.is_empty() {
        println!("every file and path::test named in README.md and docs/*.md exists");
        return Ok(());
    }
    let lines: Vec<String> = stale
        .iter()
        .map(|s| format!("{}:{}: {} ({})", s.doc, s.line, s.reference, s.problem))
        .collect();
    bail!(
        "{} stale references:\n  {}",
        stale.len(),
        lines.join("\n  ")
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn references_are_read_in_their_forms() {
        let r = |w: &str| reference(w).map(|r| (r.path, r.item));
        let owned =
            |p: Option<&str>, i: Option<&str>| Some((p.map(String::from), i.map(String::from)));
        assert_eq!(
            r("crates/a/tests/b.rs"),
            owned(Some("crates/a/tests/b.rs"), None)
        );
        assert_eq!(
            r("crates/a/src/b.rs::tests::name"),
            owned(Some("crates/a/src/b.rs"), Some("name"))
        );
        assert_eq!(r("b.rs::name"), owned(Some("b.rs"), Some("name")));
        assert_eq!(r("…::name"), owned(None, Some("name")));
        for not_one in [
            "b.py",
            "/etc/passwd.txt",
            "~/.config/x.yaml",
            "https://x.org/a.md",
            "crates/*/src/a.rs",
            "a/<pid>.rs",
            "oi_core::visible",
        ] {
            assert_eq!(r(not_one), None, "{not_one}");
        }
    }

    #[test]
    fn stale_references_are_found_and_live_ones_pass() {
        let root = root();
        let text = "| `xtask/src/docs_check.rs::references_are_read_in_their_forms`, `…::stale_references_are_found_and_live_ones_pass` |\n\
                    See `xtask/src/missing.rs` and `xtask/src/docs_check.rs::no_such_test`, `…::also_missing`.\n\
                    `docs_check.rs::check_text` and [the docs](../README.md).\n";
        let stale = check_text(&root, "docs/x.md", text);
        let found: Vec<(usize, &str)> = stale
            .iter()
            .map(|s| (s.line, s.reference.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                (2, "xtask/src/missing.rs"),
                (2, "xtask/src/docs_check.rs::no_such_test"),
                (2, "…::also_missing")
            ]
        );
    }

    /// Every file and `path::test` README.md and docs/*.md name exists (issue 41).
    #[test]
    fn the_docs_name_only_files_and_tests_that_exist() {
        let stale = check(&root()).unwrap();
        let lines: Vec<String> = stale
            .iter()
            .map(|s| format!("{}:{}: {} ({})", s.doc, s.line, s.reference, s.problem))
            .collect();
        assert!(
            stale.is_empty(),
            "stale references:\n  {}",
            lines.join("\n  ")
        );
    }
}
