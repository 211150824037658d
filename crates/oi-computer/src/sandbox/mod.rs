//! The sandbox: syscall wrappers used in the parent or in the child between clone and exec
//! (capabilities, cgroups, Landlock, namespaces, rlimits, seccomp), the kernel probe, the plan
//! a child applies (built in the parent from the policy) and the child itself.

#[cfg(target_os = "linux")]
pub mod beneath;
pub(crate) mod capabilities;
pub(crate) mod cgroup;
pub(crate) mod child;
pub(crate) mod child_step;
pub(crate) mod clone;
pub(crate) mod confine;
pub(crate) mod confinement;
#[cfg(target_os = "linux")]
pub(crate) mod git_guard;
#[cfg(target_os = "linux")]
pub(crate) mod landlock;
#[cfg(target_os = "linux")]
pub(crate) mod landlock_rules;
#[cfg(target_os = "linux")]
pub(crate) mod namespaces;
#[cfg(target_os = "linux")]
pub(crate) mod no_links;
pub(crate) mod probe;
pub(crate) mod rlimits;
#[cfg(target_os = "linux")]
pub(crate) mod seccomp;
#[cfg(target_os = "linux")]
pub(crate) mod write_wall;
