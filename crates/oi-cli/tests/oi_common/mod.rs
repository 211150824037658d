//! Running the real `oi` as a user would, shared by the tests that drive it: a temporary HOME
//! (its config folder under it), no provider key or base URL from the machine, the given
//! arguments, the user's answers on standard input, and everything it printed.

#![allow(dead_code, clippy::expect_used, clippy::unwrap_used)]

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// How to start one `oi`.
#[derive(Default)]
pub struct Oi<'a> {
    /// The arguments.
    pub args: Vec<&'a str>,
    /// The working directory (the test's own when `None`).
    pub workdir: Option<&'a Path>,
    /// Variables set on top of the cleaned environment.
    pub env: Vec<(&'a str, &'a str)>,
    /// What the user types.
    pub stdin: &'a str,
}

impl Oi<'_> {
    /// Runs `oi` with HOME at `home` to its end; what it printed and how it ended.
    pub fn run(&self, home: &Path) -> Output {
        let mut command = Command::new(env!("CARGO_BIN_EXE_oi"));
        command
            .args(&self.args)
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .envs(self.env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(dir) = self.workdir {
            command.current_dir(dir);
        }
        let mut child = command.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(self.stdin.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    }
}

/// Bytes as text (invalid UTF-8 shown as `�`).
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
