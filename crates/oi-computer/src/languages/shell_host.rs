//! A plain `bash` that hosts one-shot programs (Java, AppleScript): each run is a command line
//! that frames its own start and end, so stop, timeouts, the output cap and stale-output
//! protection work as for the persistent sessions. The host traps SIGINT, so an interrupt ends
//! the program but not the host, which then cleans up and reports the run done.

use crate::base::programs::program_exists;
use crate::languages::start_error::StartError;
use crate::process::spawn::{Spawned, spawn};
use crate::sandbox::confine::Confine;

/// Starts a host shell; returns it with its setup script and a private work directory.
pub(crate) fn start(
    prefix: &str,
    confine: &Confine,
) -> Result<(Spawned, Vec<u8>, tempfile::TempDir), StartError> {
    let shell = ["bash", "sh"]
        .into_iter()
        .find(|p| program_exists(p))
        .ok_or(StartError::NoShell)?;
    let workdir = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .map_err(StartError::work_dir("a work directory"))?;
    let spawned =
        spawn(shell, &[], &[], confine, Some(workdir.path())).map_err(StartError::spawn(shell))?;
    Ok((spawned, b"exec 2>&1\ntrap : INT\n".to_vec(), workdir))
}

/// The command line that runs `body` (shell commands) framed as run `id`.
pub(crate) fn framed(id: u64, nonce: &str, body: &str) -> Vec<u8> {
    format!(
        "{}; {body}; {}\n",
        start_event(id, nonce),
        done_event(id, nonce)
    )
    .into_bytes()
}

/// The command that reports run `id` started.
pub(crate) fn start_event(id: u64, nonce: &str) -> String {
    format!("printf '\\036OI{nonce}{{\"ev\":\"start\",\"id\":{id}}}\\n'")
}

/// The command that reports run `id` done.
pub(crate) fn done_event(id: u64, nonce: &str) -> String {
    format!("printf '\\036OI{nonce}{{\"ev\":\"done\",\"id\":{id}}}\\n'")
}

/// Single-quotes `text` for a POSIX shell.
pub(crate) fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}
