//! Runs a command and measures its wall time and peak memory (`wait4`'s `ru_maxrss`).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One measured run.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    /// Wall-clock time from spawn to exit.
    pub wall: Duration,
    /// Peak resident memory of the process, in KiB.
    pub max_rss_kib: u64,
    /// Whether it exited with status 0.
    pub success: bool,
}

/// Runs `command` to completion with output discarded (stdin from `input`, if any).
pub fn run(command: &mut Command, input: Option<&str>) -> std::io::Result<Sample> {
    command.stdout(Stdio::null()).stderr(Stdio::null());
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
    let mut status: libc::c_int = 0;
    // SAFETY: an all-zero `rusage` is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own child, not yet waited for; the pointers are to live locals.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let wall = started.elapsed();
    if waited < 0 {
        return Err(std::io::Error::last_os_error());
    }
    drop(child);
    Ok(Sample {
        wall,
        max_rss_kib: u64::try_from(usage.ru_maxrss).unwrap_or(0),
        success: libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
    })
}

/// Median of a list (sorted copy).
pub fn median<T: Copy + Ord>(values: &[T]) -> Option<T> {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    sorted.get(sorted.len() / 2).copied()
}
