//! Spawning sessions in their own process group, and signalling whole groups.
//!
//! Every `unsafe` block of the crate lives here or in the sandbox's syscall modules
//! (`landlock.rs`, `seccomp.rs`, `limits.rs`), each in a tiny wrapper with the reason it is
//! sound.

use std::fs::File;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::Path;
use std::process::Stdio;

use tokio::process::{Child, Command};

use crate::confine::{Confine, Prepared};

/// A signal the computer sends to a session's process group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Signal {
    /// `SIGINT`: the Ctrl-C of a terminal.
    Interrupt,
    /// `SIGTERM`: asks politely.
    Terminate,
    /// `SIGKILL`: cannot be ignored.
    Kill,
}

impl Signal {
    fn raw(self) -> libc::c_int {
        match self {
            Signal::Interrupt => libc::SIGINT,
            Signal::Terminate => libc::SIGTERM,
            Signal::Kill => libc::SIGKILL,
        }
    }
}

/// Sends `signal` to every process of the group `pgid`; errors (group gone) are ignored.
pub(crate) fn signal_group(pgid: u32, signal: Signal) {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else {
        return;
    };
    if pgid <= 1 {
        return; // never signal "every process" or init by accident
    }
    // SAFETY: killpg only sends a signal; it touches no memory of ours.
    unsafe {
        libc::killpg(pgid, signal.raw());
    }
}

/// Whether the process group `pgid` still has a member.
pub(crate) fn group_alive(pgid: u32) -> bool {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else {
        return false;
    };
    // SAFETY: signal 0 only checks for existence and permission.
    unsafe { libc::killpg(pgid, 0) == 0 }
}

/// A pipe whose two ends are close-on-exec: `(read end, write end)`.
pub(crate) fn pipe() -> std::io::Result<(File, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` is a valid array of two ints for pipe2 to fill.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded, so both descriptors are open and owned by nobody else.
    let (read, write) = unsafe { (File::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    Ok((read, write))
}

/// A spawned session: the child, the read end of its merged stdout+stderr, and its group id.
pub(crate) struct Spawned {
    /// The child (killed on drop).
    pub child: Child,
    /// stdout and stderr of the child, in one ordered pipe.
    pub output: File,
    /// The process group id (= the child's pid).
    pub pgid: u32,
}

/// Spawns `program args` in a new process group with piped stdin and stdout+stderr merged
/// into one pipe, confined by `confine` (sandbox, resource limits, env markers; `scratch` is
/// the session's private work directory, writable in every sandbox mode). On Linux the child
/// also gets SIGKILL when this process dies.
pub(crate) fn spawn(
    program: &str,
    args: &[&str],
    envs: &[(&str, &str)],
    confine: &Confine,
    scratch: Option<&Path>,
) -> std::io::Result<Spawned> {
    let prepared = confine.prepare(scratch)?;
    let (read, write) = pipe()?;
    let write_err = write.try_clone()?;
    let mut command = Command::new(program);
    command
        .args(args)
        .envs(envs.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::from(write))
        .stderr(Stdio::from(write_err))
        .process_group(0)
        .kill_on_drop(true);
    for (key, value) in prepared.envs() {
        command.env(key, value);
    }
    if let Some(dir) = prepared.cwd() {
        command.current_dir(dir);
    }
    set_parent_death_signal(&mut command);
    confine_child(&mut command, prepared);
    let child = command.spawn()?;
    // `command` (and with it our copies of the write end) is dropped here, so the reader sees
    // EOF once every process of the session has closed the pipe.
    drop(command);
    let pgid = child.id().unwrap_or(0);
    Ok(Spawned {
        child,
        output: read,
        pgid,
    })
}

/// Kills the session if oi dies. Linux sends the signal when the *thread* that spawned the
/// child exits, not only the process: a caller that runs its first turn on a short-lived thread
/// (rather than the main thread or a runtime worker) loses its sessions when that thread ends;
/// they restart on the next run with a note that state was lost.
#[cfg(target_os = "linux")]
fn set_parent_death_signal(command: &mut Command) {
    // SAFETY: the closure runs between fork and exec and only calls prctl, which is
    // async-signal-safe; it allocates nothing and touches no locks.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
            Ok(())
        });
    }
}

/// Makes the child apply `prepared` (rlimits, Landlock, seccomp) just before exec.
fn confine_child(command: &mut Command, prepared: Prepared) {
    // SAFETY: the closure runs between fork and exec and only makes syscalls (setrlimit,
    // prctl, landlock_restrict_self) on memory built before the fork; it allocates nothing
    // and touches no locks. `prepared` (and the ruleset descriptor it owns) lives in the
    // command until the spawn returns.
    unsafe {
        command.pre_exec(move || prepared.apply_in_child());
    }
}

#[cfg(not(target_os = "linux"))]
fn set_parent_death_signal(_command: &mut Command) {}

/// Whether `program` can be found on `PATH` (or is an existing path).
pub(crate) fn program_exists(program: &str) -> bool {
    if program.contains('/') {
        return std::path::Path::new(program).is_file();
    }
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path).any(|dir| dir.join(program).is_file())
}
