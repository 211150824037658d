//! The rlimits of a session's processes (`RLIMIT_DATA`, `RLIMIT_CPU`, and for other users than
//! root `RLIMIT_NPROC` as a backstop), computed in the parent and set in the child between
//! clone and exec. How each limit is enforced as a whole is told in `limits.rs`.

use crate::policy::limits::ResourceLimits;

/// The rlimits to set in the child, computed in the parent.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Rlimits {
    data: Option<u64>,
    cpu: Option<u64>,
    nproc: Option<u64>,
}

impl Rlimits {
    /// The rlimits for `limits` (counts this user's tasks when a process limit is set).
    pub(crate) fn for_limits(limits: &ResourceLimits) -> Rlimits {
        Rlimits {
            data: limits.max_memory_bytes,
            cpu: limits.max_cpu_seconds.map(|s| s.max(1)),
            nproc: limits.max_processes.and_then(nproc_backstop),
        }
    }

    /// Sets the limits on the calling process. Only syscalls: safe between fork and exec.
    pub(crate) fn apply(&self) -> std::io::Result<()> {
        if let Some(bytes) = self.data {
            set(libc::RLIMIT_DATA, bytes, bytes)?;
        }
        if let Some(secs) = self.cpu {
            set(libc::RLIMIT_CPU, secs, secs.saturating_add(1))?;
        }
        if let Some(n) = self.nproc {
            set(libc::RLIMIT_NPROC, n, n)?;
        }
        Ok(())
    }
}

/// `RLIMIT_NPROC` for a non-root user: tasks of the uid now + 4 × limit + 64; `None` for root
/// (exempt) or when the count fails.
fn nproc_backstop(max: u32) -> Option<u64> {
    // SAFETY: getuid cannot fail and touches no memory.
    let uid = unsafe { libc::getuid() };
    if uid == 0 {
        return None;
    }
    let tasks = crate::base::procfs::tasks_of_uid(uid)?;
    Some(tasks + 4 * u64::from(max) + 64)
}

#[cfg(target_os = "linux")]
type Resource = libc::__rlimit_resource_t;
#[cfg(not(target_os = "linux"))]
type Resource = libc::c_int;

fn set(resource: Resource, soft: u64, hard: u64) -> std::io::Result<()> {
    let limit = libc::rlimit {
        rlim_cur: soft as libc::rlim_t,
        rlim_max: hard as libc::rlim_t,
    };
    // SAFETY: `limit` is a valid struct the kernel only reads.
    let rc = unsafe { libc::setrlimit(resource, &limit) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
