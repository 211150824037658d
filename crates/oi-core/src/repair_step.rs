//! The repair step for small local models (issue 28): after a block whose output is an error,
//! or a block that only prints a value typed in by hand, the next request carries a short
//! hidden note saying so, and a reply without code after an error gets one more request
//! with the error (once per turn: a retry, not a loop). A reply without code while the
//! user's message or the reply names a file in the workspace that no code of the turn has
//! read gets one more request that says to open it (once per turn); and the same block
//! printing the same output again ends the turn, since the answer is on the screen already.
//!
//! Only for the embedded model's settings (`model: local` or `local/PATH`, also through
//! `--api_base`): large models read an error without help, and the original's wire format
//! stays as it is for them.

use std::path::Path;

use crate::lmc::{Kind, Message, Role};
use crate::settings::Settings;

/// Whether the repair step applies to these settings.
pub(crate) fn enabled(settings: &Settings) -> bool {
    let model = settings.llm.model.as_str();
    model == "local" || model.starts_with("local/")
}

/// The longest error line quoted back to the model.
const MAX_ERROR: usize = 300;

/// The line of `output` that says what went wrong, when the output is an error: the last
/// `…Error: …` / `…Exception: …` line (Python), or a shell's `command not found`,
/// `No such file or directory`, `Permission denied`, `syntax error`.
pub(crate) fn error_line(output: &str) -> Option<String> {
    const SHELL: [&str; 4] = [
        "command not found",
        "No such file or directory",
        "Permission denied",
        "syntax error",
    ];
    let line = output.lines().rev().map(str::trim).find(|line| {
        let head = line.split(':').next().unwrap_or("");
        let python = line.contains(':')
            && !head.contains(' ')
            && (head.ends_with("Error") || head.ends_with("Exception"));
        python || SHELL.iter().any(|s| line.contains(s))
    })?;
    let mut line = line.to_owned();
    if line.len() > MAX_ERROR {
        let mut cut = MAX_ERROR;
        while !line.is_char_boundary(cut) {
            cut -= 1;
        }
        line.truncate(cut);
    }
    Some(line)
}

/// Whether `code` only prints values written into it by hand (`print(20)`,
/// `print("Friday")`, `echo 42`): the model's first guess, not a computation. `language` is
/// the canonical name (`python`, `shell`).
pub(crate) fn typed_answer(language: &str, code: &str) -> bool {
    let lines: Vec<&str> = code
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    if lines.is_empty() {
        return false;
    }
    match language {
        "python" => lines.iter().all(|line| {
            line.strip_prefix("print(")
                .and_then(|rest| rest.strip_suffix(')'))
                .is_some_and(is_literal)
        }),
        "shell" => lines.iter().all(|line| {
            line.strip_prefix("echo ")
                .is_some_and(|rest| !rest.contains(['$', '`', '|', '>', '<', ';', '&']))
        }),
        _ => false,
    }
}

/// A number or a plain quoted string (no f-string, no formatting, no expression).
fn is_literal(text: &str) -> bool {
    let text = text.trim();
    let quoted = ['"', '\'']
        .iter()
        .any(|q| text.len() >= 2 && text.starts_with(*q) && text.ends_with(*q))
        && !text[1..text.len() - 1].contains(['"', '\'', '{']);
    let number = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '_'))
        && text.chars().any(|c| c.is_ascii_digit());
    quoted || number
}

/// The hidden note after a block that failed: the error, and when `repair_hints` knows the
/// cause, how to fix it.
pub(crate) fn error_note(error: &str, hint: Option<&str>) -> String {
    match hint {
        Some(hint) => format!(
            "The code failed with this error: {error}\n{hint}\nReply with the corrected code in one code block."
        ),
        None => format!(
            "The code failed with this error: {error}\nFix the cause and reply with the corrected code in one code block."
        ),
    }
}

/// The hidden note after a block that only printed a value typed in by hand.
const TYPED_ANSWER_NOTE: &str = "That code only printed a value you typed in yourself; it computed nothing and read no file. If the task needs a computation, a file or a change, reply with code that does it and prints the result. If not, give the answer.";

/// The hidden note after a block that only printed a value typed in by hand; when the task
/// names a file of the folder that no code opened (`unread`), the note says to start there.
pub(crate) fn typed_answer_note(unread: Option<&str>) -> String {
    match unread {
        Some(name) => format!(
            "That code only printed a value you typed in yourself; it did not open {name}. Reply with code that reads {name} and does what the task asks."
        ),
        None => TYPED_ANSWER_NOTE.to_owned(),
    }
}

