//! A running turn, as Python sees it: `next()` gives its events one by one (a framed chunk,
//! or a code block waiting for approval), with the GIL released while it waits; `decide()`
//! answers an approval; `stop()` stops the model request and the running code at once, from
//! any thread.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures::StreamExt;
use oi_core::{ApprovalRequest, Chunk, Decision, Message, StopHandle, Turn, TurnEvent};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde_json::Value;

use crate::convert;
use crate::errors;
use crate::runtime::{self, LazyRuntime};

/// What the turn holds between two calls of `next()`.
struct State {
    turn: Option<Turn>,
    /// The code block waiting for a decision.
    pending: Option<ApprovalRequest>,
    /// The messages the turn added, kept once the turn is dropped.
    new_messages: Vec<Message>,
}

/// A turn started by `Core.chat()` or `Core.respond()`.
#[pyclass(frozen, module = "interpreter._oi")]
pub struct TurnHandle {
    state: Mutex<State>,
    stop: StopHandle,
    runtime: Arc<LazyRuntime>,
}

impl TurnHandle {
    /// Wraps `turn`, which runs on `runtime`.
    pub fn new(turn: Turn, runtime: Arc<LazyRuntime>) -> Self {
        TurnHandle {
            stop: turn.stop_handle(),
            state: Mutex::new(State {
                turn: Some(turn),
                pending: None,
                new_messages: Vec::new(),
            }),
            runtime,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Ends the turn: stops it, declines a waiting block, keeps its new messages. Inside the
    /// runtime, as dropping the code's run stream signals its process group.
    fn end(&self, state: &mut State) {
        self.stop.stop();
        drop(state.pending.take());
        if let Some(turn) = state.turn.take() {
            state.new_messages = turn.new_messages();
            let _entered = self.runtime.started().map(|r| r.enter());
            drop(turn);
        }
    }

    /// Runs `f` on the state with the GIL released (another thread may hold the lock while it
    /// waits for the turn, and needs the GIL back between its waits).
    fn with_state<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut State) -> R + Send) -> R {
        py.detach(|| f(&mut self.lock()))
    }

    /// The next event; `None` when the turn is over. Each wait lasts one signal tick with the
    /// GIL released and the state locked; between ticks the GIL is taken back to run Python's
    /// signal handlers: a `KeyboardInterrupt` stops the turn and is raised.
    pub(crate) fn next_event(&self, py: Python<'_>) -> PyResult<Option<TurnEvent>> {
        let runtime = self.runtime.get()?;
        loop {
            let step = self.with_state(py, |state| {
                if let Some(request) = state.pending.take() {
                    // Reading on approves the block (as the original's Python API).
                    request.approve();
                }
                let turn = state.turn.as_mut()?;
                match runtime.block_on(async {
                    tokio::time::timeout(runtime::SIGNAL_TICK, turn.next()).await
                }) {
                    Ok(Some(event)) => Some(Some(event)),
                    Ok(None) => {
                        self.end(state);
                        None
                    }
                    Err(_tick) => Some(None),
                }
            });
            match step {
                None => return Ok(None),
                Some(Some(event)) => return Ok(Some(event)),
                Some(None) => {
                    if let Err(interrupt) = py.check_signals() {
                        self.halt(py);
                        return Err(interrupt);
                    }
                }
            }
        }
    }
}

impl TurnHandle {
    /// Stops the turn (see `stop()`).
    pub(crate) fn halt(&self, py: Python<'_>) {
        self.stop.stop();
        self.with_state(py, |state| self.end(state));
    }
}

/// `{"id":…, "language":…, "code":…, "confirmation": CHUNK}` for an approval request.
fn approval_dict<'py>(py: Python<'py>, request: &ApprovalRequest) -> PyResult<Bound<'py, PyAny>> {
    let dict = PyDict::new(py);
    dict.set_item("id", request.id())?;
    dict.set_item("language", request.language())?;
    dict.set_item("code", request.code())?;
    dict.set_item("confirmation", chunk_object(py, &request.confirmation())?)?;
    Ok(dict.into_any())
}

