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
        typed_in(&mut command, self.stdin)
    }
}

/// Runs `command` (its standard streams piped) to its end with `stdin` typed in: what it
/// printed and how it ended.
pub fn typed_in(command: &mut Command, stdin: &str) -> Output {
    let mut child = command.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// Bytes as text (invalid UTF-8 shown as `�`).
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs `oi` in `home` (also its HOME) with no provider key, base address or Ollama host
/// from the machine, only `env`: what a user with a fresh account sees.
pub fn oi_without_providers(
    home: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    stdin: &str,
) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_oi"));
    command
        .args(args)
        .current_dir(home)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (name, _) in std::env::vars() {
        if name.ends_with("_API_KEY") || name.ends_with("_API_BASE") || name == "OLLAMA_HOST" {
            command.env_remove(name);
        }
    }
    command.env_remove("OPENAI_BASE_URL");
    command.envs(env.iter().copied());
    typed_in(&mut command, stdin)
}

/// The scripted model server answering `replies`, with the runtime that serves it.
pub fn start_server(
    replies: Vec<oi_testkit::Reply>,
) -> (tokio::runtime::Runtime, oi_testkit::ScriptedServer) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime
        .block_on(oi_testkit::ScriptedServer::start(oi_testkit::Script::new(
            replies,
        )))
        .unwrap();
    (runtime, server)
}

/// The scripted model server standing in for OpenAI's own endpoint (`OPENAI_BASE_URL`, so
/// models are priced as OpenAI's, not as a local server's), and a HOME for `oi`.
pub struct OpenAiEndpoint {
    _runtime: tokio::runtime::Runtime,
    /// The scripted server.
    pub server: oi_testkit::ScriptedServer,
    /// The HOME (and config folder) `oi` runs with.
    pub home: tempfile::TempDir,
}

impl OpenAiEndpoint {
    /// Starts the server with `replies`.
    pub fn start(replies: Vec<oi_testkit::Reply>) -> Self {
        let (runtime, server) = start_server(replies);
        Self {
            _runtime: runtime,
            server,
            home: tempfile::tempdir().unwrap(),
        }
    }

    /// Runs `oi` with `args` against the server as OpenAI, `stdin` typed in.
    pub fn oi(&self, args: &[&str], stdin: &str) -> Output {
        let base = self.server.base_url();
        Oi {
            args: args.to_vec(),
            env: vec![("OPENAI_API_KEY", "sk-test"), ("OPENAI_BASE_URL", &base)],
            stdin,
            ..Oi::default()
        }
        .run(self.home.path())
    }
}
