//! Where the terminal program reads lines from: a line editor with history on a terminal, plain
//! standard input in a pipe.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

use rustyline::error::ReadlineError;
use rustyline::history::FileHistory;

/// What reading a line gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Read {
    /// A line (without its newline).
    Line(String),
    /// CTRL-C.
    Interrupted,
    /// CTRL-D or end of input.
    Eof,
}

/// A source of input lines.
pub trait LineSource {
    /// Shows `prompt` and reads one line.
    fn read_line(&mut self, prompt: &str) -> Read;
    /// Remembers a line in the history (no-op for pipes).
    fn remember(&mut self, _line: &str) {}
    /// Forgets what was typed but not read yet, before a question that only keys pressed
    /// after it is shown may answer (no-op unless standard input is a terminal).
    fn discard_typeahead(&mut self) {}
}

/// Discards the input typed on the terminal and not read yet (`tcflush(TCIFLUSH)`): keys
/// pressed while the reply still streamed. Input piped to oi is never touched.
fn discard_terminal_typeahead() {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        let _ = rustix::termios::tcflush(&stdin, rustix::termios::QueueSelector::IFlush);
    }
}

/// Standard input without editing (pipes, tests).
pub struct Stdin;

impl LineSource for Stdin {
    fn read_line(&mut self, prompt: &str) -> Read {
        print!("{prompt}");
        let _ = std::io::stdout().flush();
        let mut line = String::new();
        match std::io::stdin().lock().read_line(&mut line) {
            Ok(0) | Err(_) => Read::Eof,
            Ok(_) => Read::Line(line.trim_end_matches(['\n', '\r']).to_owned()),
        }
    }

    fn discard_typeahead(&mut self) {
        discard_terminal_typeahead();
    }
}

/// A line editor with history kept in a file.
pub struct Editor {
    editor: rustyline::Editor<(), FileHistory>,
    history: Option<PathBuf>,
}

impl Editor {
    /// An editor whose history lives in `history` (loaded now, saved after each line).
    pub fn new(history: Option<PathBuf>) -> Result<Self, ReadlineError> {
        let mut editor = rustyline::Editor::<(), FileHistory>::new()?;
        if let Some(path) = &history {
            let _ = editor.load_history(path);
        }
        Ok(Editor { editor, history })
    }
}

impl LineSource for Editor {
    fn read_line(&mut self, prompt: &str) -> Read {
        match self.editor.readline(prompt) {
            Ok(line) => Read::Line(line),
            Err(ReadlineError::Interrupted) => Read::Interrupted,
            Err(_) => Read::Eof,
        }
    }

    fn discard_typeahead(&mut self) {
        discard_terminal_typeahead();
    }

    fn remember(&mut self, line: &str) {
        let _ = self.editor.add_history_entry(line);
        if let Some(path) = &self.history {
            if let Some(dir) = path.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            let _ = self.editor.save_history(path);
        }
    }
}

/// Reads a message: one line, or with `"""` several lines up to the next `"""` (spec e.2).
pub fn read_message(source: &mut dyn LineSource, multi_line: bool) -> Read {
    let first = match source.read_line("> ") {
        Read::Line(line) => line,
        other => return other,
    };
    if !multi_line || !first.contains("\"\"\"") {
        return Read::Line(first);
    }
    let mut lines = vec![first.replacen("\"\"\"", "", 1)];
    if lines[0].contains("\"\"\"") {
        return Read::Line(lines[0].replace("\"\"\"", ""));
    }
    loop {
        match source.read_line("") {
            Read::Line(line) if line.contains("\"\"\"") => {
                lines.push(line.replace("\"\"\"", ""));
                return Read::Line(lines.join("\n").trim().to_owned());
            }
            Read::Line(line) => lines.push(line),
            other => return other,
        }
    }
}
