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

// The modules in layers: each uses only modules of its own layer or of the layers above it
// (`cargo xtask modules` draws the graph and checks that it has no cycle).

// 1. Building blocks: errno, pipes, nonces, `PATH`, signals to a process group, `/proc`.
mod errno;
mod nonce;
mod pipe;
mod process_group;
mod procfs;
mod programs;

// 2. What the user and the machine set: languages, limits, secrets, the sandbox policy and
//    what this machine supports of it.
mod environment;
mod languages;
mod limits;
mod protected;
mod sandbox_policy;
mod sandbox_support;

// 3. Syscall wrappers, used in the parent or in the child between clone and exec.
#[cfg(target_os = "linux")]
mod capabilities;
mod cgroup;
mod child_step;
mod clone;
#[cfg(target_os = "linux")]
mod landlock;
#[cfg(target_os = "linux")]
mod namespaces;
mod rlimits;
#[cfg(target_os = "linux")]
mod seccomp;

// 4. The kernel probe: what this machine can enforce.
mod probe;

// 5. The plan a child applies, built in the parent from the policy.
mod confine;
mod confinement;
#[cfg(target_os = "linux")]
mod git_guard;
#[cfg(target_os = "linux")]
mod landlock_rules;

// 6. The child, between clone and exec.
mod child;

// 7. Spawning a session's process into its unit (process group, cgroup, PID namespace).
mod session_unit;
mod spawn;

// 8. A running session: its handle and fate, the thread reading its output pipe (driver
//    events, output cap), the process-limit watchdog.
mod driver_events;
mod output_cap;
mod pipe_reader;
mod process_limit;
mod session;
mod session_handle;

// 9. The languages: one module each, the host shell of one-shot programs, starting the
//    session of a language (`engine`), and HTML/React shown with a screenshot.
mod applescript;
mod engine;
mod heredoc;
mod html;
mod java;
mod javascript;
mod own_dir;
mod powershell;
mod python;
mod r;
mod ruby;
mod screenshot;
mod shell;
mod shell_host;

// 10. The computer: `LocalComputer`, a language's slot, one run, reading it, and what the
//     run's outputs become (`@@@` output markers, merging).
mod computer;
mod merge_outputs;
mod output_markers;
mod run;
mod run_reader;
mod slot;

pub use computer::{DEFAULT_OUTPUT_CAP, LocalComputer};
pub use environment::{
    MIN_SECRET_VALUE_LEN, PROVIDER_KEY_SUFFIXES, PROVIDER_KEY_VARS, SERVER_KEY_VAR, Secrets,
    is_provider_key,
};
pub use languages::{ALL as ALL_LANGUAGES, Language};
pub use limits::ResourceLimits;
pub use merge_outputs::merge_outputs;
pub use own_dir::private_dir;
pub use probe::probe;
pub use sandbox_policy::{
    SandboxMode, SandboxPolicy, UnknownSandboxMode, broad_workspace_warning, git_writable_note,
};
pub use sandbox_support::{NamespaceSupport, SandboxSupport};
