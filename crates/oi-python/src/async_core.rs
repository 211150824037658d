//! `AsyncCore`: oi-session's `AsyncInterpreter` (chunks in, chunks out, one task per turn) on
//! the conversation of a `Core`, for the Python `AsyncInterpreter`. Each call hands its
//! result to a Python callback (see [`crate::callback`]).

use std::sync::Arc;

use oi_core::{Chunk, Interpreter, TurnEvent};
use oi_session::InterruptMode;
use pyo3::prelude::*;
use serde_json::Value;

use crate::callback::{self, Outcome, Pending};
use crate::convert;
use crate::live_computer::LiveComputer;
use crate::runtime::{self, LazyRuntime};
use crate::turn::TurnHandle;

/// The async face of an interpreter (same conversation, same settings).
#[pyclass(frozen, module = "interpreter._oi")]
pub struct AsyncCore {
    inner: oi_session::AsyncInterpreter,
    interpreter: Interpreter,
    computer: Arc<LiveComputer>,
    runtime: Arc<LazyRuntime>,
}

impl AsyncCore {
    /// Wraps `interpreter` (whose computer is `computer`), running on `runtime`.
    pub fn new(
        interpreter: Interpreter,
        computer: Arc<LiveComputer>,
        runtime: Arc<LazyRuntime>,
    ) -> Self {
        AsyncCore {
            inner: oi_session::AsyncInterpreter::new(interpreter.clone(), InterruptMode::Interrupt),
            interpreter,
            computer,
            runtime,
        }
    }

    fn to_json(chunk: &Chunk) -> Value {
        serde_json::to_value(chunk).unwrap_or(Value::Null)
    }

    /// The chunk as the WebSocket sends it: a failed turn's error chunk with its `kind` and
    /// upstream `status`.
    fn out_json(out: &oi_session::Outgoing) -> Value {
        let mut value = Self::to_json(&out.chunk);
        if let (Some(failure), Value::Object(map)) = (&out.failure, &mut value) {
            map.insert("kind".into(), Value::from(failure.kind.as_str()));
            if let Some(status) = failure.status {
                map.insert("status".into(), Value::from(status));
            }
        }
        value
    }
}

#[pymethods]
impl AsyncCore {
    /// Takes one user chunk (spec c.5: `start` interrupts a running turn and opens a message,
    /// `content` extends it, `end` starts the turn; `stop`/`go` commands). Calls
    /// `callback(None, error)` when done (`error` is `None` or what was wrong).
    fn input(&self, chunk: &Bound<'_, PyAny>, callback: Py<PyAny>) -> PyResult<Pending> {
        let value = convert::to_json(chunk, "the chunk")?;
        self.computer.prepare(&self.interpreter.settings());
        let inner = self.inner.clone();
        let work = async move {
            match inner.input(&value).await {
                Ok(()) => Outcome::Value(Value::Null),
                Err(error) => Outcome::Error(error.to_string()),
            }
        };
        callback::spawn(&self.runtime, work, callback)
    }

    /// Waits for the next outgoing chunk and calls `callback(chunk, None)`. Cancelling the
    /// returned `Pending` before then leaves the chunk in the queue.
    fn output(&self, callback: Py<PyAny>) -> PyResult<Pending> {
        let inner = self.inner.clone();
        let work = async move {
            match inner.next_out().await {
                Some(out) => Outcome::Value(Self::out_json(&out)),
                None => Outcome::Error("the interpreter's output queue is closed".to_owned()),
            }
        };
        callback::spawn(&self.runtime, work, callback)
    }

    /// Stops the running turn (its code is killed); calls `callback(None, None)` when done.
    fn stop(&self, callback: Py<PyAny>) -> PyResult<Pending> {
        let inner = self.inner.clone();
        let work = async move {
            inner.stop().await;
            Outcome::Value(Value::Null)
        };
        callback::spawn(&self.runtime, work, callback)
    }

    /// Puts `chunk` on the output queue.
    fn emit(&self, chunk: &Bound<'_, PyAny>) -> PyResult<()> {
        let value = convert::to_json(chunk, "the chunk")?;
        let chunk: Chunk = serde_json::from_value(value).map_err(|e| {
            pyo3::exceptions::PyValueError::new_err(format!("not an LMC chunk: {e}"))
        })?;
        self.inner.emit(chunk);
        Ok(())
    }

    /// Runs a turn on the conversation as it is, blocking (the GIL released), with its chunks
    /// going to the output queue and `complete` last. With `run_code` the first code block
    /// runs; otherwise the turn ends at it, after its confirmation chunk (a later `go` runs
    /// it).
    fn respond(&self, py: Python<'_>, run_code: bool) -> PyResult<()> {
        self.computer.prepare(&self.interpreter.settings());
        let turn = TurnHandle::new(self.interpreter.respond(), self.runtime.clone());
        let mut run_code = run_code;
        while let Some(event) = turn.next_event(py)? {
            match event {
                TurnEvent::Chunk(chunk) => self.inner.emit(chunk),
                TurnEvent::Approval(request) if run_code => {
                    run_code = false;
                    request.approve();
                }
                TurnEvent::Approval(request) => {
                    self.inner.emit(request.confirmation());
                    // Stopped before the request is dropped: the block stays unanswered (no
                    // "declined" message), for a later `go`.
                    turn.halt(py);
                    drop(request);
                    self.inner.emit(Chunk::complete());
                    return Ok(());
                }
                TurnEvent::Error(error) => {
                    self.inner.emit_out(oi_session::Outgoing::failed(&error));
                    self.inner.emit(Chunk::complete());
                    return Ok(());
                }
                TurnEvent::Complete => self.inner.emit(Chunk::complete()),
            }
        }
        Ok(())
    }

    /// Whether a turn is running (waits briefly, without the GIL).
    fn is_running(&self, py: Python<'_>) -> PyResult<bool> {
        let rt = self.runtime.get()?;
        runtime::wait(py, rt, self.inner.is_running())
    }
}
