//! oi-computer: runs the model's code on this machine.
//!
//! [`LocalComputer`] implements [`oi_core::computer::Computer`] with one persistent session per
//! language (Python, Shell, JavaScript), each in its own process group so that stopping or
//! terminating reaches every process the code started.

mod engine;
mod javascript;
mod languages;
mod local;
mod markers;
mod process;
mod python;
mod session;
mod shell;

pub use languages::{ALL as ALL_LANGUAGES, Language};
pub use local::{DEFAULT_OUTPUT_CAP, LocalComputer, merge_outputs};
