//! The Python session: `python3 -u -c <driver>`; commands are JSON lines on stdin. The
//! driver runs cells as Jupyter's IPython kernel would for what models write: `!cmd` shell
//! lines, line magics (`%pip`, `%cd`, `%env`, `%time`, `%timeit`, `%matplotlib`, …), cell
//! magics (`%%writefile`, `%%bash`, …) and `display()`; an unknown magic is one line.

use crate::base::programs::program_exists;
use crate::languages::{Language, missing_program_message};
use crate::process::spawn::{Spawned, spawn};
use crate::sandbox::confine::Confine;

/// The driver script the session runs.
const DRIVER: &str = include_str!("python_driver.py");

/// Starts a Python session, or says which program is missing.
pub(crate) fn start(nonce: &str, confine: &Confine) -> Result<Spawned, String> {
    let Some(program) = ["python3", "python"]
        .into_iter()
        .find(|p| program_exists(p))
    else {
        return Err(missing_program_message(
            "python3",
            Language::Python,
            "Python 3 (e.g. `apt-get install python3`)",
        ));
    };
    spawn(
        program,
        &["-u", "-c", DRIVER],
        &[("OI_NONCE", nonce), ("PYTHONIOENCODING", "utf-8")],
        confine,
        None,
    )
    .map_err(|e| format!("Could not start `{program}`: {e}\n"))
}
