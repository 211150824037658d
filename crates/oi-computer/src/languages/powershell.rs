//! The PowerShell session: `pwsh` running a small driver that dot-sources each code block in
//! one scope; commands are JSON lines on stdin.

use crate::base::programs::program_exists;
use crate::languages::Language;
use crate::languages::start_error::StartError;
use crate::process::spawn::{Spawned, spawn};
use crate::sandbox::confine::Confine;

/// The driver script the session runs (passed in the environment).
const DRIVER: &str = include_str!("powershell_driver.ps1");

/// Starts a PowerShell session, or says that `pwsh` is missing.
pub(crate) fn start(nonce: &str, confine: &Confine) -> Result<Spawned, StartError> {
    let Some(program) = ["pwsh", "powershell"]
        .into_iter()
        .find(|p| program_exists(p))
    else {
        return Err(StartError::NotInstalled {
            program: "pwsh",
            language: Language::PowerShell,
            install: "PowerShell 7 (see https://aka.ms/powershell)",
        });
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
    .map_err(StartError::spawn(program))
}
