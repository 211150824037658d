//! oi-computer: runs the model's code on this machine.
//!
//! [`LocalComputer`] implements [`oi_core::computer::Computer`] for every language of the
//! original: persistent sessions for Python, Shell, JavaScript, Ruby, R and PowerShell, one-shot
//! runs for Java (and AppleScript on macOS), and HTML/React shown to the user with a screenshot
//! for the model. Every session runs in its own process group, so that stopping or terminating
//! reaches every process the code started.
//!
//! Each session is a new terminal session (no controlling terminal; terminal injection through
//! `TIOCSTI` refused by seccomp wherever it can be installed) in a unit its processes cannot
//! leave: its own cgroup where the host allows, and when sandboxed its own PID and mount
//! namespaces. Sessions can be sandboxed ([`SandboxPolicy`], [`LocalComputer::with_sandbox`]:
//! Landlock for the file system and TCP, seccomp for sockets and device nodes, every
//! capability dropped, oi's own directories read-only, applied in each session's child before
//! exec) and limited ([`ResourceLimits`], [`LocalComputer::with_limits`]). Children never see
//! oi's secrets ([`Secrets`], [`LocalComputer::with_secrets`]), and sandboxed ones see no
//! provider credentials unless passed through ([`SandboxPolicy::pass_env`]).

mod applescript;
#[cfg(target_os = "linux")]
mod capabilities;
mod cgroup;
mod child;
mod child_step;
mod clone;
mod computer;
mod confine;
mod confinement;
mod driver_events;
mod engine;
mod environment;
mod errno;
mod html;
mod java;
mod javascript;
#[cfg(target_os = "linux")]
mod landlock;
#[cfg(target_os = "linux")]
mod landlock_rules;
mod languages;
mod limits;
#[cfg(target_os = "linux")]
mod merge_outputs;
mod namespaces;
mod nonce;
mod output_cap;
mod output_markers;
mod pipe;
mod pipe_reader;
mod powershell;
mod probe;
mod process_group;
mod process_limit;
mod procfs;
mod programs;
mod protected;
mod python;
mod r;
mod rlimits;
mod ruby;
mod run;
mod run_reader;
mod sandbox_policy;
mod sandbox_support;
mod screenshot;
#[cfg(target_os = "linux")]
mod seccomp;
mod session;
mod session_handle;
mod session_unit;
mod shell;
mod shell_host;
mod slot;
mod spawn;

pub use computer::{DEFAULT_OUTPUT_CAP, LocalComputer};
pub use environment::{
    MIN_SECRET_VALUE_LEN, PROVIDER_KEY_SUFFIXES, PROVIDER_KEY_VARS, SERVER_KEY_VAR, Secrets,
    is_provider_key,
};
pub use languages::{ALL as ALL_LANGUAGES, Language};
pub use limits::ResourceLimits;
pub use merge_outputs::merge_outputs;
pub use probe::probe;
pub use sandbox_policy::{SandboxMode, SandboxPolicy, UnknownSandboxMode, broad_workspace_warning};
pub use sandbox_support::{NamespaceSupport, SandboxSupport};
