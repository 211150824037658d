//! The plan a session's child applies between clone and exec — namespaces and mounts, working
//! directory, rlimits, a fresh session keyring, capabilities, `no_new_privs`, Landlock,
//! seccomp — built in the parent
//! by `confine.rs` from the policy, and applied with syscalls only.

use std::ffi::CString;

use crate::sandbox::child_step::Step;
use crate::sandbox::rlimits::Rlimits;

/// What the child applies between clone and exec, built in the parent.
#[derive(Debug)]
pub(crate) struct Confinement {
    /// The directory to start in (the workspace, when sandboxed).
    pub workdir: Option<WorkDir>,
    /// The rlimits to set.
    pub rlimits: Rlimits,
    /// The Linux-only steps.
    #[cfg(target_os = "linux")]
    pub linux: LinuxConfinement,
}

/// The directory a sandboxed session starts in: the workspace's canonical path, and (Linux)
/// the identity of the directory the parent opened there without following links, which the
/// child checks once it is in it.
#[derive(Debug)]
pub(crate) struct WorkDir {
    /// The canonical path.
    pub path: CString,
    /// What the parent found there.
    #[cfg(target_os = "linux")]
    pub identity: crate::sandbox::no_links::Identity,
}

/// The Linux-only steps.
#[cfg(target_os = "linux")]
#[derive(Debug)]
pub(crate) struct LinuxConfinement {
    /// The namespaces to enter and the mounts to make in them.
    pub namespaces: Option<crate::sandbox::namespaces::NamespacePlan>,
    /// Whether to join a new anonymous session keyring (so the host's session keyring is out
    /// of reach; seccomp then refuses the key syscalls altogether).
    pub new_keyring: bool,
    /// Whether to give up every capability.
    pub drop_capabilities: bool,
    /// Whether to set `no_new_privs`.
    pub no_new_privs: bool,
    /// The Landlock ruleset to enforce.
    pub ruleset: Option<crate::sandbox::landlock::Ruleset>,
    /// What the ruleset grants on terminals (also on a private `/dev/pts` mounted later).
    pub terminal_rights: u64,
    /// What the ruleset grants on a private `/dev/shm` mounted later (0: nothing, read only).
    pub shm_rights: u64,
    /// The seccomp filters to install, in order.
    pub filters: Vec<Vec<libc::sock_filter>>,
}

impl Confinement {
    /// The namespace flags for `clone` (0: none).
    pub(crate) fn clone_flags(&self) -> libc::c_int {
        #[cfg(target_os = "linux")]
        if let Some(plan) = &self.linux.namespaces {
            return plan.flags;
        }
        0
    }

    /// Whether the child is PID 1 of its own PID namespace.
    pub(crate) fn own_pid_namespace(&self) -> bool {
        self.clone_flags() != 0
    }

    /// Applies everything in the child, in order: namespaces and mounts, working directory,
    /// rlimits, capabilities, `no_new_privs`, Landlock, seccomp. Only syscalls on memory
    /// built before the clone: safe between clone and exec.
    pub(crate) fn apply_in_child(&self) -> Result<(), (Step, i32)> {
        #[cfg(target_os = "linux")]
        let private = match &self.linux.namespaces {
            Some(plan) => plan.apply_in_child()?,
            None => crate::sandbox::namespaces::PrivateMounts::default(),
        };
        if let Some(dir) = &self.workdir {
            // SAFETY: `dir.path` is a valid NUL-terminated string built before the clone.
            if unsafe { libc::chdir(dir.path.as_ptr()) } != 0 {
                return Err((Step::WorkDir, crate::base::errno::errno()));
            }
            // By name, in the session's mount namespace (a descriptor opened by the parent
            // would lead back into oi's, past the mounts that hide oi's directories); so the
            // directory reached must be the one the parent opened without links.
            #[cfg(target_os = "linux")]
            crate::sandbox::no_links::check_cwd_in_child(dir.identity)
                .map_err(|e| (Step::Swapped, e))?;
        }
        self.rlimits
            .apply()
            .map_err(|e| (Step::Rlimits, e.raw_os_error().unwrap_or(libc::EIO)))?;
        #[cfg(target_os = "linux")]
        self.linux.apply_in_child(private)?;
        Ok(())
    }
}

#[cfg(target_os = "linux")]
impl LinuxConfinement {
    /// A new session keyring, capabilities, `no_new_privs`, Landlock (first granting the
    /// terminal rights on the session's private `/dev/pts`, and the writable roots' rights on
    /// its private `/dev/shm`, when it has them), seccomp.
    fn apply_in_child(
        &self,
        private: crate::sandbox::namespaces::PrivateMounts,
    ) -> Result<(), (Step, i32)> {
        if self.new_keyring {
            join_new_session_keyring().map_err(|e| (Step::Keyring, e))?;
        }
        if let (true, Some(ruleset)) = (private.terminals, &self.ruleset) {
            crate::sandbox::landlock::allow_in_child(
                ruleset.raw_fd(),
                c"/dev/pts",
                self.terminal_rights,
            )
            .map_err(|e| (Step::Landlock, e))?;
        }
        if let (true, Some(ruleset)) = (private.ptmx, &self.ruleset) {
            // The rule on the host's `/dev/ptmx` does not reach the node bound over it.
            crate::sandbox::landlock::allow_in_child(
                ruleset.raw_fd(),
                c"/dev/ptmx",
                self.terminal_rights,
            )
            .map_err(|e| (Step::Landlock, e))?;
        }
        if let (true, Some(ruleset)) = (private.shm && self.shm_rights != 0, &self.ruleset) {
            crate::sandbox::landlock::allow_in_child(
                ruleset.raw_fd(),
                c"/dev/shm",
                self.shm_rights,
            )
            .map_err(|e| (Step::Landlock, e))?;
        }
        if self.drop_capabilities {
            crate::sandbox::capabilities::drop_all().map_err(|e| (Step::Capabilities, e))?;
        }
        if self.no_new_privs {
            crate::sandbox::landlock::set_no_new_privs().map_err(|e| (Step::NoNewPrivs, e))?;
        }
        if let Some(ruleset) = &self.ruleset {
            crate::sandbox::landlock::restrict_self(ruleset.raw_fd())
                .map_err(|e| (Step::Landlock, e))?;
        }
        for filter in &self.filters {
            crate::sandbox::seccomp::install(filter).map_err(|e| (Step::Seccomp, e))?;
        }
        Ok(())
    }
}

/// `keyctl(KEYCTL_JOIN_SESSION_KEYRING, NULL)`: the calling process gets a new, empty,
/// anonymous session keyring in place of the one inherited from oi. A kernel built without
/// keys (`ENOSYS`) has no keyring to leave. Only a syscall: safe between clone and exec. The
/// error is the errno.
#[cfg(target_os = "linux")]
fn join_new_session_keyring() -> Result<(), i32> {
    /// `KEYCTL_JOIN_SESSION_KEYRING` of `<linux/keyctl.h>`.
    const JOIN_SESSION_KEYRING: libc::c_long = 1;
    // SAFETY: a null name asks for an anonymous keyring; the kernel reads no memory of ours.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_keyctl,
            JOIN_SESSION_KEYRING,
            std::ptr::null::<libc::c_char>(),
        )
    };
    if rc < 0 {
        let errno = crate::base::errno::errno();
        if errno != libc::ENOSYS {
            return Err(errno);
        }
    }
    Ok(())
}
