//! One `oi` run, timed from outside (wall time, first byte on stdout) and read from inside
//! (the figures `oi -v` logs for the embedded model).

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

/// A finished run.
#[derive(Debug, Clone)]
pub struct Timed {
    /// Spawn to exit.
    pub wall: Duration,
    /// Spawn to the first byte on stdout.
    pub first_byte: Option<Duration>,
    /// What it printed.
    pub stdout: String,
    /// What it logged.
    pub stderr: String,
}

/// Runs `command` to its end (killed after `limit`); fails when it fails.
pub fn run_timed(command: &mut Command, limit: Duration) -> anyhow::Result<Timed> {
    run_timed_input(command, limit, None)
}

/// [`run_timed`] with `input` (a file) as the program's stdin instead of nothing. The program
/// runs in a process group of its own, which is killed when it exits or overruns `limit`: a
/// process it left behind (a code kernel) must not hold its output open.
pub fn run_timed_input(
    command: &mut Command,
    limit: Duration,
    input: Option<&Path>,
) -> anyhow::Result<Timed> {
    use std::os::unix::process::CommandExt as _;
    let stdin = match input {
        Some(path) => Stdio::from(
            std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?,
        ),
        None => Stdio::null(),
    };
    command
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let started = Instant::now();
    let name = Path::new(command.get_program())
        .file_name()
        .map_or_else(|| "oi".to_owned(), |n| n.to_string_lossy().into_owned());
    let mut child = command
        .spawn()
        .with_context(|| format!("starting {name}"))?;
    let mut stdout = child.stdout.take().context("oi's stdout")?;
    let mut stderr = child.stderr.take().context("oi's stderr")?;
    let out = std::thread::spawn(move || {
        let mut first = None;
        let mut bytes = Vec::new();
        let mut buffer = [0u8; 4096];
        while let Ok(n) = stdout.read(&mut buffer) {
            if n == 0 {
                break;
            }
            first.get_or_insert_with(|| started.elapsed());
            bytes.extend_from_slice(&buffer[..n]);
        }
        (first, String::from_utf8_lossy(&bytes).into_owned())
    });
    let err = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let status = loop {
        if let Some(status) = child.try_wait()? {
            kill_group(child.id());
            break status;
        }
        if started.elapsed() > limit {
            kill_group(child.id());
            let _ = child.kill();
            let _ = child.wait();
            // What it printed and logged so far, for the reader of the error.
            let (_, stdout) = out.join().unwrap_or_default();
            let stderr = strip_ansi(&err.join().unwrap_or_default());
            bail!(
                "{name} did not finish within {} s\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
                limit.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let wall = started.elapsed();
    let (first_byte, stdout) = out.join().unwrap_or_default();
    let stderr = strip_ansi(&err.join().unwrap_or_default());
    if !status.success() {
        bail!("{name} failed ({status}):\n{stdout}\n{stderr}");
    }
    Ok(Timed {
        wall,
        first_byte,
        stdout,
        stderr,
    })
}

/// Kills the process group `pgid` (what a program run by [`run_timed_input`] left running).
fn kill_group(pgid: u32) {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else {
        return;
    };
    // SAFETY: kill(2) with a negative pid signals that process group; no memory is shared.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
}

/// The text without terminal colour sequences.
pub fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The number after `key=` in `line`.
pub fn field(line: &str, key: &str) -> Option<f64> {
    line.split_whitespace()
        .find_map(|word| word.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
}

/// One model call as `oi -v` reports it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Call {
    /// Tokens in the prompt.
    pub prompt_tokens: f64,
    /// Of those, evaluated in this call.
    pub evaluated: f64,
    /// Of those, read from the prompt-state file.
    pub from_file: f64,
    /// Getting the prompt ready (file and evaluation).
    pub prompt_s: f64,
    /// Request to first token.
    pub first_token_s: f64,
    /// Tokens generated.
    pub generated: f64,
    /// Generating them.
    pub generation_s: f64,
}

/// What `oi -v` logged about the embedded model: the load time and each call.
#[derive(Debug, Clone, Default)]
pub struct OiLog {
    /// Loading the model.
    pub load_s: Option<f64>,
    /// Making the context.
    pub context_s: Option<f64>,
    /// The calls, in order.
    pub calls: Vec<Call>,
}

impl OiLog {
    /// Reads the log lines of `stderr`.
    pub fn parse(stderr: &str) -> Self {
        let mut log = OiLog::default();
        for line in stderr.lines() {
            if line.contains("local model loaded in") {
                log.load_s = field(line, "seconds");
            } else if line.contains("local model context:") {
                log.context_s = field(line, "seconds");
            } else if line.contains("local model: prompt") {
                let get = |key| field(line, key).unwrap_or(0.0);
                log.calls.push(Call {
                    prompt_tokens: get("prompt_tokens"),
                    evaluated: get("evaluated"),
                    from_file: get("from_file"),
                    prompt_s: get("prompt_s"),
                    first_token_s: get("first_token_s"),
                    generated: get("generated"),
                    generation_s: get("generation_s"),
                });
            }
        }
        log
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_oi_verbose_lines() {
        let stderr = "\u{1b}[2m2026\u{1b}[0m INFO oi_llm::local::model: local model loaded in 0.41 s path=/m seconds=0.41\n\
                      INFO oi_llm::local::stats: local model: prompt 161 tokens (32 evaluated, 129 reused) sequence=1 prompt_tokens=161 evaluated=32 reused=129 from_file=129 prompt_s=0.3 first_token_s=0.35 generated=20 generation_s=0.5 tokens_per_s=40\n";
        let log = OiLog::parse(&strip_ansi(stderr));
        assert_eq!(log.load_s, Some(0.41));
        assert_eq!(log.calls.len(), 1);
        assert_eq!(log.calls[0].from_file, 129.0);
        assert_eq!(log.calls[0].generation_s, 0.5);
    }
}
