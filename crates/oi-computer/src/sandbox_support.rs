//! The sandbox policy the user chooses, and what this kernel can enforce of it.
//!
//! The policy is enforced in each session's child process before it execs its interpreter
//! (see `confine.rs`), so it covers every language session and everything they spawn.

use std::fmt;

use serde::{Deserialize, Serialize};

pub use oi_core::settings::computer::{SandboxMode, SandboxPolicy, UnknownSandboxMode};

/// A warning when `policy`'s workspace mode covers the home directory or `/` (code may then
/// write nearly everywhere the user can), or `None`.
pub fn broad_workspace_warning(policy: &SandboxPolicy) -> Option<String> {
    if policy.mode != SandboxMode::Workspace {
        return None;
    }
    let workspace = crate::protected::canonical(&policy.workspace);
    let home = std::env::var_os("HOME").map(|h| crate::protected::canonical(h.as_ref()));
    let what = if workspace == std::path::Path::new("/") {
        "the whole file system (/)".to_owned()
    } else if home.as_ref() == Some(&workspace) {
        format!("your home directory ({})", workspace.display())
    } else {
        return None;
    };
    Some(format!(
        "warning: the sandbox's workspace is {what}: code may write anywhere in it except oi's own configuration and conversations. Start oi in a project directory to confine the code to it."
    ))
}

/// How sessions get their own PID and mount namespaces on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NamespaceSupport {
    /// Not at all (not Linux, a container without the privilege, user namespaces disabled):
    /// sessions are contained by a cgroup or their process group only, and the file-system
    /// sandbox protects oi's own directories with Landlock alone.
    #[default]
    Unavailable,
    /// Directly (oi holds `CAP_SYS_ADMIN`, e.g. as root).
    Direct,
    /// Inside a new user namespace that maps only the user's own uid and gid.
    WithUserNamespace,
}

/// What this machine can enforce, found once by [`probe`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SandboxSupport {
    /// The Landlock ABI version (0 = Landlock unavailable or not Linux).
    pub landlock_abi: u32,
    /// Whether seccomp filters can be installed.
    pub seccomp: bool,
    /// Whether sandboxed sessions get their own PID and mount namespaces, and how.
    pub namespaces: NamespaceSupport,
    /// Whether each session can get its own cgroup v2 leaf under oi's cgroup.
    pub cgroup: bool,
}

impl SandboxSupport {
    /// Whether the file-system modes (`workspace`, `readonly`) can be enforced (Landlock ≥ 1).
    pub fn filesystem(&self) -> bool {
        self.landlock_abi >= 1
    }

    /// Whether Landlock can deny TCP connect and bind (ABI ≥ 4).
    pub fn landlock_tcp(&self) -> bool {
        self.landlock_abi >= 4
    }

    /// Whether network access can be denied: seccomp (no new IPv4/IPv6/raw sockets) is the
    /// enforcing layer, Landlock's TCP rules (ABI ≥ 4) a second one.
    pub fn network(&self) -> bool {
        self.seccomp
    }

    /// Whether `policy` can be enforced here in full.
    pub fn can_enforce(&self, policy: &SandboxPolicy) -> bool {
        (policy.mode == SandboxMode::Off || self.filesystem()) && (policy.network || self.network())
    }

    /// What cannot be enforced of `policy`, as a short phrase, or `None` when all can.
    pub fn missing(&self, policy: &SandboxPolicy) -> Option<String> {
        let mut missing = Vec::new();
        if policy.mode != SandboxMode::Off && !self.filesystem() {
            missing.push(format!(
                "the `{}` file-system sandbox needs Landlock (Linux 5.13+, enabled in the kernel's LSM list)",
                policy.mode
            ));
        }
        if !policy.network && !self.network() {
            missing.push("denying network access needs seccomp (Linux)".to_owned());
        }
        (!missing.is_empty()).then(|| missing.join("; "))
    }
}

impl fmt::Display for SandboxSupport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.landlock_abi == 0 {
            f.write_str("Landlock unavailable")?;
        } else {
            write!(f, "Landlock ABI {}", self.landlock_abi)?;
            if self.landlock_tcp() {
                f.write_str(" (file system, TCP)")?;
            } else {
                f.write_str(" (file system)")?;
            }
        }
        f.write_str(if self.seccomp {
            ", seccomp available"
        } else {
            ", seccomp unavailable"
        })?;
        f.write_str(match self.namespaces {
            NamespaceSupport::Direct => ", PID+mount namespaces",
            NamespaceSupport::WithUserNamespace => ", PID+mount namespaces (in a user namespace)",
            NamespaceSupport::Unavailable => ", no PID+mount namespaces",
        })?;
        f.write_str(if self.cgroup {
            ", a cgroup per session"
        } else {
            ", no cgroups (process groups only)"
        })
    }
}

/// Finds what this machine can enforce: two syscalls for Landlock and seccomp, a look at
/// `/proc/self` for the cgroup, and one short-lived child that tries the namespaces (about a
/// millisecond in all). Call once at start-up, and only when a sandbox is asked for; a
/// computer without a sandbox looks for its cgroup by itself when its first session starts.
pub fn probe() -> SandboxSupport {
    #[cfg(target_os = "linux")]
    {
        SandboxSupport {
            landlock_abi: crate::landlock::abi(),
            seccomp: crate::seccomp::available(),
            namespaces: crate::namespaces::probe(),
            cgroup: crate::cgroup::CgroupParent::find().is_some(),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        SandboxSupport::default()
    }
}

/// [`probe`] without the namespace probe (for a computer without a file-system sandbox,
/// which never uses namespaces): Landlock and seccomp (for network denial) and the cgroup.
pub(crate) fn probe_light() -> SandboxSupport {
    #[cfg(target_os = "linux")]
    {
        SandboxSupport {
            landlock_abi: crate::landlock::abi(),
            seccomp: crate::seccomp::available(),
            namespaces: NamespaceSupport::Unavailable,
            cgroup: crate::cgroup::CgroupParent::find().is_some(),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        SandboxSupport::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_home_or_root_workspace_is_warned_about() {
        let root = SandboxPolicy::new(SandboxMode::Workspace).with_workspace("/");
        assert!(broad_workspace_warning(&root).is_some_and(|w| w.contains("(/)")));
        let tmp = SandboxPolicy::new(SandboxMode::Workspace).with_workspace("/tmp");
        assert_eq!(broad_workspace_warning(&tmp), None);
        let readonly = SandboxPolicy::new(SandboxMode::ReadOnly).with_workspace("/");
        assert_eq!(broad_workspace_warning(&readonly), None);
    }

    #[test]
    fn missing_support_is_named() {
        let none = SandboxSupport::default();
        let policy = SandboxPolicy::new(SandboxMode::Workspace).with_network(false);
        assert!(!none.can_enforce(&policy));
        let missing = none.missing(&policy).unwrap_or_default();
        assert!(missing.contains("Landlock") && missing.contains("seccomp"));
        let full = SandboxSupport {
            landlock_abi: 4,
            seccomp: true,
            ..SandboxSupport::default()
        };
        assert!(full.can_enforce(&policy));
        assert_eq!(full.missing(&policy), None);
        assert!(none.can_enforce(&SandboxPolicy::new(SandboxMode::Off)));
    }
}
