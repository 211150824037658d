//! Starting a session for a language and encoding a code block as a command for it.

use std::time::Duration;

use crate::languages::Language;
use crate::session::{Limits, Session};

/// A started session and the bytes to write to it before the first command.
pub(crate) struct Started {
    /// The session.
    pub session: Session,
    /// Setup commands (shell), possibly empty.
    pub setup: Vec<u8>,
    /// The nonce framing its events.
    pub nonce: String,
}

/// Whether this crate can run `language` at all.
pub(crate) fn runnable(language: Language) -> bool {
    matches!(
        language,
        Language::Python | Language::Shell | Language::JavaScript
    )
}

/// Starts a session for `language`; the error is a console message for the model.
pub(crate) fn start(
    language: Language,
    output_cap: usize,
    grace: Duration,
) -> Result<Started, String> {
    let nonce = crate::session::nonce();
    let limits = Limits { output_cap, grace };
    let (spawned, setup, workdir) = match language {
        Language::Python => (crate::python::start(&nonce)?, Vec::new(), None),
        Language::Shell => {
            let (spawned, setup, dir) = crate::shell::start(&nonce)?;
            (spawned, setup, Some(dir))
        }
        Language::JavaScript => (crate::javascript::start(&nonce)?, Vec::new(), None),
        other => return Err(other.unavailable_message()),
    };
    let session = Session::new(spawned, &nonce, limits, workdir)
        .map_err(|e| format!("Could not start the {} session: {e}\n", language.name()))?;
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
) -> std::io::Result<Vec<u8>> {
    match language {
        Language::Shell => {
            let dir = session
                .workdir
                .as_ref()
                .ok_or_else(|| std::io::Error::other("the shell session has no work directory"))?;
            crate::shell::command(id, code, dir.path(), nonce)
        }
        _ => Ok(crate::python::command(id, code)),
    }
}
