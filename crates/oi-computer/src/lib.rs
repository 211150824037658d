//! oi-computer: runs the model's code on this machine.
//!
//! [`LocalComputer`] implements [`oi_core::computer::Computer`] for every language of the
//! original: persistent sessions for Python, Shell, JavaScript, Ruby, R and PowerShell, one-shot
//! runs for Java (and AppleScript on macOS), and HTML/React shown to the user with a screenshot
//! for the model. Every session runs in its own process group, so that stopping or terminating
//! reaches every process the code started.

mod applescript;
mod cap;
mod engine;
mod host;
mod html;
mod java;
mod javascript;
mod languages;
mod local;
mod markers;
mod powershell;
mod process;
mod python;
mod r;
mod recipient;
mod ruby;
mod screenshot;
mod session;
mod shell;

pub use languages::{ALL as ALL_LANGUAGES, Language};
pub use local::{DEFAULT_OUTPUT_CAP, LocalComputer, merge_outputs};
