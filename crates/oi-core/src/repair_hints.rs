//! What to do about an error a small local model keeps repeating (issue 28): the repair
//! step's note quotes the error, and for the errors that the benchmark's transcripts show a
//! 0.5B model cannot read on its own it adds one sentence that says how to fix the cause —
//! a module never imported, a folder never created, a file name that is not in the folder,
//! a value that is not a number, shell written in a Python block.
//!
//! The hints name only what the error and the workspace show (the module, the folder, the
//! folder's files); they never carry an answer.

use std::path::Path;

/// Modules of Python's standard library a small model uses without importing them.
const STANDARD_MODULES: [&str; 24] = [
    "json",
    "os",
    "sys",
    "csv",
    "math",
    "re",
    "glob",
    "datetime",
    "time",
    "random",
    "statistics",
    "collections",
    "itertools",
    "functools",
    "subprocess",
    "shutil",
    "pathlib",
    "calendar",
    "string",
    "decimal",
    "fractions",
    "heapq",
    "textwrap",
    "io",
];

/// The most file names a hint lists.
const MAX_LISTED: usize = 12;

/// One sentence on how to fix the cause of `error` (the line `error_line` found), given the
/// code that failed, its language and the workspace; `None` when the error says enough.
pub(crate) fn error_hint(error: &str, language: &str, code: &str, dir: &Path) -> Option<String> {
    if let Some(name) = undefined_name(error) {
        return module_hint(name);
    }
    if let Some(path) = missing_path(error) {
        return missing_path_hint(&path, writes(language, code), dir);
    }
    if error.starts_with("ValueError:")
        && (error.contains("invalid literal for int()")
            || error.contains("could not convert string to float"))
    {
        return Some(not_a_number_hint(error));
    }
    if error.contains("'str' object has no attribute 'reverse'") {
        return Some(
            "A Python string has no reverse(): text[::-1] is the string reversed.".to_owned(),
        );
    }
    if let Some(module) = error
        .strip_prefix("ModuleNotFoundError: No module named ")
        .map(|m| m.trim_matches(['\'', '"']))
    {
        return Some(format!(
            "The module {module} is not installed: do it with Python's standard library instead."
        ));
    }
    if language == "python" && error.starts_with("SyntaxError") && looks_like_shell(code) {
        return Some(
            "That code is a shell command, not Python: send it in a ```shell block.".to_owned(),
        );
    }
    None
}

/// What to do about a value that did not convert: one with digits in it (`'$1,200'`) is to be
/// cleaned; one without (`'n/a'`) skipped. "Clean or skip" made the 0.5B model strip `n/a`
/// and fail again (bench-tasks, bad-line-total); "skip" alone would drop `$1,200`.
fn not_a_number_hint(error: &str) -> String {
    let value = error.rsplit_once(": ").map_or("", |(_, v)| v);
    if value.chars().any(|c| c.is_ascii_digit()) {
        "A value in the data is a number written with other characters: remove them (such as $ or ,) before converting it.".to_owned()
    } else {
        "A value in the data is not a number: skip the values that are not numbers (try/except ValueError around the conversion) and go on with the rest.".to_owned()
    }
}

/// `X` in `NameError: name 'X' is not defined`.
fn undefined_name(error: &str) -> Option<&str> {
    let rest = error.strip_prefix("NameError: name '")?;
    let (name, tail) = rest.split_once('\'')?;
    tail.starts_with(" is not defined").then_some(name)
}

/// An `import` line for a name that is a module the model forgot to import.
fn module_hint(name: &str) -> Option<String> {
    let import = match name {
        "pd" => "import pandas as pd".to_owned(),
        "np" => "import numpy as np".to_owned(),
        "plt" => "import matplotlib.pyplot as plt".to_owned(),
        _ if STANDARD_MODULES.contains(&name) => format!("import {name}"),
        _ => return None,
    };
    Some(format!(
        "{name} was never imported: put `{import}` at the top of the code."
    ))
}

/// The path in a "No such file or directory" error: Python's
/// `FileNotFoundError: [Errno 2] No such file or directory: 'P'` (the first quoted path when
/// it names two) or a shell's `cat: P: No such file or directory`. `None` for a path with
/// control characters.
fn missing_path(error: &str) -> Option<String> {
    const PHRASE: &str = "No such file or directory";
    let path = if let Some((_, after)) = error.split_once(&format!("{PHRASE}: ")) {
        let after = after.trim();
        match after.chars().next() {
            Some(quote @ ('\'' | '"')) => after[1..].split(quote).next()?,
            _ => after,
        }
    } else {
        let before = error.strip_suffix(PHRASE)?.trim_end().strip_suffix(':')?;
        let path = before.rsplit(": ").next()?.trim().trim_matches(['\'', '"']);
        if path.contains(' ') {
            return None;
        }
        path
    };
    (!path.is_empty() && !path.chars().any(char::is_control)).then(|| path.to_owned())
}

