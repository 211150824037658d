//! What counts as a solved task: words or numbers in what oi printed, a file's content, a
//! command's output in the folder afterwards.

use std::path::Path;
use std::process::Command as Process;

/// A task's check.
#[derive(Debug, Clone, Copy)]
pub enum Check {
    /// Each of these is in what oi printed. A number must stand alone (`137`, `137.0` or
    /// `1,37` spelt with separators do count; `1137` does not).
    Says(&'static [&'static str]),
    /// These are in what oi printed, in this order.
    InOrder(&'static [&'static str]),
    /// The file (relative to the folder) holds this text (lines compared without trailing
    /// spaces, the file's trailing newlines ignored).
    File(&'static str, &'static str),
    /// `sh -c COMMAND` in the folder succeeds and prints this.
    Command(&'static str, &'static str),
    /// All of these.
    All(&'static [Check]),
}

/// `text` with thousands separators between digits removed (`18,893,094,989`).
fn without_separators(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    for (i, c) in chars.iter().enumerate() {
        let between_digits = i > 0
            && chars[i - 1].is_ascii_digit()
            && chars.get(i + 1).is_some_and(char::is_ascii_digit);
        if (*c == ',' || *c == '_') && between_digits {
            continue;
        }
        out.push(*c);
    }
    out
}

/// Whether the number `number` stands alone in `text` (no digit before or after it; a
/// fraction of zeros after it is allowed: `35.0`).
fn has_number(text: &str, number: &str) -> bool {
    let bytes = text.as_bytes();
    text.match_indices(number).any(|(at, _)| {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        if before.is_some_and(|b| b.is_ascii_digit() || b == b'.') {
            return false;
        }
        let rest = &bytes[at + number.len()..];
        match rest.first() {
            Some(b) if b.is_ascii_digit() => false,
            Some(b'.') => {
                let fraction: Vec<u8> = rest[1..]
                    .iter()
                    .copied()
                    .take_while(u8::is_ascii_digit)
                    .collect();
                fraction.iter().all(|d| *d == b'0')
            }
            _ => true,
        }
    })
}

/// Whether `expected` is in `printed` (as a number when it is one).
fn says(printed: &str, expected: &str) -> bool {
    let is_number = expected.chars().all(|c| c.is_ascii_digit() || c == '.');
    if is_number {
        has_number(&without_separators(printed), expected)
    } else {
        printed.contains(expected)
    }
}

/// Lines without trailing spaces, trailing empty lines dropped.
fn normalised(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    lines.join("\n").trim_end().to_owned()
}

impl Check {
    /// `Ok` when the task is solved, else why not.
    pub fn verify(&self, folder: &Path, printed: &str) -> Result<(), String> {
        match self {
            Check::Says(words) => match words.iter().find(|w| !says(printed, w)) {
                Some(missing) => Err(format!("the output does not say `{missing}`")),
                None => Ok(()),
            },
            Check::InOrder(words) => {
                let mut from = 0;
                for word in *words {
                    match printed[from..].find(word) {
                        Some(at) => from += at + word.len(),
                        None => {
                            return Err(format!("the output does not list {words:?} in order"));
                        }
                    }
                }
                Ok(())
            }
            Check::File(path, expected) => {
                let text = std::fs::read_to_string(folder.join(path))
                    .map_err(|e| format!("{path}: {e}"))?;
                if normalised(&text) == normalised(expected) {
                    Ok(())
                } else {
                    Err(format!("{path} holds {text:?}, not {expected:?}"))
                }
            }
            Check::Command(command, expected) => {
                let out = Process::new("sh")
                    .args(["-c", command])
                    .current_dir(folder)
                    .output()
                    .map_err(|e| format!("running `{command}`: {e}"))?;
                let stdout = String::from_utf8_lossy(&out.stdout);
                if out.status.success() && stdout.contains(expected) {
                    Ok(())
                } else {
                    Err(format!(
                        "`{command}` ({}) printed {stdout:?}, not {expected:?}",
                        out.status
                    ))
                }
            }
            Check::All(checks) => checks.iter().try_for_each(|c| c.verify(folder, printed)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_must_stand_alone() {
        assert!(says("The result is 18,893,094,989.", "18893094989"));
        assert!(says("average: 35.0\n", "35"));
        assert!(says("(35)", "35"));
        assert!(!says("1350", "35"));
        assert!(!says("35.5", "35"));
        assert!(!says("0.35", "35"));
        assert!(says("Version 3.14.2 it is", "3.14.2"));
    }

    #[test]
    fn words_and_order() {
        let dir = std::env::temp_dir();
        assert!(
            Check::Says(&["Friday"])
                .verify(&dir, "It was a Friday.")
                .is_ok()
        );
        assert!(
            Check::Says(&["Friday"])
                .verify(&dir, "It was 2000.")
                .is_err()
        );
        let order = Check::InOrder(&["app.log", "web.log", "db.log"]);
        assert!(order.verify(&dir, "app.log\nweb.log\ndb.log\n").is_ok());
        assert!(order.verify(&dir, "db.log\nweb.log\napp.log\n").is_err());
    }

    #[test]
    fn files_compare_without_trailing_space() {
        assert_eq!(normalised("a  \nb\n\n"), "a\nb");
    }
}
