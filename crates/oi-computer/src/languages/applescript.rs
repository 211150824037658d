//! AppleScript: on macOS each run is `osascript` on a file, hosted by a shell; elsewhere it is
//! unavailable.

use std::path::Path;

use crate::base::programs::program_exists;
use crate::languages::Language;
use crate::languages::heredoc::Heredocs;
use crate::languages::shell_host;
use crate::languages::start_error::StartError;
use crate::process::spawn::Spawned;
use crate::sandbox::confine::Confine;

/// The one-line answer on systems other than macOS.
pub(crate) const NOT_MACOS: &str = "AppleScript is only available on macOS; this machine cannot run it. Use Python or Shell instead.\n";

/// Starts the host for AppleScript runs, or says why it cannot run here.
pub(crate) fn start(
    confine: &Confine,
) -> Result<(Spawned, Vec<u8>, tempfile::TempDir), StartError> {
    if !cfg!(target_os = "macos") {
        return Err(StartError::Unsupported(NOT_MACOS));
    }
    if !program_exists("osascript") {
        return Err(StartError::NotInstalled {
            program: "osascript",
            language: Language::AppleScript,
            install: "nothing: it ships with macOS",
        });
    }
    shell_host::start("oi-applescript-", confine)
}

/// The command that runs `code` with `osascript` as run `id`: the script reaches the host as
/// here-documents on its command pipe (a long one written by the host into its private
/// `workdir`); oi opens no file for it.
pub(crate) fn command(id: u64, code: &str, workdir: &Path, nonce: &str) -> Vec<u8> {
    let docs = Heredocs::new(code);
    if docs.is_single() {
        let (redirection, body) = docs.single_whole();
        let mut bytes = shell_host::framed(
            id,
            nonce,
            &format!("osascript {} </dev/null{redirection}", Heredocs::SINGLE),
        );
        bytes.extend_from_slice(body.as_bytes());
        return bytes;
    }
    let file = shell_host::quote(
        &workdir
            .join(format!("run-{id}.applescript"))
            .to_string_lossy(),
    );
    format!(
        "{start}\n{write}osascript {file} </dev/null; rm -f {file}; {done}\n",
        start = shell_host::start_event(id, nonce),
        write = docs.write_to(&file, "true"),
        done = shell_host::done_event(id, nonce),
    )
    .into_bytes()
}
