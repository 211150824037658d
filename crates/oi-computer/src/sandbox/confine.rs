//! Confining a session: deciding what of the sandbox policy is enforced, building in the
//! parent the plan the child applies between clone and exec (`confinement.rs`: namespaces and
//! mounts, rlimits, capabilities, the Landlock ruleset, seccomp filters), the environment it
//! inherits, and the cgroup it joins.

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::policy::environment::{Inherit, Secrets};
use crate::policy::limits::ResourceLimits;
use crate::policy::sandbox_policy::{SandboxMode, SandboxPolicy};
use crate::policy::sandbox_support::SandboxSupport;
use crate::sandbox::confinement::Confinement;
#[cfg(target_os = "linux")]
use crate::sandbox::confinement::LinuxConfinement;
use crate::sandbox::rlimits::Rlimits;

/// The sandbox policy, resource limits, secrets and kernel support every session of a
/// computer uses.
#[derive(Debug, Default)]
pub(crate) struct Confine {
    /// The policy asked for.
    pub policy: SandboxPolicy,
    /// What the machine supports: given, or probed when the first session starts.
    support: OnceLock<SandboxSupport>,
    /// Per-session resource limits.
    pub limits: ResourceLimits,
    /// oi's secrets, withheld from every child.
    pub secrets: Secrets,
    /// Directories sandboxed code may not write besides oi's config directory.
    pub protected: Vec<PathBuf>,
    /// Whether the "running unsandboxed" warning was given.
    warned: AtomicBool,
    /// oi's cgroup, found when the first session starts.
    #[cfg(target_os = "linux")]
    cgroup: OnceLock<Option<crate::sandbox::cgroup::CgroupParent>>,
}

