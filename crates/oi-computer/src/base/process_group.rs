//! Signals to a process group: interrupting, terminating and killing a session's group, and
//! asking whether it still has a member.

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
