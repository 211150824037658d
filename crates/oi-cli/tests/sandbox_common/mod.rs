//! What the attacks through the real `oi` share: a temporary HOME and work directory, the
//! scripted model, running `oi` and reading what the code printed, skipping (or failing under
//! `OI_TEST_REQUIRE_ALL=1`) where the machine cannot run a test.

#![allow(dead_code, clippy::expect_used, clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use oi_testkit::{Reply, Script, ScriptedServer};

/// The model's key in these tests (long enough to be matched by value).
pub const MODEL_KEY: &str = "sk-test-model-key-0123456789";

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

impl Setup {
    pub fn server(&self, replies: Vec<Reply>) -> ScriptedServer {
        self.runtime
            .block_on(ScriptedServer::start(Script::new(replies)))
            .unwrap()
    }

    pub fn config_dir(&self) -> PathBuf {
        self.home.path().join(".config/open-interpreter")
    }

    /// `oi` against `server`, with a temporary HOME, in `dir`.
    pub fn oi_in(&self, dir: &Path, server: &ScriptedServer, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_oi"));
        command
            .args(["--api_base", &server.base_url(), "--api_key", MODEL_KEY])
            .args(args)
            .current_dir(dir)
            .env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path().join(".config"))
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("INTERPRETER_API_KEY")
            .env("TERM", "dumb");
        command
    }

    pub fn oi(&self, server: &ScriptedServer, args: &[&str]) -> Command {
        self.oi_in(self.work.path(), server, args)
    }
}

pub fn run(mut command: Command) -> Output {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What the code printed: the ```output blocks of oi's plain transcript (the code itself,
/// shown before it runs, is left out).
pub fn printed(out: &Output) -> String {
    let text = stdout(out);
    let mut printed = String::new();
    for block in text.split("```output\n").skip(1) {
        printed.push_str(block.split("\n```").next().unwrap_or(""));
        printed.push('\n');
    }
    printed
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn have(program: &str, test: &str) -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(program).is_file()));
    if !found {
        oi_testkit::skipped!("skipped {test}: `{program}` is not installed");
    }
    found
}

/// Whether the kernel enforces the workspace sandbox here; says why a test skips when not.
pub fn sandbox_works(test: &str) -> bool {
    let support = oi_computer::probe();
    let works = support.filesystem() && support.seccomp;
    if !works {
        oi_testkit::skipped!("skipped {test}: this kernel cannot enforce the sandbox ({support})");
    }
    works
}

pub fn py(text: &str) -> String {
    format!("{text:?}")
}

/// Live processes whose environment holds `marker` (`NAME=value`).
pub fn processes_with_env(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| {
                s.rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            })
            .unwrap_or(true);
        if !zombie && environ.split(|b| *b == 0).any(|v| v == marker.as_bytes()) {
            found.push(pid);
        }
    }
    found
}

/// Polls `check` every 20 ms for up to `within`; whether it became true.
pub fn eventually(within: Duration, check: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    check()
}

pub fn unique(what: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{what}-{}-{nanos}", std::process::id())
}

/// Shell code that leaves its process group three ways (setsid, a double fork, nohup), each
/// process carrying `OI_ESCAPE=<value>`.
pub fn escape_code(value: &str) -> String {
    format!(
        "export OI_ESCAPE={value}\n\
         setsid sleep 120 </dev/null >/dev/null 2>&1 &\n\
         ( ( sleep 120 </dev/null >/dev/null 2>&1 & ) & )\n\
         nohup setsid sleep 120 </dev/null >/dev/null 2>&1 &\n\
         sleep 0.2; echo escaped"
    )
}
