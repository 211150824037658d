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

// The modules in layers, one folder each: each uses only modules of its own layer or of the
// layers above it (`cargo xtask modules` draws the graph, folder by folder and file by file,
// and checks that it has no cycle).

// 1. Building blocks: errno, pipes, nonces, `PATH`, signals to a process group, `/proc`.
mod base;

// 2. What the user and the machine set: limits, secrets, oi's protected directories, the
//    sandbox policy and what this machine supports of it.
mod policy;

// 3. The sandbox: syscall wrappers (parent, or child between clone and exec), the kernel
//    probe, the plan a child applies, the child itself.
mod sandbox;

// 4. Process control: spawning a session's process into its unit, a running session, its
//    output pipe, the process-limit watchdog.
mod process;

// 5. The languages (the `Language` list, then one host each, the one-shot host shell,
//    `engine` starting a language's session, HTML/React shown with a screenshot).
mod languages;

// 6. The computer: `LocalComputer`, a language's slot, one run, reading it, and what the
//    run's outputs become (`@@@` output markers, merging).
mod api_door;
mod computer;
mod merge_outputs;
mod output_markers;
mod run;
mod run_reader;
mod slot;

pub use computer::{DEFAULT_OUTPUT_CAP, LocalComputer};
pub use languages::own_dir::private_dir;
pub use languages::{ALL as ALL_LANGUAGES, Language};
pub use merge_outputs::merge_outputs;
pub use policy::environment::{
    MIN_SECRET_VALUE_LEN, PROVIDER_KEY_SUFFIXES, PROVIDER_KEY_VARS, SERVER_KEY_VAR, Secrets,
    is_provider_key,
};
pub use policy::limits::ResourceLimits;
pub use policy::sandbox_policy::{
    SandboxMode, SandboxPolicy, UnknownSandboxMode, broad_workspace_warning, git_writable_note,
};
pub use policy::sandbox_support::{NamespaceSupport, SandboxSupport};
pub use sandbox::beneath::{FileError, FileRoot};
pub use sandbox::probe::probe;