/// Whether the code writes a file (so a missing folder is one to create, not a wrong name).
fn writes(language: &str, code: &str) -> bool {
    const PYTHON: [&str; 8] = [
        "'w'",
        "\"w\"",
        "'a'",
        "\"a\"",
        ".write",
        "to_csv(",
        "write_text(",
        "'x'",
    ];
    match language {
        "python" => PYTHON.iter().any(|w| code.contains(w)),
        _ => code.contains('>') || code.contains("tee ") || code.contains("touch "),
    }
}

/// How to fix a missing path: use the file of that name the folder has, create the folder a
/// file is written into, or see what the folder holds. `None` for a path that leaves the
/// workspace (`..`).
fn missing_path_hint(path: &str, writing: bool, dir: &Path) -> Option<String> {
    let missing = Path::new(path);
    if missing
        .components()
        .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return None;
    }
    let name = missing
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !name.is_empty() && path != name && dir.join(&name).is_file() {
        return Some(format!(
            "{name} is in the current folder: open it by its name, {name}, not {path}."
        ));
    }
    let parent = missing
        .parent()
        .filter(|p| !p.as_os_str().is_empty() && missing.is_relative());
    if let Some(parent) = parent
        && writing
        && !dir.join(parent).is_dir()
    {
        let folder = parent.display();
        return Some(format!(
            "The folder {folder} does not exist yet: create it first (os.makedirs(\"{folder}\", exist_ok=True) in Python, mkdir -p \"{folder}\" in the shell)."
        ));
    }
    // The folder the path is in when it exists, else the current one.
    let (listed, label) = match parent {
        Some(parent) if dir.join(parent).is_dir() => {
            (dir.join(parent), format!("The folder {}", parent.display()))
        }
        _ => (dir.to_path_buf(), "The current folder".to_owned()),
    };
    Some(match folder_entries(&listed) {
        Some(entries) => format!("There is no {path} here. {label} holds: {entries}."),
        None => format!("There is no {path} here. {label} is empty."),
    })
}

/// The names in `dir` (folders with a trailing `/`), sorted and comma-separated, at most
/// `MAX_LISTED`; hidden names and names with control characters left out.
fn folder_entries(dir: &Path) -> Option<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                format!("{name}/")
            } else {
                name
            }
        })
        .filter(|n| !n.starts_with('.') && !n.chars().any(char::is_control))
        .collect();
    if names.is_empty() {
        return None;
    }
    names.sort();
    let more = names.len().saturating_sub(MAX_LISTED);
    names.truncate(MAX_LISTED);
    let mut list = names.join(", ");
    if more > 0 {
        list.push_str(&format!(" and {more} more"));
    }
    Some(list)
}

