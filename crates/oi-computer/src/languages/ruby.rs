//! The Ruby session: `ruby -e <driver>`; commands are JSON lines on stdin, evaluated in one
//! persistent binding.

use crate::base::programs::program_exists;
use crate::languages::Language;
use crate::languages::start_error::StartError;
use crate::process::spawn::{Spawned, spawn};
use crate::sandbox::confine::Confine;

/// The driver script the session runs.
const DRIVER: &str = include_str!("ruby_driver.rb");

/// Starts a Ruby session, or says that Ruby is missing.
pub(crate) fn start(nonce: &str, confine: &Confine) -> Result<Spawned, StartError> {
    if !program_exists("ruby") {
        return Err(StartError::NotInstalled {
            program: "ruby",
            language: Language::Ruby,
            install: "Ruby (e.g. `apt-get install ruby`)",
        });
    }
    spawn(
        "ruby",
        &["-e", DRIVER],
        &[("OI_NONCE", nonce)],
        confine,
        None,
    )
    .map_err(StartError::spawn("ruby"))
}
