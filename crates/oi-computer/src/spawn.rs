//! Spawning a session (its program, pipes, environment and confinement) and signalling
//! process groups.
//!
//! Every `unsafe` block of the crate lives here or in the small syscall modules (`child.rs`,
//! `landlock.rs`, `seccomp.rs`, `namespaces.rs`, `capabilities.rs`, `limits.rs`, `session_unit.rs`),
//! each in a tiny wrapper with the reason it is sound.

use std::ffi::{CString, OsString};
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::net::unix::pipe;

use crate::child::{ExitWatch, Plan};
use crate::confine::Confine;
use crate::session_unit::Unit;

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

/// The calling thread's errno (no allocation: usable between clone and exec).
pub(crate) fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// A pipe whose two ends are close-on-exec and above the standard descriptors (so a child's
/// `dup2` onto 0, 1 and 2 never overwrites one of them): `(read end, write end)`.
pub(crate) fn pipe() -> std::io::Result<(File, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` is a valid array of two ints for pipe2 to fill.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded, so both descriptors are open and owned by nobody else.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    Ok((File::from(above_stdio(read)?), above_stdio(write)?))
}

/// `fd`, moved to a number above 2 if it is one of the standard descriptors (oi started with
/// one of them closed).
fn above_stdio(fd: OwnedFd) -> std::io::Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    // SAFETY: F_DUPFD_CLOEXEC duplicates an open descriptor; no memory is passed.
    let moved = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
    if moved < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fcntl returned a new descriptor owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(moved) })
}

/// A spawned session: its exit status, its stdin, the read end of its merged stdout+stderr,
/// and the unit its processes live in.
pub(crate) struct Spawned {
    /// The interpreter's exit status, once it exits.
    pub exit: ExitWatch,
    /// Where commands go.
    pub stdin: pipe::Sender,
    /// stdout and stderr of the child, in one ordered pipe.
    pub output: File,
    /// The session's processes (killed when the last owner drops it).
    pub unit: Arc<Unit>,
}

/// Spawns `program args` as a new session (no controlling terminal) with piped stdin and
/// stdout+stderr merged into one pipe, confined by `confine` (sandbox, resource limits,
/// namespaces, cgroup, environment; `scratch` is the session's private work directory,
/// writable in every sandbox mode). `envs` are set on top of what the child inherits. The
/// child also gets SIGKILL when oi dies. Must be called within a tokio runtime.
pub(crate) fn spawn(
    program: &str,
    args: &[&str],
    envs: &[(&str, &str)],
    confine: &Confine,
    scratch: Option<&Path>,
) -> std::io::Result<Spawned> {
    if tokio::runtime::Handle::try_current().is_err() {
        return Err(std::io::Error::other(
            "sessions are started from within a tokio runtime",
        ));
    }
    let path = find_program(program).ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("`{program}` was not found on PATH"),
        )
    })?;
    let tag = crate::session::nonce();
    let prepared = confine.prepare(scratch, tag.get(..12).unwrap_or(&tag))?;
    let (stdin_read, stdin_write) = pipe()?;
    let (output, output_write) = pipe()?;
    let mut set: Vec<(String, String)> = envs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    set.extend(prepared.markers.iter().cloned());
    let environment = confine.inherit().environment(std::env::vars_os(), &set);
    let cgroup_procs = match &prepared.leaf {
        Some(leaf) => Some(leaf.procs_for_child()?),
        None => None,
    };
    let plan = Plan {
        program: c_string(path.as_os_str().as_bytes())?,
        argv: std::iter::once(program)
            .chain(args.iter().copied())
            .map(|a| c_string(a.as_bytes()))
            .collect::<std::io::Result<_>>()?,
        envp: environment.iter().filter_map(env_entry).collect(),
        stdin: OwnedFd::from(stdin_read),
        output: output_write,
        cgroup_procs,
        confinement: prepared.confinement,
    };
    let own_pid_namespace = plan.confinement.own_pid_namespace();
    let stdin = pipe::Sender::from_owned_fd(stdin_write)?;
    let (unit_tx, unit_rx) = std::sync::mpsc::channel::<Arc<Unit>>();
    let started = crate::child::start(
        plan,
        Box::new(move || {
            // The interpreter is gone: the session is over, so is everything it started.
            if let Ok(unit) = unit_rx.recv() {
                unit.kill();
            }
        }),
    )?;
    let leaf = prepared.leaf.filter(|_| started.joined_cgroup);
    let unit = Arc::new(Unit::new(
        started.pid,
        started.pidfd,
        own_pid_namespace,
        leaf,
    ));
    let _ = unit_tx.send(Arc::clone(&unit));
    Ok(Spawned {
        exit: started.exit,
        stdin,
        output,
        unit,
    })
}

fn c_string(bytes: &[u8]) -> std::io::Result<CString> {
    CString::new(bytes).map_err(|_| std::io::Error::other("an argument contains a NUL byte"))
}

/// `NAME=value` for the child's environment (`None` for a pair with a NUL byte).
fn env_entry((name, value): &(OsString, OsString)) -> Option<CString> {
    let mut entry = name.as_bytes().to_vec();
    entry.push(b'=');
    entry.extend_from_slice(value.as_bytes());
    CString::new(entry).ok()
}

/// Where `program` is: itself when it contains a `/`, else the first match on `PATH`.
pub(crate) fn find_program(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        let path = PathBuf::from(program);
        return path.is_file().then_some(path);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

/// Whether `program` can be found on `PATH` (or is an existing path).
pub(crate) fn program_exists(program: &str) -> bool {
    find_program(program).is_some()
}
