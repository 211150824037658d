//! Asking before code runs: "Would you like to run this code? (y/n)", `e` to edit it in
//! `$EDITOR` first, and safe mode's semgrep scan (spec e.6). Any other answer is asked
//! again (a stray key never decides); end of input declines. Code holding control or invisible
//! characters (shown as `␍`, `␛`, `<U+E0041>` …) gets a warning that counts and names them
//! before the question. On a terminal, keys typed before a question is shown (while the reply
//! still streamed) are discarded: they never answer it.

use std::io::Write;
use std::process::Command;

use oi_core::{CodeContent, Decision, SafeMode};

use crate::input::{LineSource, Read};
use crate::sanitize::{Carriage, Sanitizer, show_code, warning};

/// Ends the warning said before the question when the code holds characters a terminal
/// would not show (see [`oi_core::visible::warning`]).
const HIDDEN_ADVICE: &str = "On a terminal they can hide part of a line or a whole payload: read the code as shown here before you answer.";

/// What the user answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Run, decline or edit.
    Decide(Decision),
    /// CTRL-C: stop the turn.
    Stop,
}

/// File extension for a language (a name or an alias, resolved through oi-core's table of
/// names to its canonical name), for scanning and editing.
fn extension(language: &str) -> &'static str {
    let canonical = oi_core::languages::canonical(language).unwrap_or_default();
    match canonical.as_str() {
        "python" => "py",
        "shell" => "sh",
        "javascript" => "js",
        "ruby" => "rb",
        "r" => "r",
        "powershell" => "ps1",
        "java" => "java",
        "html" | "react" => "html",
        _ => "txt",
    }
}

/// A new temp file for the code, in oi's private directory: the scanner and the editor open it
/// by name, so it is kept where sandboxed code cannot swap it for a link.
fn private_tempfile(format: &str) -> std::io::Result<tempfile::NamedTempFile> {
    tempfile::Builder::new()
        .suffix(&format!(".{}", extension(format)))
        .tempfile_in(oi_computer::private_dir()?)
}

/// Runs semgrep on the code and reports; a clear note when semgrep is not installed.
fn scan(code: &CodeContent, out: &mut dyn Write) {
    let file = match private_tempfile(&code.format) {
        Ok(mut file) => {
            let _ = file.write_all(code.content.as_bytes());
            file
        }
        Err(e) => {
            let _ = writeln!(out, "  Could not write the code to scan it: {e}");
            return;
        }
    };
    let _ = writeln!(out, "  Scanning code...");
    match Command::new("semgrep")
        .args(["scan", "--config", "auto", "--quiet", "--error"])
        .arg(file.path())
        .output()
    {
        Ok(result) if result.status.success() => {
            let _ = writeln!(
                out,
                "  [Code Scanner: ]No issues were found in this {} code.\n",
                show_code(&code.format)
            );
        }
        Ok(result) => {
            let mut filter = Sanitizer::new(Carriage::NewLine);
            let report = filter.push(&String::from_utf8_lossy(&result.stdout)) + &filter.finish();
            let _ = out.write_all(report.as_bytes());
            let _ = writeln!(
                out,
                "  [Code Scanner: ] semgrep found possible issues (above).\n"
            );
        }
        Err(_) => {
            let _ = writeln!(
                out,
                "  Note: Safe Mode requires `semgrep` (`pip install semgrep`); it is not installed, so this code was NOT scanned.\n"
            );
        }
    }
}

/// Opens the code in `$EDITOR` (default `vim`) and returns the edited text.
fn edit(code: &CodeContent) -> std::io::Result<String> {
    let mut file = private_tempfile(&code.format)?;
    file.write_all(code.content.as_bytes())?;
    file.flush()?;
    let editor = std::env::var("EDITOR").unwrap_or_else(|_| "vim".to_owned());
    let mut parts = editor.split_whitespace();
    let program = parts.next().unwrap_or("vim");
    let status = Command::new(program)
        .args(parts)
        .arg(file.path())
        .status()?;
    if !status.success() {
        return Err(std::io::Error::other(format!(
            "{editor} exited with {status}"
        )));
    }
    std::fs::read_to_string(file.path())
}

/// Asks about one code block; `indent` starts the question and the answer's line (under
/// the panels on a terminal, flush left in plain text as the original).
pub fn ask(
    code: &CodeContent,
    safe_mode: SafeMode,
    source: &mut dyn LineSource,
    out: &mut dyn Write,
    indent: &str,
) -> Answer {
    let scan_it = match safe_mode {
        SafeMode::Off => false,
        SafeMode::Auto => true,
        SafeMode::Ask => {
            source.discard_typeahead();
            matches!(source.read_line(&format!("\n{indent}Would you like to scan this code? (y/n)\n\n{indent}")), Read::Line(l) if l.trim().eq_ignore_ascii_case("y"))
        }
    };
    if scan_it {
        scan(code, out);
    }
    if let Some(warning) = warning(&code.content) {
        let text = format!("Warning: {warning}. {HIDDEN_ADVICE}");
        let _ = writeln!(out, "\n{}", crate::doc::wrapped(&text, "  "));
        let _ = out.flush();
    }
    // Only keys typed after the question is shown answer it.
    source.discard_typeahead();
    loop {
        let question = format!("\n{indent}Would you like to run this code? (y/n)\n\n{indent}");
        let line = match source.read_line(&question) {
            Read::Interrupted => return Answer::Stop,
            Read::Eof => {
                let _ = writeln!(
                    out,
                    "(no answer: declined. Use -y to run code without asking.)"
                );
                return Answer::Decide(Decision::Decline);
            }
            Read::Line(line) => line,
        };
        match line.trim().to_lowercase().as_str() {
            "y" | "yes" => return Answer::Decide(Decision::Approve),
            "n" | "no" => return Answer::Decide(Decision::Decline),
            "e" | "edit" => {
                return match edit(code) {
                    Ok(edited) => Answer::Decide(Decision::Edit(edited)),
                    Err(e) => {
                        let _ = writeln!(out, "  Could not edit the code ({e}); it was not run.");
                        Answer::Decide(Decision::Decline)
                    }
                };
            }
            other => {
                let note = format!(
                    "{:?} is not an answer: type y to run the code, n not to run it, or e to edit it first.",
                    crate::sanitize::clean(other)
                );
                let _ = writeln!(out, "{}", crate::doc::wrapped(&note, "  "));
                let _ = out.flush();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::extension;

    #[test]
    fn names_and_aliases_get_their_languages_extension() {
        for (language, ext) in [
            ("python", "py"),
            ("py", "py"),
            ("bash", "sh"),
            ("shell", "sh"),
            ("node", "js"),
            ("react", "html"),
            ("powershell", "ps1"),
            ("brainfuck", "txt"),
        ] {
            assert_eq!(extension(language), ext, "{language}");
        }
    }
}
