//! Starting a process with `clone` (fork semantics, optionally in new namespaces), waiting for
//! it, and trying something in a short-lived child (the namespace probe).
//!
//! Every `unsafe` block here is a one-syscall wrapper with the reason it is sound.

use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use crate::base::errno::errno;

/// `clone` with fork semantics (`flags` adds namespaces); with `want_pidfd`, asks for a pidfd
/// too (Linux 5.2+; older kernels leave none). Returns 0 in the child.
#[cfg(target_os = "linux")]
pub(crate) fn clone_process(
    flags: libc::c_int,
    want_pidfd: bool,
) -> std::io::Result<(libc::pid_t, Option<OwnedFd>)> {
    let mut pidfd: libc::c_int = -1;
    let mut all = flags as libc::c_ulong | libc::SIGCHLD as libc::c_ulong;
    if want_pidfd {
        all |= libc::CLONE_PIDFD as libc::c_ulong;
    }
    // SAFETY: without CLONE_VM and with a null stack, clone behaves like fork: the child gets
    // a copy of our memory and continues on its copy of this thread's stack, where it only
    // makes async-signal-safe syscalls on memory built before this call, then execs or exits.
    // The kernel writes the pidfd into `pidfd` (the parent_tid argument on every
    // architecture), which outlives the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_clone,
            all,
            0usize,
            &mut pidfd as *mut libc::c_int,
            0usize,
            0usize,
        )
    };
    let pid = libc::pid_t::try_from(rc).map_err(|_| std::io::Error::other("bad pid"))?;
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid == 0 || pidfd < 0 {
        return Ok((pid, None));
    }
    // SAFETY: the kernel returned a new descriptor that nobody else owns.
    Ok((pid, Some(unsafe { OwnedFd::from_raw_fd(pidfd) })))
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn clone_process(
    _flags: libc::c_int,
    _want_pidfd: bool,
) -> std::io::Result<(libc::pid_t, Option<OwnedFd>)> {
    // SAFETY: the child only makes async-signal-safe syscalls on memory built before the
    // fork, then execs or exits.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok((pid, None))
}

/// Waits for `pid` and returns its exit status (`None` if someone else reaped it).
pub(crate) fn reap(pid: libc::pid_t) -> Option<ExitStatus> {
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: `status` is a valid int for waitpid to fill.
        let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
        if rc == pid {
            return Some(ExitStatus::from_raw(status));
        }
        if rc < 0 && errno() == libc::EINTR {
            continue;
        }
        return None;
    }
}

/// Runs `check` in a short-lived child cloned with `flags` and says whether it returned true
/// (for probing namespaces). `check` must only make async-signal-safe syscalls.
pub(crate) fn check_in_child(flags: libc::c_int, check: impl Fn() -> bool) -> bool {
    let Ok((pid, _)) = clone_process(flags, false) else {
        return false;
    };
    if pid == 0 {
        let code = if check() { 0 } else { 1 };
        // SAFETY: _exit ends the child at once.
        unsafe { libc::_exit(code) }
    }
    reap(pid).is_some_and(|status| status.code() == Some(0))
}
