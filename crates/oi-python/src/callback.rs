//! Async work for Python's asyncio without a Python event-loop binding: the work runs as a
//! task on the interpreter's runtime, and its result is handed to a Python callable (which
//! the Python side makes from `loop.call_soon_threadsafe`). [`Pending`] cancels the task.

use std::future::Future;

use pyo3::prelude::*;
use pyo3::types::PyString;
use serde_json::Value;

use crate::convert;
use crate::runtime::LazyRuntime;

/// A task whose result goes to a Python callback; `cancel()` drops it.
#[pyclass(frozen, module = "interpreter._oi")]
pub struct Pending {
    abort: tokio::task::AbortHandle,
}

#[pymethods]
impl Pending {
    /// Cancels the work; the callback is then never called.
    fn cancel(&self) {
        self.abort.abort();
    }

    /// Whether the work has ended (done or cancelled).
    #[getter]
    fn done(&self) -> bool {
        self.abort.is_finished()
    }
}

/// What a finished task hands to Python.
pub enum Outcome {
    /// `callback(value, None)`.
    Value(Value),
    /// `callback(None, message)`.
    Error(String),
}

/// Calls `callback(value, error)` with the GIL held (from a runtime thread).
fn deliver(callback: Py<PyAny>, outcome: Outcome) {
    Python::attach(|py| {
        let args = match &outcome {
            Outcome::Value(value) => {
                convert::to_python(py, value).map(|v| (v, py.None().into_bound(py)))
            }
            Outcome::Error(message) => Ok((
                py.None().into_bound(py),
                PyString::new(py, message).into_any(),
            )),
        };
        let called = args.and_then(|(value, error)| callback.call1(py, (value, error)));
        if let Err(error) = called {
            error.write_unraisable(py, None);
        }
    });
}

/// Spawns `work` on `runtime`; its outcome goes to `callback`, unless the runtime was closed
/// meanwhile (Python is exiting: no thread may take the GIL any more).
pub fn spawn<F>(runtime: &LazyRuntime, work: F, callback: Py<PyAny>) -> PyResult<Pending>
where
    F: Future<Output = Outcome> + Send + 'static,
{
    let closed = runtime.closed_flag();
    let task = runtime.get()?.spawn(async move {
        let outcome = work.await;
        if !closed.load(std::sync::atomic::Ordering::Acquire) {
            deliver(callback, outcome);
        }
    });
    Ok(Pending {
        abort: task.abort_handle(),
    })
}
