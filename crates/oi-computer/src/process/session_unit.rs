//! The unit a session's processes live in, which they cannot leave, and how it is signalled,
//! counted and killed:
//!
//! - its process group (always: the interpreter is the leader of a new session and group, and
//!   an interrupt goes to the group, like Ctrl-C in a terminal);
//! - its own PID namespace (sandboxed sessions, where the host allows): the interpreter is
//!   PID 1, and killing it makes the kernel kill everything else in the namespace;
//! - its own cgroup v2 leaf (where the host allows): every process, whatever session or group
//!   it moved to, is listed there and killed with `cgroup.kill`.
//!
//! Without a namespace or a cgroup, a process that leaves the group (`setsid`) is out of reach:
//! only the group is signalled and counted (the fallback, best effort).

use std::os::fd::{AsRawFd, OwnedFd};

use crate::base::process_group::{Signal, group_alive, signal_group};
use crate::sandbox::cgroup::Leaf;

/// One session's processes.
#[derive(Debug)]
pub(crate) struct Unit {
    /// The process group id (= the interpreter's pid as oi sees it).
    pgid: u32,
    /// A pidfd for the interpreter.
    leader: Option<OwnedFd>,
    /// The inode of the session's own PID namespace, when it has one.
    pid_namespace: Option<u64>,
    /// The session's cgroup leaf, when it has one (killed and removed on drop).
    cgroup: Option<Leaf>,
}

impl Unit {
    /// The unit of a session whose interpreter is `pid`.
    pub(crate) fn new(
        pid: u32,
        leader: Option<OwnedFd>,
        own_pid_namespace: bool,
        cgroup: Option<Leaf>,
    ) -> Unit {
        let pid_namespace = if own_pid_namespace {
            namespace_inode(pid)
        } else {
            None
        };
        Unit {
            pgid: pid,
            leader,
            pid_namespace,
            cgroup,
        }
    }

    /// The process group id.
    pub(crate) fn pgid(&self) -> u32 {
        self.pgid
    }

    /// SIGINT to the process group: interrupts the running code.
    pub(crate) fn interrupt(&self) {
        signal_group(self.pgid, Signal::Interrupt);
    }

    /// Asks the unit to end: SIGTERM to the group. A PID 1 ignores SIGTERM from outside
    /// (it installs no handler for it), so a unit with its own namespace is killed instead.
    pub(crate) fn terminate(&self) {
        if self.pid_namespace.is_some() {
            self.kill();
        } else {
            signal_group(self.pgid, Signal::Terminate);
        }
    }

    /// SIGKILL to every process of the unit.
    pub(crate) fn kill(&self) {
        if let Some(leaf) = &self.cgroup {
            leaf.kill();
        }
        if self.pid_namespace.is_some() {
            self.signal_leader(libc::SIGKILL);
        }
        signal_group(self.pgid, Signal::Kill);
    }

    /// Kills the unit and, when it has a cgroup, removes it now (waiting up to 100 ms for the
    /// killed processes): for when oi is about to exit and no thread may finish the job.
    pub(crate) fn finish(&self) {
        self.kill();
        if let Some(leaf) = &self.cgroup {
            leaf.finish();
        }
    }

    /// Whether a process of the unit is still alive.
    pub(crate) fn alive(&self) -> bool {
        if let Some(leaf) = &self.cgroup {
            return leaf.populated();
        }
        if self.pid_namespace.is_some() {
            return self.signal_leader(0);
        }
        group_alive(self.pgid)
    }

    /// How many live processes the unit has.
    pub(crate) fn count(&self) -> usize {
        if let Some(leaf) = &self.cgroup {
            // Only live processes count (a zombie whose threads still run is listed too).
            return leaf
                .pids()
                .into_iter()
                .filter(|pid| crate::base::procfs::is_live(&pid.to_string()))
                .count();
        }
        if let Some(inode) = self.pid_namespace {
            return crate::base::procfs::count_namespace(inode);
        }
        crate::base::procfs::count_group(self.pgid)
    }

    /// Sends `signal` to the interpreter (0: only checks it exists); true when delivered.
    fn signal_leader(&self, signal: libc::c_int) -> bool {
        match &self.leader {
            #[cfg(target_os = "linux")]
            Some(pidfd) => {
                // SAFETY: pidfd_send_signal on our own descriptor, with no siginfo.
                let rc = unsafe {
                    libc::syscall(
                        libc::SYS_pidfd_send_signal,
                        pidfd.as_raw_fd(),
                        signal,
                        std::ptr::null::<libc::siginfo_t>(),
                        0u32,
                    )
                };
                rc == 0
            }
            #[cfg(not(target_os = "linux"))]
            Some(pidfd) => {
                let _ = pidfd.as_raw_fd();
                false
            }
            None => {
                let Ok(pid) = libc::pid_t::try_from(self.pgid) else {
                    return false;
                };
                // SAFETY: kill only sends a signal; it touches no memory of ours.
                pid > 1 && unsafe { libc::kill(pid, signal) } == 0
            }
        }
    }
}

/// The inode of `pid`'s PID namespace.
fn namespace_inode(pid: u32) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(format!("/proc/{pid}/ns/pid"))
        .ok()
        .map(|m| m.ino())
}
