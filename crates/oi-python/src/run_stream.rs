//! `computer.run(language, code, stream=True)`: the outputs of a run, one at a time, as they
//! come. Closing the Python generator early drops the stream and interrupts the code.

use std::sync::{Arc, Mutex, PoisonError};

use futures::StreamExt;
use oi_core::OutputStream;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use crate::convert::output_object;
use crate::runtime::{self, LazyRuntime};

/// A running `computer.run`.
#[pyclass(frozen, module = "interpreter._oi")]
pub struct RunStream {
    stream: Mutex<Option<OutputStream>>,
    runtime: Arc<LazyRuntime>,
}

impl RunStream {
    /// Wraps the outputs of a run.
    pub fn new(stream: OutputStream, runtime: Arc<LazyRuntime>) -> Self {
        RunStream {
            stream: Mutex::new(Some(stream)),
            runtime,
        }
    }
}

#[pymethods]
impl RunStream {
    /// The next output (a dict without `role`), waiting for it with the GIL released; `None`
    /// once the code has finished.
    fn next<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let rt = self.runtime.get()?;
        let mut guard = self.stream.try_lock().map_err(|_| {
            PyRuntimeError::new_err("this run's outputs are being read by another thread")
        })?;
        let Some(stream) = guard.as_mut() else {
            return Ok(None);
        };
        match runtime::wait(py, rt, stream.next())? {
            Some(output) => Ok(Some(output_object(py, output)?)),
            None => {
                *guard = None;
                Ok(None)
            }
        }
    }

    /// Drops the stream (the outputs not read are lost).
    fn close(&self) {
        *self.stream.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }
}
