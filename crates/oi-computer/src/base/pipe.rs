//! Pipes for a session's stdin, output and the child's step report: close-on-exec, and never
//! on the standard descriptors.

use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

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
