//! Starting a session for a language and encoding a code block as a command for it.

use std::time::Duration;

use crate::languages::Language;
use crate::languages::start_error::StartError;
use crate::process::session::{Limits, Session};
use crate::process::spawn::Spawned;
use crate::sandbox::confine::Confine;

/// A started session and the bytes to write to it before the first command.
pub(crate) struct Started {
    /// The session.
    pub session: Session,
    /// Setup commands (shell hosts), possibly empty.
    pub setup: Vec<u8>,
    /// The nonce framing its events.
    pub nonce: String,
}

/// Starts a session for `language`; the error becomes a console message for the model
/// where the run's output is made (run.rs).
pub(crate) fn start(
    language: Language,
    output_cap: usize,
    grace: Duration,
    confine: &Confine,
) -> Result<Started, StartError> {
    let nonce = crate::base::nonce::nonce();
    let limits = Limits { output_cap, grace };
    let plain = |spawned: Spawned| (spawned, Vec::new(), None);
    let with_dir =
        |(spawned, setup, dir): (Spawned, Vec<u8>, tempfile::TempDir)| (spawned, setup, Some(dir));
    let (spawned, setup, workdir) = match language {
        Language::Python => plain(crate::languages::python::start(&nonce, confine)?),
        Language::Shell => with_dir(crate::languages::shell::start(&nonce, confine)?),
        Language::JavaScript => plain(crate::languages::javascript::start(&nonce, confine)?),
        Language::Ruby => plain(crate::languages::ruby::start(&nonce, confine)?),
        Language::R => with_dir(crate::languages::r::start(&nonce, confine)?),
        Language::PowerShell => plain(crate::languages::powershell::start(&nonce, confine)?),
        Language::Java => with_dir(crate::languages::java::start(confine)?),
        Language::AppleScript => with_dir(crate::languages::applescript::start(confine)?),
        Language::Html | Language::React => {
            return Err(StartError::Shown(language));
        }
    };
    let session = Session::new(spawned, &nonce, limits, workdir)
        .map_err(|source| StartError::Session { language, source })?;
    if let Some(max) = confine.limits.max_processes {
        crate::process::process_limit::watch_processes(std::sync::Arc::clone(&session.handle), max)
            .map_err(|source| StartError::Watch { language, source })?;
    }
    Ok(Started {
        session,
        setup,
        nonce,
    })
}

/// The bytes that make `session` run `code` as run `id`.
pub(crate) fn command(
    language: Language,
    session: &Session,
    nonce: &str,
    id: u64,
    code: &str,
    api: bool,
) -> std::io::Result<Vec<u8>> {
    let workdir = || {
        session
            .workdir
            .as_ref()
            .map(|dir| dir.path())
            .ok_or_else(|| std::io::Error::other("the session has no work directory"))
    };
    match language {
        Language::Shell => Ok(crate::languages::shell::command(id, code, nonce)),
        Language::Java => Ok(crate::languages::java::command(id, code, workdir()?, nonce)),
        Language::AppleScript => Ok(crate::languages::applescript::command(
            id,
            code,
            workdir()?,
            nonce,
        )),
        Language::R => Ok(crate::languages::r::command(id, code)),
        Language::Python if api => Ok(json_line(serde_json::json!({
            "id": id,
            "code": code,
            "api": crate::api_door::SOURCE,
            "skills": oi_core::computer_api::skills_dir(),
        }))),
        _ => Ok(json_command(id, code)),
    }
}

/// The JSON command line `{"id": …, "code": …}` the drivers read.
fn json_command(id: u64, code: &str) -> Vec<u8> {
    json_line(serde_json::json!({ "id": id, "code": code }))
}

/// `value` as one JSON line.
fn json_line(value: serde_json::Value) -> Vec<u8> {
    let mut line = value.to_string().into_bytes();
    line.push(b'\n');
    line
}
