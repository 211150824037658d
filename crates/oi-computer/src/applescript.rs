//! AppleScript: on macOS each run is `osascript` on a file, hosted by a shell; elsewhere it is
//! unavailable.

use std::path::Path;

use crate::confine::Confine;
use crate::languages::{Language, missing_program_message};
use crate::programs::program_exists;
use crate::shell_host;
use crate::spawn::Spawned;

/// The one-line answer on systems other than macOS.
pub(crate) const NOT_MACOS: &str = "AppleScript is only available on macOS; this machine cannot run it. Use Python or Shell instead.\n";

/// Starts the host for AppleScript runs, or says why it cannot run here.
pub(crate) fn start(confine: &Confine) -> Result<(Spawned, Vec<u8>, tempfile::TempDir), String> {
    if !cfg!(target_os = "macos") {
        return Err(NOT_MACOS.to_owned());
    }
    if !program_exists("osascript") {
        return Err(missing_program_message(
            "osascript",
            Language::AppleScript,
            "nothing: it ships with macOS",
        ));
    }
    shell_host::start("oi-applescript-", confine)
}

/// The command line that runs `code` with `osascript` as run `id`.
pub(crate) fn command(
    id: u64,
    code: &str,
    workdir: &Path,
    nonce: &str,
) -> std::io::Result<Vec<u8>> {
    let file = workdir.join(format!("run-{id}.applescript"));
    std::fs::write(&file, code)?;
    let file = shell_host::quote(&file.to_string_lossy());
    Ok(shell_host::framed(
        id,
        nonce,
        &format!("osascript {file} </dev/null; rm -f {file}"),
    ))
}
