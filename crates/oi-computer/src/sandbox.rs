//! The sandbox policy the user chooses, and what this kernel can enforce of it.
//!
//! The policy is enforced in each session's child process before it execs its interpreter
//! (see `confine.rs`), so it covers every language session and everything they spawn.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How much of the file system the code may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxMode {
    /// No file-system sandbox: the code may write wherever the user may.
    #[default]
    Off,
    /// Writes only under the workspace directory, the temp directory and a few devices
    /// (`/dev/null`, terminals, `/dev/shm`); reads everywhere.
    Workspace,
    /// No writes at all except a few devices (`/dev/null`, terminals) and the session's own
    /// private work directory (created by oi, deleted when the session ends); reads everywhere.
    #[serde(rename = "readonly", alias = "read-only")]
    ReadOnly,
}

impl SandboxMode {
    /// The lower-case name: `off`, `workspace` or `readonly`.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::Off => "off",
            SandboxMode::Workspace => "workspace",
            SandboxMode::ReadOnly => "readonly",
        }
    }
}

impl fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not `off`, `workspace` or `readonly`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown sandbox mode `{0}` (expected off, workspace or readonly)")]
pub struct UnknownSandboxMode(pub String);

impl FromStr for SandboxMode {
    type Err = UnknownSandboxMode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "off" | "none" => Ok(SandboxMode::Off),
            "workspace" => Ok(SandboxMode::Workspace),
            "readonly" | "read-only" => Ok(SandboxMode::ReadOnly),
            _ => Err(UnknownSandboxMode(s.to_owned())),
        }
    }
}

/// What the code may do: the file-system mode, network access, and what to do when the kernel
/// cannot enforce it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SandboxPolicy {
    /// The file-system mode.
    pub mode: SandboxMode,
    /// Whether the code may use the network (TCP/UDP/raw sockets).
    pub network: bool,
    /// When the kernel cannot enforce the policy: run unsandboxed (saying so once) instead of
    /// refusing to run.
    pub allow_unsandboxed_fallback: bool,
    /// The directory `workspace` mode lets the code write in (default: the current
    /// directory). Sessions start in it whenever a sandbox is on.
    pub workspace: PathBuf,
    /// Environment variables passed to the code although oi would withhold them (its own
    /// secrets in every mode, provider credentials under a sandbox), by exact name.
    pub pass_env: Vec<String>,
}

impl Default for SandboxPolicy {
    fn default() -> Self {
        SandboxPolicy {
            mode: SandboxMode::Off,
            network: true,
            allow_unsandboxed_fallback: false,
            workspace: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            pass_env: Vec::new(),
        }
    }
}

impl SandboxPolicy {
    /// A policy with `mode`, network allowed, no fallback, the current directory as workspace.
    pub fn new(mode: SandboxMode) -> Self {
        SandboxPolicy {
            mode,
            ..SandboxPolicy::default()
        }
    }

    /// The same policy with network access allowed or denied.
    pub fn with_network(mut self, allowed: bool) -> Self {
        self.network = allowed;
        self
    }

    /// The same policy with another workspace directory.
    pub fn with_workspace(mut self, dir: impl Into<PathBuf>) -> Self {
        self.workspace = dir.into();
        self
    }

    /// The same policy, running unsandboxed (with a warning) where it cannot be enforced.
    pub fn with_unsandboxed_fallback(mut self, allowed: bool) -> Self {
        self.allow_unsandboxed_fallback = allowed;
        self
    }

    /// The same policy, passing the variable `name` through to the code.
    pub fn with_pass_env(mut self, name: impl Into<String>) -> Self {
        let name = name.into();
        if !self.pass_env.contains(&name) {
            self.pass_env.push(name);
        }
        self
    }

    /// A warning when `workspace` mode's directory is the home directory or `/` (code may then
    /// write nearly everywhere the user can), or `None`.
    pub fn broad_workspace_warning(&self) -> Option<String> {
        if self.mode != SandboxMode::Workspace {
            return None;
        }
        let workspace = crate::protected::canonical(&self.workspace);
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

    /// Whether the policy restricts anything at all.
    pub fn restricts(&self) -> bool {
        self.mode != SandboxMode::Off || !self.network
    }

    /// Whether `other` is at least as strict as `self` (for a server that lets clients only
    /// tighten its own policy): the same or a stricter mode, no network where `self` has none,
    /// and no fallback where `self` has none.
    pub fn is_loosened_by(&self, other: &SandboxPolicy) -> bool {
        let rank = |m: SandboxMode| match m {
            SandboxMode::Off => 0,
            SandboxMode::Workspace => 1,
            SandboxMode::ReadOnly => 2,
        };
        rank(other.mode) < rank(self.mode)
            || (other.network && !self.network)
            || (other.allow_unsandboxed_fallback && !self.allow_unsandboxed_fallback)
            || other
                .pass_env
                .iter()
                .any(|name| !self.pass_env.contains(name))
            || (self.mode == SandboxMode::Workspace
                && other.mode == SandboxMode::Workspace
                && !other.workspace.starts_with(&self.workspace))
    }
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
    fn modes_parse_and_serialize_lower_case() {
        for (text, mode) in [
            ("off", SandboxMode::Off),
            ("workspace", SandboxMode::Workspace),
            ("readonly", SandboxMode::ReadOnly),
        ] {
            assert_eq!(text.parse::<SandboxMode>(), Ok(mode));
            assert_eq!(
                serde_json::to_string(&mode).ok(),
                Some(format!("\"{text}\""))
            );
            assert_eq!(mode.to_string(), text);
        }
        assert_eq!(
            "Read-Only".parse::<SandboxMode>(),
            Ok(SandboxMode::ReadOnly)
        );
        assert!("jail".parse::<SandboxMode>().is_err());
        let policy: Result<SandboxPolicy, _> =
            serde_json::from_str(r#"{"mode":"readonly","network":false}"#);
        assert!(matches!(
            policy,
            Ok(SandboxPolicy {
                mode: SandboxMode::ReadOnly,
                network: false,
                allow_unsandboxed_fallback: false,
                ..
            })
        ));
    }

    #[test]
    fn loosening_is_detected() {
        let server = SandboxPolicy::new(SandboxMode::Workspace)
            .with_network(false)
            .with_workspace("/srv/w");
        assert!(server.is_loosened_by(&SandboxPolicy::new(SandboxMode::Off).with_network(false)));
        assert!(server.is_loosened_by(&server.clone().with_network(true)));
        assert!(server.is_loosened_by(&server.clone().with_workspace("/")));
        assert!(server.is_loosened_by(&server.clone().with_unsandboxed_fallback(true)));
        assert!(server.is_loosened_by(&server.clone().with_pass_env("OPENAI_API_KEY")));
        assert!(!server.is_loosened_by(&server.clone().with_workspace("/srv/w/sub")));
        assert!(
            !server.is_loosened_by(&SandboxPolicy::new(SandboxMode::ReadOnly).with_network(false))
        );
    }

    #[test]
    fn a_home_or_root_workspace_is_warned_about() {
        let root = SandboxPolicy::new(SandboxMode::Workspace).with_workspace("/");
        assert!(
            root.broad_workspace_warning()
                .is_some_and(|w| w.contains("(/)"))
        );
        let tmp = SandboxPolicy::new(SandboxMode::Workspace).with_workspace("/tmp");
        assert_eq!(tmp.broad_workspace_warning(), None);
        let readonly = SandboxPolicy::new(SandboxMode::ReadOnly).with_workspace("/");
        assert_eq!(readonly.broad_workspace_warning(), None);
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
