//! The JavaScript session: `node` running a small driver with one persistent `vm` context.

use crate::base::programs::program_exists;
use crate::languages::Language;
use crate::languages::start_error::StartError;
use crate::process::spawn::{Spawned, spawn};
use crate::sandbox::confine::Confine;

/// The driver script the session runs.
const DRIVER: &str = include_str!("js_driver.js");

/// Starts a node session, or says that node is missing.
pub(crate) fn start(nonce: &str, confine: &Confine) -> Result<Spawned, StartError> {
    if !program_exists("node") {
        return Err(StartError::NotInstalled {
            program: "node",
            language: Language::JavaScript,
            install: "Node.js (e.g. `apt-get install nodejs`)",
        });
    }
    spawn(
        "node",
        &["-e", DRIVER],
        &[("OI_NONCE", nonce)],
        confine,
        None,
    )
    .map_err(StartError::spawn("node"))
}
