//! What the terminal tests share: `oi` on a pseudo-terminal against the scripted model, with a
//! temporary HOME and work directory, and helpers that read the screen.

#![allow(dead_code, clippy::expect_used, clippy::unwrap_used)]

use std::process::Command;
use std::time::Duration;

use oi_testkit::{Reply, Script, ScriptedServer};

use crate::pty::Term;

pub const WIDTHS: [u16; 3] = [60, 80, 120];
pub const ROWS: u16 = 50;
pub const WAIT: Duration = Duration::from_secs(20);

pub struct Setup {
    pub runtime: tokio::runtime::Runtime,
    pub home: tempfile::TempDir,
    pub work: tempfile::TempDir,
}

pub fn setup() -> Setup {
    Setup {
        runtime: tokio::runtime::Runtime::new().unwrap(),
        home: tempfile::tempdir().unwrap(),
        work: tempfile::tempdir().unwrap(),
    }
}

pub fn have_python() -> bool {
    let ok = Command::new("python3")
        .arg("-c")
        .arg("pass")
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        oi_testkit::skipped!("skipped: python3 is not installed");
    }
    ok
}

impl Setup {
    pub fn server(&self, replies: Vec<Reply>) -> ScriptedServer {
        self.runtime
            .block_on(ScriptedServer::start(Script::new(replies)))
            .unwrap()
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_oi"));
        command
            .args(args)
            .current_dir(self.work.path())
            .env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path().join(".config"))
            .env("TMPDIR", self.work.path())
            .env("TERM", "xterm-256color")
            .env_remove("COLUMNS")
            .env_remove("LINES")
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL");
        command
    }

    /// `oi` against `server` on a terminal `cols` wide, at its first prompt.
    pub fn oi(&self, server: &ScriptedServer, extra: &[&str], cols: u16) -> Option<Term> {
        let base = server.base_url();
        let mut args = vec!["--api_base", base.as_str(), "--api_key", "k"];
        args.extend_from_slice(extra);
        let term = Term::spawn(self.command(&args), cols, ROWS)?;
        term.wait_prompt(WAIT);
        Some(term)
    }

    pub fn redact(&self, text: &str) -> String {
        let text = text
            .replace(&self.work.path().display().to_string(), "[WORK]")
            .replace(&self.home.path().display().to_string(), "[HOME]");
        redact_times(&text)
    }
}

/// `2.3 s` and `1 min 05 s` → `[T]`.
pub fn redact_times(text: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let starts_number =
            chars[i].is_ascii_digit() && (i == 0 || !chars[i - 1].is_alphanumeric());
        if starts_number {
            let mut j = i;
            while j < chars.len() && (chars[j].is_ascii_digit() || chars[j] == '.') {
                j += 1;
            }
            let rest: String = chars[j..chars.len().min(j + 2)].iter().collect();
            if rest == " s" && chars[i..j].contains(&'.') {
                out.push_str("[T]");
                i = j + 2;
                continue;
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// Every word of `text` is on the screen whole: nothing was cut at the edge.
pub fn assert_words_whole(screen: &str, text: &str, cols: u16) {
    let words: Vec<String> = screen.split_whitespace().map(str::to_owned).collect();
    for word in text.split_whitespace() {
        assert!(
            words.iter().any(|w| w.contains(word)),
            "{cols} columns: {word:?} is cut or missing:\n{screen}"
        );
    }
}

pub fn row_with<'a>(rows: &'a [String], needle: &str) -> Option<&'a String> {
    rows.iter().find(|row| row.contains(needle))
}