impl Clone for Confine {
    fn clone(&self) -> Self {
        let support = OnceLock::new();
        if let Some(known) = self.support.get() {
            let _ = support.set(*known);
        }
        Confine {
            policy: self.policy.clone(),
            support,
            limits: self.limits,
            secrets: self.secrets.clone(),
            protected: self.protected.clone(),
            warned: AtomicBool::new(self.warned.load(Ordering::SeqCst)),
            #[cfg(target_os = "linux")]
            cgroup: OnceLock::new(),
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
    /// A confinement with `policy`, `limits` and `support` (`None`: probed when needed).
    pub(crate) fn new(
        policy: SandboxPolicy,
        support: Option<SandboxSupport>,
        limits: ResourceLimits,
    ) -> Confine {
        let known = OnceLock::new();
        if let Some(support) = support {
            let _ = known.set(support);
        }
        Confine {
            policy,
            support: known,
            limits,
            ..Confine::default()
        }
    }

    /// What the machine supports. Probed on first use when not given: without a file-system
    /// sandbox only the cheap parts (no namespace probe).
    pub(crate) fn support(&self) -> SandboxSupport {
        *self.support.get_or_init(|| {
            if self.policy.mode == SandboxMode::Off {
                crate::sandbox::probe::probe_light()
            } else {
                crate::sandbox::probe::probe()
            }
        })
    }

    /// Whether the file-system part of the policy is enforced.
    fn fs(&self) -> bool {
        self.policy.mode != SandboxMode::Off && self.support().filesystem()
    }

    /// Whether network denial is enforced.
    fn net_denied(&self) -> bool {
        !self.policy.network && self.support().network()
    }

    /// Whether the policy denies the network (enforced or not): what oi itself does on the
    /// code's behalf (a page's screenshot) goes offline too.
    pub(crate) fn network_denied(&self) -> bool {
        !self.policy.network
    }

    /// Whether a session may start with nothing to refuse or to warn about (the gate would
    /// say `Run(None)`), asked without using up the one warning.
    pub(crate) fn starts_quietly(&self) -> bool {
        !self.policy.restricts() || self.support().missing(&self.policy).is_none()
    }

    /// Whether sessions may start, and the warning to give once when the policy is only
    /// partly enforced because the user allowed the fallback.
    pub(crate) fn gate(&self) -> Gate {
        if !self.policy.restricts() {
            return Gate::Run(None);
        }
        let Some(missing) = self.support().missing(&self.policy) else {
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

    /// What children may inherit of oi's environment.
    pub(crate) fn inherit(&self) -> Inherit<'_> {
        Inherit {
            secrets: &self.secrets,
            pass: &self.policy.pass_env,
            sandboxed: self.policy.restricts(),
        }
    }

    /// The environment markers children see.
    fn markers(&self) -> Vec<(String, String)> {
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

    /// oi's directories sandboxed code may not write: its config directory and `protected`.
    fn protected_dirs(&self) -> Vec<PathBuf> {
        oi_core::settings::config_dir()
            .into_iter()
            .chain(self.protected.iter().cloned())
            .collect()
    }

    /// The directories sandboxed code may write, canonical: the session's `scratch`
    /// directory, and in `workspace` mode the workspace, the temp directory and `/dev/shm`.
    fn writable_roots(&self, scratch: Option<&Path>) -> Vec<PathBuf> {
        let mut roots: Vec<PathBuf> = scratch.map(Path::to_path_buf).into_iter().collect();
        if self.policy.mode == SandboxMode::Workspace {
            roots.push(self.policy.workspace.clone());
            roots.push(std::env::temp_dir());
            roots.push(PathBuf::from("/dev/shm"));
        }
        roots
            .iter()
            .map(|r| crate::policy::protected::canonical(r))
            .collect()
    }

    /// Builds what the child applies; `scratch` is the session's private work directory,
    /// writable in every mode; `tag` names the session's cgroup.
    pub(crate) fn prepare(&self, scratch: Option<&Path>, tag: &str) -> std::io::Result<Prepared> {
        let workdir = if self.policy.mode == SandboxMode::Off {
            None
        } else {
            Some(
                CString::new(self.policy.workspace.as_os_str().as_encoded_bytes())
                    .map_err(|_| std::io::Error::other("the workspace path contains a NUL byte"))?,
            )
        };
        Ok(Prepared {
            confinement: Confinement {
                workdir,
                rlimits: Rlimits::for_limits(&self.limits),
                #[cfg(target_os = "linux")]
                linux: self.linux(scratch)?,
            },
            markers: self.markers(),
            #[cfg(target_os = "linux")]
            leaf: self.leaf(tag),
            #[cfg(not(target_os = "linux"))]
            leaf: {
                let _ = (scratch, tag);
                None
            },
        })
    }
}

#[cfg(target_os = "linux")]
impl Confine {
    /// The Linux-only part of a session's confinement.
    fn linux(&self, scratch: Option<&Path>) -> std::io::Result<LinuxConfinement> {
        let (fs, net_denied) = (self.fs(), self.net_denied());
        let roots = if fs {
            self.writable_roots(scratch)
        } else {
            Vec::new()
        };
        let protected = self.protected_dirs();
        let git = if fs {
            self.git_read_only(&roots)
        } else {
            Vec::new()
        };
        let namespaces = if fs {
            self.namespace_plan(&roots, &protected, &git)?
        } else {
            None
        };
        // Without a mount namespace, Landlock itself leaves the protected directories out.
        let carve_out: Vec<PathBuf> = if namespaces.is_none() {
            protected
                .iter()
                .map(|p| crate::policy::protected::canonical(p))
                .chain(git)
                .collect()
        } else {
            Vec::new()
        };
        let ruleset = crate::sandbox::landlock_rules::ruleset(
            self.support().landlock_abi,
            fs,
            net_denied,
            &roots,
            &carve_out,
        )?;
        let terminal_rights = ruleset.as_ref().map_or(0, |r| {
            r.handled(crate::sandbox::landlock_rules::TERMINAL_RIGHTS)
        });
        let shm_rights = match (&ruleset, self.policy.mode) {
            (Some(r), SandboxMode::Workspace) if fs => r.handled(
                crate::sandbox::landlock_rules::writable(self.support().landlock_abi),
            ),
            _ => 0,
        };
        let no_new_privs = fs || net_denied;
        Ok(LinuxConfinement {
            namespaces,
            new_keyring: fs,
            drop_capabilities: fs,
            no_new_privs,
            ruleset,
            terminal_rights,
            shm_rights,
            filters: self.seccomp_filters(no_new_privs),
        })
    }

    /// What of the workspace's git repository stays read-only (`workspace` mode, unless the
    /// user opted in): see `git_guard.rs`; only paths inside a writable root.
    fn git_read_only(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        if self.policy.mode != SandboxMode::Workspace || self.policy.git_writable {
            return Vec::new();
        }
        let workspace = crate::policy::protected::canonical(&self.policy.workspace);
        crate::sandbox::git_guard::read_only_paths(&workspace)
            .into_iter()
            .filter(|path| roots.iter().any(|root| path.starts_with(root)))
            .collect()
    }

    /// The namespaces and mounts of a sandboxed session, where the machine supports them:
    /// `protected` directories and the `git` paths inside the writable `roots` become
    /// read-only, and every directory on the way to them keeps its place.
    fn namespace_plan(
        &self,
        roots: &[PathBuf],
        protected: &[PathBuf],
        git: &[PathBuf],
    ) -> std::io::Result<Option<crate::sandbox::namespaces::NamespacePlan>> {
        let mut guarded = crate::policy::protected::inside_roots(protected, roots)?;
        guarded.extend(git.iter().cloned());
        let pinned = crate::policy::protected::pinned(&guarded, roots);
        crate::sandbox::namespaces::NamespacePlan::new(self.support().namespaces, &pinned, &guarded)
    }

    /// The seccomp filters, in order: no terminal injection (wherever a filter can be
    /// installed: with `no_new_privs`, or as root), the sandbox's (no devices, no other
    /// ABIs), no sockets when the network is denied.
    fn seccomp_filters(&self, no_new_privs: bool) -> Vec<Vec<libc::sock_filter>> {
        let support = self.support();
        let mut filters = Vec::new();
        if support.seccomp && (no_new_privs || crate::sandbox::capabilities::has_sys_admin()) {
            filters.extend(crate::sandbox::seccomp::deny_terminal_injection());
        }
        if self.fs() && support.seccomp {
            filters.extend(crate::sandbox::seccomp::sandbox());
        }
        if self.net_denied() {
            filters.extend(crate::sandbox::seccomp::deny_network());
        }
        filters
    }

    /// A cgroup leaf for the session, where oi's cgroup allows (else the session goes without).
    fn leaf(&self, tag: &str) -> Option<crate::sandbox::cgroup::Leaf> {
        if !self.support().cgroup {
            return None;
        }
        let parent = self.cgroup.get_or_init(|| {
            let parent = crate::sandbox::cgroup::CgroupParent::find();
            if let Some(parent) = &parent {
                parent.sweep_stale();
            }
            parent
        });
        parent.as_ref()?.create_leaf(tag, &self.limits).ok()
    }
}

/// What one child needs besides its program: the confinement it applies, the environment
/// markers, and its cgroup.
#[derive(Debug)]
pub(crate) struct Prepared {
    /// What the child applies between clone and exec.
    pub confinement: Confinement,
    /// The environment markers to set.
    pub markers: Vec<(String, String)>,
    /// The session's cgroup leaf, when it has one.
    pub leaf: Option<crate::sandbox::cgroup::Leaf>,
}
