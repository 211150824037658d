//! Shared set-up of the hostile-model, hostile-output and hostile-profile tests: the real `oi`
//! binary with a temporary HOME and working directory, the scripted model server, and a run
//! that measures the child's time and peak memory.

#![allow(dead_code, clippy::expect_used, clippy::unwrap_used)]

use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use oi_testkit::{Script, ScriptedServer};

/// A temporary HOME and working directory, and a runtime for scripted servers.
pub struct Setup {
    pub runtime: tokio::runtime::Runtime,
    pub home: tempfile::TempDir,
    pub work: tempfile::TempDir,
}

/// A fresh set-up.
pub fn setup() -> Setup {
    Setup {
        runtime: tokio::runtime::Runtime::new().unwrap(),
        home: tempfile::tempdir().unwrap(),
        work: tempfile::tempdir().unwrap(),
    }
}

impl Setup {
    /// A scripted model server answering with `script`.
    pub fn server(&self, script: Script) -> ScriptedServer {
        self.runtime
            .block_on(ScriptedServer::start(script))
            .unwrap()
    }

    /// `oi ARGS` in the working directory, with the temporary HOME and no provider variables.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_oi"));
        command
            .args(args)
            .current_dir(self.work.path())
            .env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path().join(".config"))
            .env("USER", "tester")
            .env("LOGNAME", "tester")
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .env_remove("OI_MAX_REPLY_BYTES")
            .env_remove("OI_MAX_SSE_LINE_BYTES")
            .env_remove("OI_MAX_REPLY_BODY_BYTES");
        command
    }
}

/// What a measured run gave.
#[derive(Debug)]
pub struct Measured {
    pub stdout: String,
    pub stderr: String,
    /// The exit code (`None`: killed at the time limit).
    pub code: Option<i32>,
    pub elapsed: Duration,
    /// The highest peak resident set size seen in `/proc/PID/status` (VmHWM), in KiB.
    pub peak_rss_kib: u64,
}

/// VmHWM of a running process, in KiB.
fn peak_rss(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn drain(mut pipe: impl Read + Send + 'static) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}

/// Runs `command` with `stdin`, polling its peak memory until it exits; kills it after
/// `limit`.
pub fn run_measured(mut command: Command, stdin: &str, limit: Duration) -> Measured {
    let started = Instant::now();
    let mut child: Child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.to_owned();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(stdin.as_bytes());
    });
    let stdout = drain(child.stdout.take().unwrap());
    let stderr = drain(child.stderr.take().unwrap());
    let mut peak = 0;
    let code = loop {
        if let Some(kib) = peak_rss(pid) {
            peak = peak.max(kib);
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if started.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let elapsed = started.elapsed();
    writer.join().unwrap();
    Measured {
        stdout: String::from_utf8_lossy(&stdout.join().unwrap()).into_owned(),
        stderr: String::from_utf8_lossy(&stderr.join().unwrap()).into_owned(),
        code,
        elapsed,
        peak_rss_kib: peak,
    }
}

/// Whether this machine can give the tests a pseudo-terminal.
pub fn pty_available() -> bool {
    std::path::Path::new("/dev/ptmx").exists()
}
