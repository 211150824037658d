//! Confining a session: deciding what of the sandbox policy is enforced, preparing the
//! Landlock ruleset, the seccomp filter and the rlimits in the parent, and applying them in
//! the child between fork and exec.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::limits::{ResourceLimits, Rlimits};
use crate::sandbox::{SandboxMode, SandboxPolicy, SandboxSupport};

/// The sandbox policy, resource limits and kernel support every session of a computer uses.
#[derive(Debug, Default)]
pub(crate) struct Confine {
    /// The policy asked for.
    pub policy: SandboxPolicy,
    /// What the kernel supports (probed once).
    pub support: SandboxSupport,
    /// Per-session resource limits.
    pub limits: ResourceLimits,
    /// Whether the "running unsandboxed" warning was given.
    warned: AtomicBool,
}

impl Clone for Confine {
    fn clone(&self) -> Self {
        Confine {
            policy: self.policy.clone(),
            support: self.support,
            limits: self.limits,
            warned: AtomicBool::new(self.warned.load(Ordering::SeqCst)),
        }
    }
}

/// Whether a session may start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Gate {
    /// Start it; say `note` first (the one-time fallback warning).
    Run(Option<String>),
    /// Do not: the sandbox asked for cannot be enforced; the one-line message says why.
    Refuse(String),
}

impl Confine {
    /// A confinement with `policy`, `limits` and the probed `support`.
    pub(crate) fn new(
        policy: SandboxPolicy,
        support: SandboxSupport,
        limits: ResourceLimits,
    ) -> Confine {
        Confine {
            policy,
            support,
            limits,
            warned: AtomicBool::new(false),
        }
    }

    /// Whether the file-system part of the policy is enforced.
    fn fs(&self) -> bool {
        self.policy.mode != SandboxMode::Off && self.support.filesystem()
    }

    /// Whether network denial is enforced.
    fn net_denied(&self) -> bool {
        !self.policy.network && self.support.network()
    }

    /// Whether sessions may start, and the warning to give once when the policy is only
    /// partly enforced because the user allowed the fallback.
    pub(crate) fn gate(&self) -> Gate {
        let Some(missing) = self.support.missing(&self.policy) else {
            return Gate::Run(None);
        };
        if !self.policy.allow_unsandboxed_fallback {
            return Gate::Refuse(format!(
                "[oi: refusing to run code: the sandbox asked for (--sandbox {}{}) cannot be enforced on this machine: {missing}. Use `--sandbox off`, or allow the unsandboxed fallback.]\n",
                self.policy.mode,
                if self.policy.network {
                    ""
                } else {
                    ", no network"
                },
            ));
        }
        if self.warned.swap(true, Ordering::SeqCst) {
            return Gate::Run(None);
        }
        Gate::Run(Some(format!(
            "[oi: WARNING: code runs WITHOUT the sandbox asked for, because {missing}; the unsandboxed fallback is allowed.]\n"
        )))
    }

    /// The environment markers children see.
    fn envs(&self) -> Vec<(String, String)> {
        let mut envs = Vec::new();
        if self.fs() {
            envs.push(("OI_SANDBOX".to_owned(), self.policy.mode.to_string()));
        }
        if self.fs() || self.net_denied() {
            let network = if self.net_denied() { "0" } else { "1" };
            envs.push(("OI_SANDBOX_NETWORK".to_owned(), network.to_owned()));
        }
        if self.fs() && self.policy.mode == SandboxMode::ReadOnly {
            envs.push(("PYTHONDONTWRITEBYTECODE".to_owned(), "1".to_owned()));
        }
        envs
    }

    /// Builds what the child applies; `scratch` is the session's private work directory,
    /// writable in every mode.
    pub(crate) fn prepare(&self, scratch: Option<&Path>) -> std::io::Result<Prepared> {
        let cwd = (self.policy.mode != SandboxMode::Off).then(|| self.policy.workspace.clone());
        Ok(Prepared {
            #[cfg(target_os = "linux")]
            ruleset: self.ruleset(scratch)?,
            #[cfg(target_os = "linux")]
            filter: if self.net_denied() {
                crate::seccomp::deny_network()
            } else {
                None
            },
            rlimits: Rlimits::for_limits(&self.limits),
            envs: self.envs(),
            cwd,
        })
    }

    #[cfg(target_os = "linux")]
    fn ruleset(&self, scratch: Option<&Path>) -> std::io::Result<Option<crate::landlock::Ruleset>> {
        use crate::landlock::{Handled, Ruleset, fs, net, scope};
        let abi = self.support.landlock_abi;
        if abi == 0 || !(self.fs() || self.net_denied()) {
            return Ok(None);
        }
        let mut handled = Handled::default();
        if self.fs() {
            handled.fs = fs::all(abi);
        }
        if self.net_denied() && abi >= 4 {
            handled.net = net::BIND_TCP | net::CONNECT_TCP;
        }
        if abi >= 6 && self.fs() {
            handled.scoped |= scope::SIGNAL;
        }
        if abi >= 6 && self.net_denied() {
            handled.scoped |= scope::ABSTRACT_UNIX_SOCKET;
        }
        if handled.fs == 0 && handled.net == 0 && handled.scoped == 0 {
            return Ok(None);
        }
        let mut ruleset = Ruleset::new(handled)?;
        if self.fs() {
            ruleset.allow(Path::new("/"), fs::READ)?;
            let device = fs::READ_FILE | fs::WRITE_FILE | fs::TRUNCATE | fs::IOCTL_DEV;
            for path in [
                "/dev/null",
                "/dev/zero",
                "/dev/full",
                "/dev/tty",
                "/dev/ptmx",
                "/dev/pts",
            ] {
                ruleset.allow(Path::new(path), device)?;
            }
            let mut writable: Vec<PathBuf> = scratch.map(Path::to_path_buf).into_iter().collect();
            if self.policy.mode == SandboxMode::Workspace {
                writable.push(self.policy.workspace.clone());
                writable.push(std::env::temp_dir());
                writable.push(PathBuf::from("/dev/shm"));
            }
            for dir in writable {
                ruleset.allow(&dir, fs::all(abi))?;
            }
        }
        Ok(Some(ruleset))
    }
}

/// What one child applies before exec, built in the parent.
#[derive(Debug)]
pub(crate) struct Prepared {
    #[cfg(target_os = "linux")]
    ruleset: Option<crate::landlock::Ruleset>,
    #[cfg(target_os = "linux")]
    filter: Option<Vec<libc::sock_filter>>,
    rlimits: Rlimits,
    envs: Vec<(String, String)>,
    cwd: Option<PathBuf>,
}

impl Prepared {
    /// The environment markers to set.
    pub(crate) fn envs(&self) -> &[(String, String)] {
        &self.envs
    }

    /// The directory the child starts in, when the sandbox sets one.
    pub(crate) fn cwd(&self) -> Option<&Path> {
        self.cwd.as_deref()
    }

    /// Applies everything in the child: rlimits, then Landlock, then seccomp. Only syscalls
    /// on memory built before the fork: safe between fork and exec.
    pub(crate) fn apply_in_child(&self) -> std::io::Result<()> {
        self.rlimits.apply()?;
        #[cfg(target_os = "linux")]
        {
            if let Some(ruleset) = &self.ruleset {
                crate::landlock::restrict_self(ruleset.raw_fd())?;
            }
            if let Some(filter) = &self.filter {
                crate::seccomp::install(filter)?;
            }
        }
        Ok(())
    }
}
