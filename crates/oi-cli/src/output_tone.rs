//! Which lines of output are errors: a Python traceback from its first line to the error it
//! ends with, that error's line, and the lines shells and tools print for failures — so they
//! can be shown in a colour that reads as an error.

use crate::style::{ERROR, ERROR_BOLD, NORMAL, Sgr};

/// How a line of output reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Ordinary output.
    Normal,
    /// Part of an error (a traceback).
    Error,
    /// The line that names the error.
    ErrorName,
}

impl Tone {
    /// The style the line is drawn in.
    pub fn style(self) -> Sgr {
        match self {
            Tone::Normal => NORMAL,
            Tone::Error => ERROR,
            Tone::ErrorName => ERROR_BOLD,
        }
    }
}

/// Reads output lines in order, keeping whether a traceback is open.
#[derive(Debug, Default)]
pub struct Tones {
    traceback: bool,
}

impl Tones {
    /// The tone a line starts in before it is complete (inside a traceback: an error).
    pub fn next_line(&self) -> Tone {
        if self.traceback {
            Tone::Error
        } else {
            Tone::Normal
        }
    }

    /// How `line` reads: a traceback and the error it ends with, shell errors.
    pub fn classify(&mut self, line: &str) -> Tone {
        let trimmed = line.trim();
        if trimmed.starts_with("Traceback (most recent call last)") {
            self.traceback = true;
            return Tone::Error;
        }
        if names_an_error(trimmed) {
            self.traceback = false;
            return Tone::ErrorName;
        }
        if self.traceback || reads_as_error(trimmed) {
            return Tone::Error;
        }
        Tone::Normal
    }
}

/// `NameError: name 'x' is not defined`, `KeyboardInterrupt`: the line a traceback ends with.
fn names_an_error(line: &str) -> bool {
    let name = line.split(':').next().unwrap_or("");
    let name = name.rsplit('.').next().unwrap_or(name);
    let is_identifier = !name.is_empty()
        && !name.contains(char::is_whitespace)
        && name.chars().all(|c| c.is_alphanumeric() || c == '_');
    is_identifier
        && ["Error", "Exception", "Interrupt", "Exit"]
            .iter()
            .any(|end| name.ends_with(end))
}

/// Lines shells and tools print for failures.
fn reads_as_error(line: &str) -> bool {
    const STARTS: [&str; 5] = ["Error:", "error:", "ERROR:", "fatal:", "Uncaught "];
    const HOLDS: [&str; 5] = [
        ": command not found",
        ": No such file or directory",
        ": Permission denied",
        ": not found",
        "Segmentation fault",
    ];
    STARTS.iter().any(|s| line.starts_with(s)) || HOLDS.iter().any(|h| line.contains(h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_recognised() {
        assert!(names_an_error("NameError: name 'x' is not defined"));
        assert!(names_an_error("KeyboardInterrupt"));
        assert!(names_an_error(
            "json.decoder.JSONDecodeError: Expecting value"
        ));
        assert!(!names_an_error("Result: 42"));
        assert!(!names_an_error("An Error: happened"));
        assert!(reads_as_error("bash: line 1: nope: command not found"));
        assert!(!reads_as_error("all good"));
    }

    #[test]
    fn a_traceback_is_an_error_up_to_its_last_line() {
        let mut tones = Tones::default();
        assert_eq!(tones.classify("before"), Tone::Normal);
        assert_eq!(
            tones.classify("Traceback (most recent call last):"),
            Tone::Error
        );
        assert_eq!(tones.next_line(), Tone::Error);
        assert_eq!(tones.classify("    1 / 0"), Tone::Error);
        assert_eq!(
            tones.classify("ZeroDivisionError: division by zero"),
            Tone::ErrorName
        );
        assert_eq!(tones.classify("after"), Tone::Normal);
    }
}
