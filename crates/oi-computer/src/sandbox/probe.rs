//! The kernel probe: what this machine can enforce — Landlock's ABI, seccomp, PID and mount
//! namespaces (tried for real in a short-lived child), and a cgroup per session.

use crate::policy::sandbox_support::{NamespaceSupport, SandboxSupport};

/// Finds what this machine can enforce: two syscalls for Landlock and seccomp, a look at
/// `/proc/self` for the cgroup, and one short-lived child that tries the namespaces (about a
/// millisecond in all). Call once at start-up, and only when a sandbox is asked for; a
/// computer without a sandbox looks for its cgroup by itself when its first session starts.
pub fn probe() -> SandboxSupport {
    #[cfg(target_os = "linux")]
    {
        SandboxSupport {
            landlock_abi: crate::sandbox::landlock::abi(),
            seccomp: crate::sandbox::seccomp::available(),
            namespaces: namespaces(),
            cgroup: crate::sandbox::cgroup::CgroupParent::find().is_some(),
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
            landlock_abi: crate::sandbox::landlock::abi(),
            seccomp: crate::sandbox::seccomp::available(),
            namespaces: NamespaceSupport::Unavailable,
            cgroup: crate::sandbox::cgroup::CgroupParent::find().is_some(),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        SandboxSupport::default()
    }
}

/// Finds how sessions can get their own PID and mount namespaces: directly (with
/// `CAP_SYS_ADMIN`), inside a user namespace, or not at all. Each candidate is tried for real
/// in a short-lived child that sets up the namespaces as a session would and exits (about a
/// millisecond).
#[cfg(target_os = "linux")]
fn namespaces() -> NamespaceSupport {
    let mut candidates = Vec::new();
    if crate::sandbox::capabilities::has_sys_admin() {
        candidates.push(NamespaceSupport::Direct);
    }
    candidates.push(NamespaceSupport::WithUserNamespace);
    for candidate in candidates {
        let Ok(Some(plan)) =
            crate::sandbox::namespaces::NamespacePlan::new(candidate, &[], &[], &[], &[])
        else {
            continue;
        };
        if crate::sandbox::clone::check_in_child(plan.flags, || plan.apply_in_child().is_ok()) {
            return candidate;
        }
    }
    NamespaceSupport::Unavailable
}