/// What the turn says when the model sent a block of this turn that failed again, unchanged,
/// and it failed the same way: at temperature 0 it goes round again and again.
pub(crate) fn repeated_failure_message(error: &str) -> String {
    format!(
        "oi stopped this turn: the model sent code that had already failed, and it failed the same way again ({error}). Send a message to go on."
    )
}

/// The words of `text` that name a file in `dir`: a word with an extension (`notes.txt`,
/// `data/sales.csv`), without the quotes, backticks and punctuation around it.
pub fn named_files(text: &str, dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for word in
        text.split(|c: char| c.is_whitespace() || matches!(c, '`' | '"' | '\'' | ',' | '(' | ')'))
    {
        let word = word.trim_end_matches(['.', ':', ';', '?', '!']);
        let Some((stem, extension)) = word.rsplit_once('.') else {
            continue;
        };
        let plausible = !stem.is_empty()
            && (1..=5).contains(&extension.len())
            && extension.chars().all(|c| c.is_ascii_alphanumeric())
            && extension.starts_with(|c: char| c.is_ascii_alphabetic())
            && !word.contains("..");
        if plausible && !names.iter().any(|n| n == word) && dir.join(word).is_file() {
            names.push(word.to_owned());
        }
    }
    names
}

/// A file the turn's user message or the model's replies name (present in `dir`) that no
/// code block of the turn mentions and no output showed: the model answered about a file it
/// never opened (a file an `ls` listed counts as seen).
pub(crate) fn unread_file(messages: &[Message], dir: &Path) -> Option<String> {
    let start = messages
        .iter()
        .rposition(|m| m.role == Role::User && m.kind == Kind::Message)?;
    let turn = &messages[start..];
    let seen: Vec<&str> = turn
        .iter()
        .filter(|m| m.kind == Kind::Code || m.kind == Kind::Console)
        .map(Message::text)
        .collect();
    turn.iter()
        .filter(|m| m.kind == Kind::Message && matches!(m.role, Role::User | Role::Assistant))
        .flat_map(|m| named_files(m.text(), dir))
        .find(|name| !seen.iter().any(|c| c.contains(name.as_str())))
}

/// The hidden note after a reply about a file no code opened.
pub(crate) fn open_file_note(name: &str) -> String {
    format!(
        "You have not opened {name}. Reply with code that reads {name} and prints what the task asks for."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_python_and_shell_errors() {
        let trace = "Traceback (most recent call last):\n  File \"broken.py\", line 2, in <module>\n    print('total:', sum(prics))\nNameError: name 'prics' is not defined. Did you mean: 'prices'?\n";
        assert_eq!(
            error_line(trace).as_deref(),
            Some("NameError: name 'prics' is not defined. Did you mean: 'prices'?")
        );
        assert_eq!(
            error_line("sh: 1: frobnicate: command not found").as_deref(),
            Some("sh: 1: frobnicate: command not found")
        );
        assert_eq!(
            error_line("ValueError: invalid literal for int() with base 10: 'n/a'").as_deref(),
            Some("ValueError: invalid literal for int() with base 10: 'n/a'")
        );
        assert_eq!(error_line("total: 27\n"), None);
        assert_eq!(error_line("Error rate: 3 per hour, all fine"), None);
    }

    #[test]
    fn typed_answers_are_literal_prints_only() {
        assert!(typed_answer("python", "print(20)"));
        assert!(typed_answer("python", "print(\"Friday\")\n"));
        assert!(typed_answer("shell", "echo 42"));
        assert!(!typed_answer("python", "print(6 * 7)"));
        assert!(!typed_answer("python", "print(f\"{x}\")"));
        assert!(!typed_answer("python", "x = 20\nprint(x)"));
        assert!(!typed_answer("shell", "echo $HOME"));
        assert!(!typed_answer("shell", "echo hi > hello.txt"));
        assert!(!typed_answer("python", ""));
    }

    #[test]
    fn named_files_are_words_with_an_extension_that_exist() {
        let dir = std::env::temp_dir().join(format!("oi-named-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("notes.txt"), "a\n").unwrap();
        std::fs::write(dir.join("sales.csv"), "a\n").unwrap();
        let text = "How many lines does the file notes.txt have? See `sales.csv`, 'missing.txt', version 1.5 and e.g.";
        assert_eq!(named_files(text, &dir), ["notes.txt", "sales.csv"]);
        assert!(named_files("Reverse the string 'interpreter'.", &dir).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