/// Whether Python code that did not parse is a shell command: its first line starts with a
/// common command followed by an argument (not `sort = …` or `find(…)`), or assigns `$(…)`.
fn looks_like_shell(code: &str) -> bool {
    const COMMANDS: [&str; 14] = [
        "ls", "cat", "grep", "wc", "echo", "find", "mkdir", "cd", "head", "tail", "sort", "sed",
        "awk", "cp",
    ];
    let first = code
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'));
    let Some(first) = first else {
        return false;
    };
    let mut words = first.split_whitespace();
    let word = words.next().unwrap_or("");
    let argument = words.next().unwrap_or("");
    let command = COMMANDS.contains(&word)
        && first[word.len()..].starts_with([' ', '\t'])
        && !argument.starts_with(['=', '(', '.', '[', '+', '*', '/']);
    command || first.contains("=$(") || first.starts_with("$(")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for f in files {
            std::fs::write(dir.path().join(f), "x\n").unwrap();
        }
        dir
    }

    #[test]
    fn a_forgotten_import_names_the_import_line() {
        let dir = folder(&[]);
        let hint = error_hint(
            "NameError: name 'json' is not defined",
            "python",
            "",
            dir.path(),
        );
        assert_eq!(
            hint.as_deref(),
            Some("json was never imported: put `import json` at the top of the code.")
        );
        let hint = error_hint(
            "NameError: name 'pd' is not defined",
            "python",
            "",
            dir.path(),
        );
        assert!(hint.unwrap().contains("`import pandas as pd`"));
        // A misspelt variable: Python's own "Did you mean" says enough.
        assert_eq!(
            error_hint(
                "NameError: name 'prics' is not defined",
                "python",
                "",
                dir.path()
            ),
            None
        );
    }

    #[test]
    fn a_missing_folder_is_to_be_created_first_when_the_code_writes() {
        let dir = folder(&[]);
        let error = "FileNotFoundError: [Errno 2] No such file or directory: 'out/numbers.txt'";
        let hint = error_hint(
            error,
            "python",
            "with open('out/numbers.txt', 'w') as f:",
            dir.path(),
        );
        assert_eq!(
            hint.as_deref(),
            Some(
                "The folder out does not exist yet: create it first (os.makedirs(\"out\", exist_ok=True) in Python, mkdir -p \"out\" in the shell)."
            )
        );
        // Reading from it: the folder is not to be made, the current folder is listed.
        let hint = error_hint(error, "python", "open('out/numbers.txt')", dir.path());
        assert_eq!(
            hint.as_deref(),
            Some("There is no out/numbers.txt here. The current folder is empty.")
        );
    }

    #[test]
    fn a_missing_file_names_the_file_there_or_lists_its_folder() {
        let dir = folder(&["server.log", "notes.txt", ".hidden"]);
        std::fs::create_dir(dir.path().join("data")).unwrap();
        std::fs::write(dir.path().join("data/sales.csv"), "x\n").unwrap();
        let hint = |error: &str, code: &str| error_hint(error, "python", code, dir.path());
        assert_eq!(
            hint(
                "FileNotFoundError: [Errno 2] No such file or directory: 'data.txt'",
                ""
            )
            .as_deref(),
            Some(
                "There is no data.txt here. The current folder holds: data/, notes.txt, server.log."
            )
        );
        assert_eq!(
            hint(
                "FileNotFoundError: [Errno 2] No such file or directory: 'data/sale.csv'",
                ""
            )
            .as_deref(),
            Some("There is no data/sale.csv here. The folder data holds: sales.csv.")
        );
        // A file of that name in the current folder wins over making a folder.
        assert_eq!(
            hint(
                "FileNotFoundError: [Errno 2] No such file or directory: 'logs/server.log'",
                "open('logs/server.log', 'w')"
            )
            .as_deref(),
            Some(
                "server.log is in the current folder: open it by its name, server.log, not logs/server.log."
            )
        );
        assert_eq!(
            error_hint(
                "grep: /path/to/server.log: No such file or directory",
                "shell",
                "",
                dir.path()
            )
            .as_deref(),
            Some(
                "server.log is in the current folder: open it by its name, server.log, not /path/to/server.log."
            )
        );
        // Two paths: the first; a path out of the workspace or with control characters: none.
        assert!(
            hint(
                "FileNotFoundError: [Errno 2] No such file or directory: 'a.txt' -> 'b/a.txt'",
                ""
            )
            .unwrap()
            .starts_with("There is no a.txt here.")
        );
        assert_eq!(
            hint(
                "FileNotFoundError: [Errno 2] No such file or directory: '../x/y.txt'",
                "open('../x/y.txt', 'w')"
            ),
            None
        );
        assert_eq!(
            hint(
                "FileNotFoundError: [Errno 2] No such file or directory: 'a\u{1b}[2J.txt'",
                ""
            ),
            None
        );
    }

    #[test]
    fn values_shell_in_python_and_missing_modules() {
        let dir = folder(&[]);
        let hint = |error: &str, code: &str| error_hint(error, "python", code, dir.path());
        assert!(
            hint(
                "ValueError: invalid literal for int() with base 10: 'n/a'",
                ""
            )
            .unwrap()
            .contains("try/except ValueError")
                && !hint(
                    "ValueError: could not convert string to float: '$1,200'",
                    ""
                )
                .unwrap()
                .contains("skip")
        );
        assert!(
            hint(
                "SyntaxError: invalid syntax",
                "words=$(wc -w poem.txt)\necho $words"
            )
            .unwrap()
            .contains("```shell")
        );
        assert_eq!(hint("SyntaxError: invalid syntax", "print(1 +)"), None);
        assert_eq!(
            hint("SyntaxError: invalid syntax", "sort = sorted(x\nprint(sort"),
            None
        );
        assert!(
            hint("SyntaxError: invalid syntax", "ls -l *.log")
                .unwrap()
                .contains("```shell")
        );
        assert!(
            hint("ModuleNotFoundError: No module named 'requests'", "")
                .unwrap()
                .contains("standard library")
        );
        assert!(
            hint(
                "AttributeError: 'str' object has no attribute 'reverse'",
                ""
            )
            .unwrap()
            .contains("[::-1]")
        );
        assert_eq!(hint("ZeroDivisionError: division by zero", ""), None);
    }
}
