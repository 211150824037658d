//! The PowerShell session: `pwsh` running a small driver that dot-sources each code block in
//! one scope; commands are JSON lines on stdin.

use crate::base::programs::program_exists;
use crate::languages::{Language, missing_program_message};
use crate::process::spawn::{Spawned, spawn};
use crate::sandbox::confine::Confine;

/// The driver script the session runs (passed in the environment).
const DRIVER: &str = include_str!("powershell_driver.ps1");

/// Starts a PowerShell session, or says that `pwsh` is missing.
pub(crate) fn start(nonce: &str, confine: &Confine) -> Result<Spawned, String> {
    let Some(program) = ["pwsh", "powershell"]
        .into_iter()
        .find(|p| program_exists(p))
    else {
        return Err(missing_program_message(
            "pwsh",
            Language::PowerShell,
            "PowerShell 7 (see https://aka.ms/powershell)",
        ));
    };
    spawn(
        program,
        &[
            "-NoLogo",
            "-NoProfile",
            "-NonInteractive",
            "-Command",
            "Invoke-Expression $env:OI_DRIVER",
        ],
        &[("OI_NONCE", nonce), ("OI_DRIVER", DRIVER)],
        confine,
        None,
    )
    .map_err(|e| format!("Could not start `{program}`: {e}\n"))
}
