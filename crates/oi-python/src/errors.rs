//! The exception a failed turn raises in Python.

use pyo3::exceptions::PyRuntimeError;

pyo3::create_exception!(
    _oi,
    TurnError,
    PyRuntimeError,
    "A turn failed: the model request failed, there was nothing to answer, or the conversation could not be saved. The message says which, and what to do."
);
