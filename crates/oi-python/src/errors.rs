//! The exception a failed turn raises in Python, with what kind of failure it was (`kind`,
//! and `status` for an HTTP answer) so that Python code can act on it without reading the
//! message.

use oi_core::{Failure, TurnError as CoreTurnError};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

pyo3::create_exception!(
    _oi,
    TurnError,
    PyRuntimeError,
    "A turn failed: the model request failed, there was nothing to answer, or the conversation could not be saved. The message says which, and what to do; `kind` names it (\"rate_limit\", \"authentication\", \"context_window\", \"budget\", \"upstream\", \"unreachable\", \"stream\", \"config\", \"no_message\", \"history\", \"internal\": the WebSocket error chunk's `kind`) and `status` is the HTTP status when the model server answered one (else None)."
);

/// `error` as the Python exception: its message, and the `kind` and `status` of its
/// [`Failure`] (the same the WebSocket's error chunk and the OpenAI endpoint say).
pub fn turn_error(py: Python<'_>, error: &CoreTurnError) -> PyErr {
    let raised = TurnError::new_err(error.to_string());
    let failure = Failure::from(error);
    let value = raised.value(py);
    // Setting attributes on a fresh exception object cannot fail but for memory; the
    // message is raised either way.
    let _ = value.setattr("kind", failure.kind.as_str());
    let _ = value.setattr("status", failure.status);
    raised
}
