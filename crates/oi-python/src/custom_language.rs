//! Custom languages, as the original's docs describe them (the E2B example): a Python object
//! with `name`, `run(code)` (a generator of LMC dicts), `stop()` and `terminate()`. oi runs
//! the model's code in that language by calling `run` from the respond loop and streaming
//! what it yields; its `stop`/`terminate` are called when oi stops or ends the sessions.
//!
//! The Python side (`interpreter/core/computer.py`) hands over an adapter that makes the
//! instance on first use, as the original (`Class(computer)` or `Class()`).

use futures::StreamExt;
use oi_core::{Content, Kind, LanguageSpec, Output, OutputStream};
use pyo3::prelude::*;
use serde_json::Value;

use crate::convert;

/// One custom language: what the model is told, and the Python adapter that runs it.
pub struct CustomLanguage {
    /// Its name and aliases.
    pub spec: LanguageSpec,
    /// The adapter (`run`, `stop`, `terminate`).
    pub object: Py<PyAny>,
}

impl CustomLanguage {
    /// A copy sharing the same Python object.
    pub fn share(&self) -> CustomLanguage {
        CustomLanguage {
            spec: self.spec.clone(),
            object: Python::attach(|py| self.object.clone_ref(py)),
        }
    }

    /// Runs `code`: the object's `run(code)` is iterated on a blocking thread (with the GIL
    /// taken per item) and each LMC dict it yields is streamed as an output. When the stream
    /// is dropped (the turn stopped), iteration ends and the object's `stop()` is called.
    pub fn run(&self, code: &str) -> OutputStream {
        let object = Python::attach(|py| self.object.clone_ref(py));
        let code = code.to_owned();
        let (tx, rx) = tokio::sync::mpsc::channel::<Output>(16);
        let start = async move {
            // Detached: the thread ends when `run` is exhausted or nobody listens.
            drop(tokio::task::spawn_blocking(move || {
                pump(&object, &code, &tx)
            }));
        };
        let outputs = futures::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|output| (output, rx))
        });
        futures::stream::once(start)
            .filter_map(|()| async { None })
            .chain(outputs)
            .boxed()
    }

    /// Calls the object's `stop()` or `terminate()`; an error is reported as unraisable.
    pub fn call(&self, method: &str) {
        Python::attach(|py| {
            if let Err(error) = self.object.call_method0(py, method) {
                error.write_unraisable(py, None);
            }
        });
    }
}

/// Iterates `object.run(code)`, sending each output; stops early when nobody listens.
fn pump(object: &Py<PyAny>, code: &str, tx: &tokio::sync::mpsc::Sender<Output>) {
    let started = Python::attach(|py| {
        object
            .call_method1(py, "run", (code,))
            .and_then(|result| Ok(result.bind(py).try_iter()?.unbind()))
    });
    let iterator = match started {
        Ok(iterator) => iterator,
        Err(error) => {
            let _ = tx.blocking_send(Output::console(format!("{error}\n")));
            return;
        }
    };
    loop {
        let next = Python::attach(|py| -> Option<Result<Value, String>> {
            let mut items = iterator.bind(py).clone();
            match items.next()? {
                Ok(item) => Some(
                    convert::to_json(&item, "a custom language's output")
                        .map_err(|e| e.to_string()),
                ),
                Err(error) => Some(Err(error.to_string())),
            }
        });
        let output = match next {
            None => return,
            Some(Ok(value)) => output_of(&value),
            Some(Err(message)) => Some(Output::console(format!("{message}\n"))),
        };
        let Some(output) = output else { continue };
        if tx.blocking_send(output).is_err() {
            Python::attach(|py| {
                if let Err(error) = object.call_method0(py, "stop") {
                    error.write_unraisable(py, None);
                }
            });
            return;
        }
    }
}

/// The output an LMC dict stands for (`{"type": "console", "format": "output", "content":
/// …}`); a bare string is console output; `None` for what carries nothing.
fn output_of(value: &Value) -> Option<Output> {
    let Value::Object(map) = value else {
        return match value {
            Value::String(text) => Some(Output::console(text.clone())),
            Value::Null => None,
            other => Some(Output::console(other.to_string())),
        };
    };
    let kind = map
        .get("type")
        .and_then(|t| serde_json::from_value::<Kind>(t.clone()).ok())
        .unwrap_or(Kind::Console);
    let format = map.get("format").and_then(Value::as_str).map(str::to_owned);
    let content = match map.get("content") {
        None | Some(Value::Null) => Content::Null,
        Some(Value::String(text)) => Content::Text(text.clone()),
        Some(Value::Number(n)) if format.as_deref() == Some("active_line") => {
            Content::Line(n.as_u64().unwrap_or(1))
        }
        Some(other) => Content::Text(other.to_string()),
    };
    if content == Content::Null && format.as_deref() != Some("active_line") {
        return None;
    }
    Some(Output {
        kind,
        format: format.or_else(|| (kind == Kind::Console).then(|| "output".to_owned())),
        content,
        recipient: None,
    })
}
