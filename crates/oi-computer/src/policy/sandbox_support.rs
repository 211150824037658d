//! What this machine can enforce of a sandbox policy ([`SandboxSupport`], found by
//! `probe.rs`), and what it cannot, in words.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::policy::sandbox_policy::{SandboxMode, SandboxPolicy};

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

/// What this machine can enforce, found once by [`probe`](crate::sandbox::probe()).
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
    /// Whether the file-system modes (`workspace`, `readonly`) can be enforced: Landlock ≥ 1
    /// for the files, and seccomp for what Landlock does not cover (Unix sockets of host
    /// daemons, device nodes, keyrings).
    pub fn filesystem(&self) -> bool {
        self.landlock_abi >= 1 && self.seccomp
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
                "the `{}` file-system sandbox needs Landlock (Linux 5.13+, enabled in the kernel's LSM list) and seccomp",
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
            NamespaceSupport::Direct => ", PID+mount+IPC namespaces",
            NamespaceSupport::WithUserNamespace => {
                ", PID+mount+IPC namespaces (in a user namespace)"
            }
            NamespaceSupport::Unavailable => ", no PID+mount+IPC namespaces",
        })?;
        f.write_str(if self.cgroup {
            ", a cgroup per session"
        } else {
            ", no cgroups (process groups only)"
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
