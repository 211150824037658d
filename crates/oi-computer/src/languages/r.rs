//! The R session: `R --vanilla` running a small driver that evaluates each code block in the
//! global environment; commands are `<id> <hex>` lines on stdin (base R has no JSON parser).

use std::fmt::Write;

use crate::base::programs::program_exists;
use crate::languages::Language;
use crate::languages::start_error::StartError;
use crate::process::spawn::{Spawned, spawn};
use crate::sandbox::confine::Confine;

/// The driver script the session runs (passed in the environment, evaluated by `-e`).
const DRIVER: &str = include_str!("r_driver.R");

/// Starts an R session, or says that R is missing. R gets a private temp directory (its
/// `TMPDIR`, removed with the session), which it needs to start even in a read-only sandbox.
pub(crate) fn start(
    nonce: &str,
    confine: &Confine,
) -> Result<(Spawned, Vec<u8>, tempfile::TempDir), StartError> {
    if !program_exists("R") {
        return Err(StartError::NotInstalled {
            program: "R",
            language: Language::R,
            install: "R (e.g. `apt-get install r-base-core`)",
        });
    }
    let workdir = tempfile::Builder::new()
        .prefix("oi-r-")
        .tempdir()
        .map_err(StartError::work_dir("a temp directory for R"))?;
    let tmp = workdir.path().to_string_lossy().into_owned();
    let spawned = spawn(
        "R",
        &[
            "--vanilla",
            "-q",
            "--no-echo",
            "-e",
            "eval(parse(text = Sys.getenv('OI_DRIVER')))",
        ],
        &[("OI_NONCE", nonce), ("OI_DRIVER", DRIVER), ("TMPDIR", &tmp)],
        confine,
        Some(workdir.path()),
    )
    .map_err(StartError::spawn("R"))?;
    Ok((spawned, Vec::new(), workdir))
}

/// The command line that runs `code` as run `id`: the id, a space, the code in hex.
pub(crate) fn command(id: u64, code: &str) -> Vec<u8> {
    let mut line = String::with_capacity(24 + code.len() * 2);
    let _ = write!(line, "{id} ");
    for byte in code.bytes() {
        let _ = write!(line, "{byte:02x}");
    }
    line.push('\n');
    line.into_bytes()
}

#[cfg(test)]
mod tests {
    #[test]
    fn command_is_hex() {
        assert_eq!(super::command(7, "a é"), b"7 6120c3a9\n".to_vec());
    }
}