/// A chunk as a Python dict, exactly as it goes on the wire.
pub fn chunk_object<'py>(py: Python<'py>, chunk: &Chunk) -> PyResult<Bound<'py, PyAny>> {
    let value = serde_json::to_value(chunk).unwrap_or(Value::Null);
    convert::to_python(py, &value)
}

/// Messages as a Python list of dicts.
pub fn messages_object<'py>(py: Python<'py>, messages: &[Message]) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for message in messages {
        let value = serde_json::to_value(message).unwrap_or(Value::Null);
        list.append(convert::to_python(py, &value)?)?;
    }
    Ok(list)
}

#[pymethods]
impl TurnHandle {
    /// The next event: `("chunk", CHUNK)` or `("approval", {"id", "language", "code",
    /// "confirmation"})`, or `None` when the turn is over. Calling it while a block waits for a
    /// decision approves that block. Raises `TurnError` when the turn failed, and
    /// `KeyboardInterrupt` (after stopping the turn) on CTRL-C.
    fn next<'py>(&self, py: Python<'py>) -> PyResult<Option<(&'static str, Bound<'py, PyAny>)>> {
        loop {
            let Some(event) = self.next_event(py)? else {
                return Ok(None);
            };
            match event {
                TurnEvent::Chunk(chunk) => return Ok(Some(("chunk", chunk_object(py, &chunk)?))),
                TurnEvent::Approval(request) => {
                    let shown = approval_dict(py, &request)?;
                    self.with_state(py, |state| state.pending = Some(request));
                    return Ok(Some(("approval", shown)));
                }
                TurnEvent::Error(error) => {
                    self.halt(py);
                    return Err(errors::turn_error(py, &error));
                }
                TurnEvent::Complete => continue,
            }
        }
    }

    /// Answers the block waiting for approval: `"approve"`, `"decline"` or `"edit"` (with the
    /// new code). Does nothing when no block waits.
    #[pyo3(signature = (decision, code = None))]
    fn decide(&self, py: Python<'_>, decision: &str, code: Option<String>) -> PyResult<()> {
        let decision = match (decision, code) {
            ("approve", _) => Decision::Approve,
            ("decline", _) => Decision::Decline,
            ("edit", Some(code)) => Decision::Edit(code),
            ("edit", None) => {
                return Err(PyValueError::new_err(
                    "an edit needs the new code: decide(\"edit\", code)",
                ));
            }
            (other, _) => {
                return Err(PyValueError::new_err(format!(
                    "unknown decision {other:?}: use \"approve\", \"decline\" or \"edit\""
                )));
            }
        };
        if let Some(request) = self.with_state(py, |state| state.pending.take()) {
            request.decide(decision);
        }
        Ok(())
    }

    /// Runs the turn to its end, approving every block, and returns the messages it added.
    fn finish<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        while let Some(event) = self.next_event(py)? {
            match event {
                TurnEvent::Chunk(_) | TurnEvent::Complete => {}
                TurnEvent::Approval(request) => request.approve(),
                TurnEvent::Error(error) => {
                    self.halt(py);
                    return Err(errors::turn_error(py, &error));
                }
            }
        }
        self.new_messages(py)
    }

    /// Stops the turn now: the model request is dropped, the running code's process group
    /// interrupted, a waiting block declined. Safe from any thread.
    fn stop(&self, py: Python<'_>) {
        self.halt(py);
    }

    /// The messages the turn added after the input so far.
    fn new_messages<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let messages = self.with_state(py, |state| match &state.turn {
            Some(turn) => turn.new_messages(),
            None => state.new_messages.clone(),
        });
        messages_object(py, &messages)
    }

    /// Whether the turn was stopped.
    #[getter]
    fn stopped(&self) -> bool {
        self.stop.is_stopped()
    }
}

impl Drop for TurnHandle {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(PoisonError::into_inner);
        self.stop.stop();
        drop(state.pending.take());
        if let Some(turn) = state.turn.take() {
            let _entered = self.runtime.started().map(|r| r.enter());
            drop(turn);
        }
    }
}
