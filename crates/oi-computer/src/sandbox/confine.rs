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

    /// oi's directories sandboxed code may neither read nor write: its config directory and
    /// `protected`, each resolved to its canonical form once per process.
    fn protected_dirs(&self) -> Vec<PathBuf> {
        oi_core::settings::config_dir()
            .into_iter()
            .chain(self.protected.iter().cloned())
            .map(|dir| crate::policy::protected::resolved_once(&dir))
            .collect()
    }

    /// The directories sandboxed code may write, canonical: the session's `scratch`
    /// directory (just made by oi), and in `workspace` mode the workspace (canonical since it
    /// was set), the temp directory (resolved once per process) and `/dev/shm`.
    fn writable_roots(&self, scratch: Option<&Path>) -> Vec<PathBuf> {
        // The scratch directory was just made in a folder code may write (the temp
        // directory): its folder is taken as resolved once, and its own name is not followed
        // (a link swapped in for it between its creation and now is refused when the roots
        // are opened without links; resolving it here would have granted the link's target).
        let mut roots: Vec<PathBuf> = scratch.map(scratch_root).into_iter().collect();
        if self.policy.mode == SandboxMode::Workspace {
            roots.push(self.policy.workspace.clone());
            roots.push(crate::policy::protected::resolved_once(
                &std::env::temp_dir(),
            ));
            roots.push(crate::policy::protected::resolved_once(Path::new(
                "/dev/shm",
            )));
        }
        roots
    }

    /// Builds what the child applies; `scratch` is the session's private work directory,
    /// writable in every mode; `tag` names the session's cgroup.
    pub(crate) fn prepare(&self, scratch: Option<&Path>, tag: &str) -> std::io::Result<Prepared> {
        let workdir = if self.policy.mode == SandboxMode::Off {
            None
        } else {
            Some(self.workdir()?)
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

#[cfg(not(target_os = "linux"))]
impl Confine {
    /// The directory a sandboxed session starts in: the workspace.
    fn workdir(&self) -> std::io::Result<crate::sandbox::confinement::WorkDir> {
        Ok(crate::sandbox::confinement::WorkDir {
            path: CString::new(self.policy.workspace.as_os_str().as_encoded_bytes())
                .map_err(|_| std::io::Error::other("the workspace path contains a NUL byte"))?,
        })
    }
}

#[cfg(target_os = "linux")]
impl Confine {
    /// The directory a sandboxed session starts in: the workspace, opened without following
    /// links (its path is canonical since it was set); refused when it is a link now.
    fn workdir(&self) -> std::io::Result<crate::sandbox::confinement::WorkDir> {
        let path = &self.policy.workspace;
        let dir = crate::sandbox::no_links::open(path).map_err(|e| self.open_error(path, e))?;
        Ok(crate::sandbox::confinement::WorkDir {
            path: CString::new(path.as_os_str().as_encoded_bytes())
                .map_err(|_| std::io::Error::other("the workspace path contains a NUL byte"))?,
            identity: crate::sandbox::no_links::identity(&dir)?,
        })
    }

    /// The error for a directory the sandbox is built on that could not be opened without
    /// following links.
    fn open_error(&self, path: &Path, e: std::io::Error) -> std::io::Error {
        let link = crate::sandbox::no_links::is_link_error(&e);
        let message = match (path == self.policy.workspace, link) {
            (true, true) => format!(
                "the workspace {} was replaced by a link since oi was started there; nothing was run",
                path.display()
            ),
            (true, false) => format!("the workspace {}: {e}; nothing was run", path.display()),
            (false, true) => format!(
                "{} was replaced by a link (or a directory on its path was) since oi resolved it; nothing was run",
                path.display()
            ),
            (false, false) => format!("{}: {e}; nothing was run", path.display()),
        };
        std::io::Error::new(e.kind(), message)
    }

    /// The writable `roots`, each opened without following links; a missing one other than
    /// the workspace is left out.
    fn open_roots(
        &self,
        roots: Vec<PathBuf>,
    ) -> std::io::Result<Vec<crate::sandbox::landlock_rules::Root>> {
        let mut opened = Vec::new();
        for path in roots {
            match crate::sandbox::no_links::open(&path) {
                Ok(dir) => opened.push(crate::sandbox::landlock_rules::Root { path, dir }),
                Err(e)
                    if e.kind() == std::io::ErrorKind::NotFound
                        && path != self.policy.workspace => {}
                Err(e) => return Err(self.open_error(&path, e)),
            }
        }
        Ok(opened)
    }

    /// The Linux-only part of a session's confinement.
    fn linux(&self, scratch: Option<&Path>) -> std::io::Result<LinuxConfinement> {
        let (fs, net_denied) = (self.fs(), self.net_denied());
        let roots = if fs {
            self.open_roots(self.writable_roots(scratch))?
        } else {
            Vec::new()
        };
        let root_paths: Vec<PathBuf> = roots.iter().map(|r| r.path.clone()).collect();
        let protected = self.protected_dirs();
        let git = if fs {
            self.git_read_only(&root_paths)
        } else {
            Vec::new()
        };
        let namespaces = if fs {
            self.namespace_plan(&root_paths, &protected, &git)?
        } else {
            None
        };
        // Without a mount namespace, Landlock itself leaves the protected directories out of
        // what may be written, and out of what may be read.
        let (carve_out, hidden): (Vec<PathBuf>, Vec<PathBuf>) = if namespaces.is_none() {
            let hidden: Vec<PathBuf> = protected
                .iter()
                .filter(|dir| !self.covers_sandbox(dir, &root_paths))
                .cloned()
                .collect();
            (protected.iter().cloned().chain(git).collect(), hidden)
        } else {
            (Vec::new(), Vec::new())
        };
        let ruleset = crate::sandbox::landlock_rules::ruleset(
            self.support().landlock_abi,
            fs,
            net_denied,
            &roots,
            &carve_out,
            &hidden,
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
        let mount_wall = namespaces.is_some();
        Ok(LinuxConfinement {
            namespaces,
            new_keyring: fs,
            drop_capabilities: fs,
            no_new_privs,
            ruleset,
            terminal_rights,
            shm_rights,
            filters: self.seccomp_filters(no_new_privs, mount_wall),
        })
    }

    /// What of the workspace's git repository stays read-only (`workspace` mode, unless the
    /// user opted in): see `git_guard.rs`; only paths inside a writable root.
    fn git_read_only(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        if self.policy.mode != SandboxMode::Workspace || self.policy.git_writable {
            return Vec::new();
        }
        crate::sandbox::git_guard::read_only_paths(&self.policy.workspace)
            .into_iter()
            .filter(|path| roots.iter().any(|root| path.starts_with(root)))
            .collect()
    }

    /// Whether `dir` contains (or is) a writable root or the workspace the session starts
    /// in: then it cannot be hidden, only kept read-only.
    fn covers_sandbox(&self, dir: &Path, roots: &[PathBuf]) -> bool {
        roots.iter().any(|root| root.starts_with(dir)) || self.policy.workspace.starts_with(dir)
    }

    /// The namespaces and mounts of a sandboxed session, where the machine supports them:
    /// every mount read-only but the writable `roots`, `protected` directories are hidden under an empty read-only `tmpfs` (or, when one
    /// contains the workspace or a writable root, bound read-only), the `git` paths inside the
    /// writable `roots` become read-only, and every directory on the way to them keeps its
    /// place. Each is opened without following links, and checked again by the child.
    fn namespace_plan(
        &self,
        roots: &[PathBuf],
        protected: &[PathBuf],
        git: &[PathBuf],
    ) -> std::io::Result<Option<crate::sandbox::namespaces::NamespacePlan>> {
        if self.support().namespaces
            == crate::policy::sandbox_support::NamespaceSupport::Unavailable
        {
            return Ok(None);
        }
        let dirs = crate::policy::protected::existing_outermost(protected, roots)?;
        let (bound, hidden): (Vec<PathBuf>, Vec<PathBuf>) = dirs
            .into_iter()
            .partition(|dir| self.covers_sandbox(dir, roots));
        let guarded: Vec<PathBuf> = bound
            .iter()
            .chain(hidden.iter())
            .chain(git)
            .cloned()
            .collect();
        let pinned = crate::policy::protected::pinned(&guarded, roots);
        let read_only: Vec<PathBuf> = bound.into_iter().chain(git.iter().cloned()).collect();
        crate::sandbox::namespaces::NamespacePlan::new(
            self.support().namespaces,
            &self.places(roots)?,
            &self.places(&pinned)?,
            &self.places(&read_only)?,
            &self.places(&hidden)?,
        )
    }

    /// `dirs`, each opened without following links for its identity; missing ones left out.
    fn places(&self, dirs: &[PathBuf]) -> std::io::Result<Vec<crate::sandbox::namespaces::Place>> {
        let mut places = Vec::new();
        for path in dirs {
            match crate::sandbox::no_links::open(path) {
                Ok(dir) => places.push(crate::sandbox::namespaces::Place {
                    identity: crate::sandbox::no_links::identity(&dir)?,
                    path: path.clone(),
                }),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(self.open_error(path, e)),
            }
        }
        Ok(places)
    }

    /// The seccomp filters, in order: no terminal injection (wherever a filter can be
    /// installed: with `no_new_privs`, or as root), the sandbox's (no devices, no other
    /// ABIs), the files filter (no set-ID bits; in `readonly` mode no metadata changes, and no
    /// time changes either without the `mount_wall`), no sockets when the network is denied.
    fn seccomp_filters(&self, no_new_privs: bool, mount_wall: bool) -> Vec<Vec<libc::sock_filter>> {
        let support = self.support();
        let mut filters = Vec::new();
        if support.seccomp && (no_new_privs || crate::sandbox::capabilities::has_sys_admin()) {
            filters.extend(crate::sandbox::seccomp::deny_terminal_injection());
        }
        if self.fs() && support.seccomp {
            filters.extend(crate::sandbox::seccomp::sandbox());
            let readonly = self.policy.mode == SandboxMode::ReadOnly;
            filters.extend(crate::sandbox::seccomp::files(readonly, !mount_wall));
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

/// The path a session's new scratch directory is granted by: its folder as resolved once per
/// process ([`crate::policy::protected::resolved_once`]), and its own name as it was made.
fn scratch_root(scratch: &Path) -> PathBuf {
    match (scratch.parent(), scratch.file_name()) {
        (Some(folder), Some(name)) => crate::policy::protected::resolved_once(folder).join(name),
        _ => scratch.to_path_buf(),
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    /// A scratch directory swapped for a link between its creation and the session's start
    /// (the review won this race with inotify and `RENAME_EXCHANGE`) is not granted: its name
    /// is not followed, and opening it without links fails.
    #[test]
    fn a_scratch_directory_swapped_for_a_link_is_refused_not_followed() {
        let temp = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let scratch = temp.path().join("oi-shell-swapped");
        std::os::unix::fs::symlink(outside.path(), &scratch).unwrap();
        let root = scratch_root(&scratch);
        assert_eq!(
            root,
            crate::policy::protected::canonical(temp.path()).join("oi-shell-swapped")
        );
        assert_ne!(root, crate::policy::protected::canonical(outside.path()));
        let opened = crate::sandbox::no_links::open(&root);
        assert!(
            opened
                .as_ref()
                .is_err_and(crate::sandbox::no_links::is_link_error),
            "{opened:?}"
        );
    }
}
