//! Resource limits per session (processes, memory and CPU time): how each is enforced, and
//! which one a session that died most likely hit. The rlimits themselves are in `rlimits.rs`,
//! the process watchdog in `process_limit.rs`.
//!
//! - Memory: `RLIMIT_DATA` on every process of the session (each process separately; it
//!   counts heap and private writable mappings, not the address space interpreters like
//!   node and Java reserve without using, which `RLIMIT_AS` would count). An allocation past
//!   it fails (Python raises `MemoryError` and the session lives on).
//! - CPU: `RLIMIT_CPU` on every process of the session, over its whole life (a persistent
//!   session's interpreter accumulates CPU time across runs; after a restart it starts from
//!   zero). Past it the kernel sends `SIGXCPU` (the session ends), a second later `SIGKILL`.
//!   The hard limit is one second above the soft one so the code cannot raise it; raising it
//!   per run from the parent would need `CAP_SYS_RESOURCE`, which oi does not have as a
//!   normal user (nor as root on some machines).
//! - Processes: a watchdog counts the live processes of the session's unit (its cgroup, else
//!   its PID namespace, else its process group) every 50 ms and kills the unit past the
//!   limit (this also holds for root, whom the kernel exempts from `RLIMIT_NPROC`, and
//!   counts processes, not threads). For other users `RLIMIT_NPROC` is set as a backstop a
//!   fork bomb cannot outrun: it counts every task (thread) of the real uid, so it is set to
//!   the uid's tasks at session start plus four times the limit plus 64 (interpreters' own
//!   threads).

pub use oi_core::settings::computer::ResourceLimits;

/// Which limit a session that died with `status` most likely hit.
pub(crate) fn hit_by(
    limits: &ResourceLimits,
    status: Option<std::process::ExitStatus>,
) -> Option<&'static str> {
    use std::os::unix::process::ExitStatusExt;
    let signal = status.and_then(|s| s.signal());
    let code = status.and_then(|s| s.code());
    if limits.max_cpu_seconds.is_some() && signal == Some(libc::SIGXCPU) {
        return Some("CPU");
    }
    if limits.max_memory_bytes.is_some() {
        let memory_signal = matches!(
            signal,
            Some(libc::SIGABRT | libc::SIGSEGV | libc::SIGBUS | libc::SIGKILL | libc::SIGTRAP)
        );
        // 134 = a shell's report of SIGABRT; node exits with it on "out of memory".
        if memory_signal || matches!(code, Some(134 | 137)) {
            return Some("memory");
        }
    }
    if limits.max_cpu_seconds.is_some() && signal == Some(libc::SIGKILL) {
        return Some("CPU");
    }
    None
}

/// The console note for a session (`what`, e.g. `Python session`) that hit `which` limit.
pub(crate) fn hit_message(what: &str, which: &str) -> String {
    format!(
        "\n[oi: the {what} hit its {which} limit and was restarted; state was lost (variables, imports, working directory). A new session will start with the next run.]\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    #[test]
    fn classifies_deaths() {
        let all = ResourceLimits {
            max_processes: Some(10),
            max_memory_bytes: Some(1 << 29),
            max_cpu_seconds: Some(5),
        };
        let signalled = |sig: i32| Some(std::process::ExitStatus::from_raw(sig));
        assert_eq!(hit_by(&all, signalled(libc::SIGXCPU)), Some("CPU"));
        assert_eq!(hit_by(&all, signalled(libc::SIGABRT)), Some("memory"));
        assert_eq!(
            hit_by(&ResourceLimits::default(), signalled(libc::SIGABRT)),
            None
        );
        let exited = Some(std::process::ExitStatus::from_raw(1 << 8));
        assert_eq!(hit_by(&all, exited), None);
        assert!(hit_message("Python session", "memory").contains("hit its memory limit"));
    }
}
