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
        return Some(missing_path_hint(&path, dir));
    }
    if error.starts_with("ValueError:")
        && (error.contains("invalid literal for int()")
            || error.contains("could not convert string to float"))
    {
        return Some("A value in the data is not a number: skip the values that are not numbers (try/except ValueError around the conversion) and go on with the rest.".to_owned());
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
/// `FileNotFoundError: [Errno 2] No such file or directory: 'P'` or a shell's
/// `cat: P: No such file or directory`.
fn missing_path(error: &str) -> Option<String> {
    const PHRASE: &str = "No such file or directory";
    if let Some((_, after)) = error.split_once(&format!("{PHRASE}: ")) {
        let path = after.trim().trim_matches(['\'', '"']);
        return (!path.is_empty()).then(|| path.to_owned());
    }
    let before = error.strip_suffix(PHRASE)?.trim_end().strip_suffix(':')?;
    let path = before.rsplit(": ").next()?.trim().trim_matches(['\'', '"']);
    (!path.is_empty() && !path.contains(' ')).then(|| path.to_owned())
}

/// How to fix a missing path: create the folder it is in, or use a file that is there.
fn missing_path_hint(path: &str, dir: &Path) -> String {
    let relative = Path::new(path);
    if let Some(parent) = relative.parent().filter(|p| !p.as_os_str().is_empty())
        && relative.is_relative()
        && !dir.join(parent).is_dir()
    {
        let folder = parent.display();
        return format!(
            "The folder {folder} does not exist yet: create it first (os.makedirs(\"{folder}\", exist_ok=True) in Python, mkdir -p {folder} in the shell)."
        );
    }
    let name = relative
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !name.is_empty() && path != name && dir.join(&name).is_file() {
        return format!(
            "{name} is in the current folder: open it by its name, {name}, not {path}."
        );
    }
    match folder_files(dir) {
        Some(files) => {
            format!("There is no {path} here. The files in the current folder are: {files}.")
        }
        None => format!("There is no {path} here, and the current folder has no files."),
    }
}

/// The names of the files in `dir`, sorted and comma-separated (at most `MAX_LISTED`).
fn folder_files(dir: &Path) -> Option<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
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
/// common command, or it uses `$(…)` or `$VAR`.
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
    let word = first.split_whitespace().next().unwrap_or("");
    COMMANDS.contains(&word) || code.contains("$(") || first.contains("=$")
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
    fn a_missing_folder_is_to_be_created_first() {
        let dir = folder(&[]);
        let hint = error_hint(
            "FileNotFoundError: [Errno 2] No such file or directory: 'out/numbers.txt'",
            "python",
            "",
            dir.path(),
        );
        assert_eq!(
            hint.as_deref(),
            Some(
                "The folder out does not exist yet: create it first (os.makedirs(\"out\", exist_ok=True) in Python, mkdir -p out in the shell)."
            )
        );
    }

    #[test]
    fn a_missing_file_lists_the_folder_or_names_the_file_there() {
        let dir = folder(&["server.log", "notes.txt", ".hidden"]);
        let hint = error_hint(
            "FileNotFoundError: [Errno 2] No such file or directory: 'data.txt'",
            "python",
            "",
            dir.path(),
        );
        assert_eq!(
            hint.as_deref(),
            Some(
                "There is no data.txt here. The files in the current folder are: notes.txt, server.log."
            )
        );
        let hint = error_hint(
            "grep: /path/to/server.log: No such file or directory",
            "shell",
            "",
            dir.path(),
        );
        assert_eq!(
            hint.as_deref(),
            Some(
                "server.log is in the current folder: open it by its name, server.log, not /path/to/server.log."
            )
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
