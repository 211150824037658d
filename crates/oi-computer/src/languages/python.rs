//! The Python session: `python3 -u -c <driver>`; commands are JSON lines on stdin. The
//! driver runs cells as Jupyter's IPython kernel would for what models write: `!cmd` shell
//! lines, line magics (`%pip`, `%cd`, `%env`, `%time`, `%timeit`, `%matplotlib`, …), cell
//! magics (`%%writefile`, `%%bash`, …) and `display()`; an unknown magic is one line.

use crate::base::programs::program_exists;
use crate::languages::Language;
use crate::languages::start_error::StartError;
use crate::process::spawn::{Spawned, spawn};
use crate::sandbox::confine::Confine;

/// The driver script the session runs.
const DRIVER: &str = include_str!("python_driver.py");

/// Starts a Python session, or says which program is missing.
pub(crate) fn start(nonce: &str, confine: &Confine) -> Result<Spawned, StartError> {
    let Some(program) = ["python3", "python"]
        .into_iter()
        .find(|p| program_exists(p))
    else {
        return Err(StartError::NotInstalled {
            program: "python3",
            language: Language::Python,
            install: "Python 3 (e.g. `apt-get install python3`)",
        });
    };
    spawn(
        program,
        &["-u", "-c", DRIVER],
        &[("OI_NONCE", nonce), ("PYTHONIOENCODING", "utf-8")],
        confine,
        None,
    )
    .map_err(StartError::spawn(program))
}
