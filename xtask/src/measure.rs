//! Runs a command and measures its wall time and peak memory (`wait4`'s `ru_maxrss`).

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One measured run.
#[derive(Debug, Clone)]
pub struct Sample {
    /// Wall-clock time from spawn to exit.
    pub wall: Duration,
    /// Peak resident memory of the process, in KiB.
    pub max_rss_kib: u64,
    /// Whether it exited with status 0 (false also when it was killed at the time limit).
    pub success: bool,
    /// What it printed on stdout.
    pub stdout: String,
}

impl Sample {
    /// The number after `key=` in the output, e.g. `chat_s=0.52`.
    pub fn value(&self, key: &str) -> Option<f64> {
        self.stdout
            .split_whitespace()
            .find_map(|word| word.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
    }
}

/// Runs `command` to completion (killed after `limit`), stdin from `input` if any.
pub fn run_limited(
    command: &mut Command,
    input: Option<&str>,
    limit: Duration,
) -> std::io::Result<Sample> {
    command.stdout(Stdio::piped()).stderr(Stdio::null());
    command.stdin(if input.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    let started = Instant::now();
    let mut child = command.spawn()?;
    if let (Some(text), Some(mut stdin)) = (input, child.stdin.take()) {
        use std::io::Write;
        stdin.write_all(text.as_bytes())?;
    }
    let pid = child.id() as libc::pid_t;
    let mut stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(out) = stdout.as_mut() {
            let _ = out.read_to_string(&mut text);
        }
        text
    });
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if done_rx.recv_timeout(limit).is_err() {
            // SAFETY: killing our own child, which has not been waited for yet.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    });
    let mut status: libc::c_int = 0;
    // SAFETY: an all-zero `rusage` is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own child, not yet waited for; the pointers are to live locals.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let wall = started.elapsed();
    let _ = done_tx.send(());
    let _ = watchdog.join();
    drop(child);
    if waited < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(Sample {
        wall,
        max_rss_kib: u64::try_from(usage.ru_maxrss).unwrap_or(0),
        success: libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        stdout: reader.join().unwrap_or_default(),
    })
}

/// Runs `command` with a 10-minute limit.
pub fn run(command: &mut Command, input: Option<&str>) -> std::io::Result<Sample> {
    run_limited(command, input, Duration::from_secs(600))
}

/// Median of a list (sorted copy).
pub fn median<T: Copy + PartialOrd>(values: &[T]) -> Option<T> {
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    sorted.get(sorted.len() / 2).copied()
}
