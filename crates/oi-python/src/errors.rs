//! The exception a failed turn raises in Python, with what kind of failure it was (`kind`,
//! and `status` for an HTTP answer) so that Python code can act on it without reading the
//! message.

use oi_core::{ModelError, TurnError as CoreTurnError};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

pyo3::create_exception!(
    _oi,
    TurnError,
    PyRuntimeError,
    "A turn failed: the model request failed, there was nothing to answer, or the conversation could not be saved. The message says which, and what to do; `kind` names it (\"unauthorized\", \"rate_limited\", \"context_window_exceeded\", \"unreachable\", \"http_error\", \"config\", \"stream\", \"budget\", \"no_message\", \"history\", \"runtime\") and `status` is the HTTP status when the model server answered one (else None)."
);

/// The name Python sees for `error`'s kind.
fn kind(error: &CoreTurnError) -> &'static str {
    match error {
        CoreTurnError::Model(model) => match model {
            ModelError::Config(_) => "config",
            ModelError::Unreachable { .. } => "unreachable",
            ModelError::Status { .. } => "http_error",
            ModelError::Unauthorized { .. } => "unauthorized",
            ModelError::RateLimited { .. } => "rate_limited",
            ModelError::ContextWindowExceeded { .. } => "context_window_exceeded",
            ModelError::Stream(_) => "stream",
        },
        CoreTurnError::NoMessage => "no_message",
        CoreTurnError::History(_) => "history",
        CoreTurnError::Budget { .. } => "budget",
        CoreTurnError::Runtime(_) => "runtime",
    }
}

/// `error` as the Python exception: its message, `kind` and `status`.
pub fn turn_error(py: Python<'_>, error: &CoreTurnError) -> PyErr {
    let raised = TurnError::new_err(error.to_string());
    let status = match error {
        CoreTurnError::Model(model) => model.http_status(),
        _ => None,
    };
    let value = raised.value(py);
    // Setting attributes on a fresh exception object cannot fail but for memory; the
    // message is raised either way.
    let _ = value.setattr("kind", kind(error));
    let _ = value.setattr("status", status);
    raised
}
