//! oi-computer: runs the model's code on this machine.
//!
//! [`LocalComputer`] implements [`oi_core::computer::Computer`] for every language of the
//! original: persistent sessions for Python, Shell, JavaScript, Ruby, R and PowerShell, one-shot
//! runs for Java (and AppleScript on macOS), and HTML/React shown to the user with a screenshot
//! for the model. Every session runs in its own process group, so that stopping or terminating
//! reaches every process the code started.
//!
//! Sessions can be sandboxed ([`SandboxPolicy`], [`LocalComputer::with_sandbox`]: Landlock for
//! the file system and TCP, seccomp for new network sockets, applied in each session's child
//! before exec) and limited ([`ResourceLimits`], [`LocalComputer::with_limits`]).

mod applescript;
mod cap;
mod confine;
mod engine;
mod host;
mod html;
mod java;
mod javascript;
#[cfg(target_os = "linux")]
mod landlock;
mod languages;
mod limits;
mod local;
mod markers;
mod powershell;
mod proc_watch;
mod process;
mod python;
mod r;
mod recipient;
mod ruby;
mod sandbox;
mod screenshot;
#[cfg(target_os = "linux")]
mod seccomp;
mod session;
mod shell;

pub use languages::{ALL as ALL_LANGUAGES, Language};
pub use limits::ResourceLimits;
pub use local::{DEFAULT_OUTPUT_CAP, LocalComputer, merge_outputs};
pub use sandbox::{SandboxMode, SandboxPolicy, SandboxSupport, UnknownSandboxMode, probe};
