//! oi's own server (oi-server: WebSocket, HTTP, the OpenAI-compatible endpoint), started in
//! the Python process by `AsyncInterpreter.server.run()`: the same protocol, environment
//! variables and flags as the `oi-server` binary.

use std::sync::Arc;
use std::time::Duration;

use oi_core::Settings;
use oi_server::{InterruptMode, ServerConfig};
use pyo3::exceptions::{PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use serde_json::Value;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::callback::{self, Outcome, Pending};
use crate::convert;
use crate::runtime::{self, LazyRuntime};

/// How long `start` waits for the port to accept connections.
const READY_WITHIN: Duration = Duration::from_secs(10);

/// How long a stopped server may take to close its connections before it is dropped.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// The options `run()` takes, named as oi-server's flags (dashes as underscores).
pub const OPTIONS: [&str; 18] = [
    "allow_network_auto_run",
    "allow_network_credentials",
    "sandbox",
    "deny_network",
    "sandbox_fallback",
    "pass_env",
    "max_processes",
    "max_memory",
    "max_cpu_seconds",
    "queue",
    "max_sessions",
    "session_idle_timeout",
    "allowed_host",
    "insecure_no_key",
    "max_connections",
    "header_timeout",
    "max_message_bytes",
    "max_pending_bytes",
];

/// The end of a server: `None` while it runs, then `Ok` or the error it stopped with.
type Ended = Option<Result<(), String>>;

/// A server running on an interpreter's runtime.
#[pyclass(frozen, module = "interpreter._oi")]
pub struct ServerHandle {
    shutdown: CancellationToken,
    ended: watch::Receiver<Ended>,
    task: tokio::task::AbortHandle,
    runtime: Arc<LazyRuntime>,
}

/// Reads option `name` as `T`, saying what it must be.
fn option<'py, T: FromPyObjectOwned<'py>>(
    value: &Bound<'py, PyAny>,
    name: &str,
    what: &str,
) -> PyResult<T> {
    value.extract::<T>().map_err(|_| {
        PyTypeError::new_err(format!(
            "{name} must be {what}, not {} ({})",
            convert::type_name(value),
            convert::short_repr(value)
        ))
    })
}

/// A string, or a list of strings (repeatable flags).
fn strings(value: &Bound<'_, PyAny>, name: &str) -> PyResult<Vec<String>> {
    if let Ok(text) = value.cast::<PyString>() {
        return Ok(vec![text.extract::<String>()?]);
    }
    option(value, name, "a string or a list of strings")
}

/// Applies oi-server's flags, given as keyword options, to `config` (the sandbox and limit
/// options to the sessions' `settings`).
fn apply(
    config: &mut ServerConfig,
    settings: &mut Settings,
    options: &Bound<'_, PyDict>,
) -> PyResult<()> {
    let computer = &mut settings.computer;
    for (key, value) in options.iter() {
        let key: String = key.extract()?;
        let name = key.as_str();
        match name {
            "allow_network_auto_run" => {
                config.allow_network_auto_run = option(&value, name, "True or False")?;
            }
            "allow_network_credentials" => {
                config.allow_network_credentials = option(&value, name, "True or False")?;
            }
            "sandbox" => {
                let mode: String = option(&value, name, "\"off\", \"workspace\" or \"readonly\"")?;
                computer.sandbox.mode = mode.parse().map_err(|_| {
                    PyValueError::new_err(format!(
                        "sandbox must be \"off\", \"workspace\" or \"readonly\", not {mode:?}"
                    ))
                })?;
            }
            "deny_network" => {
                if option::<bool>(&value, name, "True or False")? {
                    computer.sandbox.network = false;
                }
            }
            "sandbox_fallback" => {
                computer.sandbox.allow_unsandboxed_fallback =
                    option(&value, name, "True or False")?;
            }
            "pass_env" => {
                for variable in strings(&value, name)? {
                    computer.sandbox = computer.sandbox.clone().with_pass_env(variable);
                }
            }
            "max_processes" => {
                computer.limits.max_processes = Some(option(&value, name, "a whole number")?);
            }
            "max_memory" => {
                computer.limits.max_memory_bytes = Some(option(&value, name, "a number of bytes")?);
            }
            "max_cpu_seconds" => {
                computer.limits.max_cpu_seconds = Some(option(&value, name, "a whole number")?);
            }
            "queue" => {
                if option::<bool>(&value, name, "True or False")? {
                    config.interrupt_mode = InterruptMode::Queue;
                }
            }
            "max_sessions" => config.max_sessions = option(&value, name, "a whole number")?,
            "session_idle_timeout" => {
                let secs: u64 = option(&value, name, "a number of seconds")?;
                config.session_idle_timeout = Duration::from_secs(secs);
            }
            "allowed_host" => config.allowed_hosts.extend(strings(&value, name)?),
            "insecure_no_key" => config.insecure_no_key = option(&value, name, "True or False")?,
            "max_connections" => config.max_connections = option(&value, name, "a whole number")?,
            "header_timeout" => {
                let secs: u64 = option(&value, name, "a number of seconds")?;
                config.header_read_timeout = Duration::from_secs(secs);
            }
            "max_message_bytes" => config.max_frame_bytes = option(&value, name, "a number")?,
            "max_pending_bytes" => config.max_pending_bytes = option(&value, name, "a number")?,
            other => {
                return Err(PyTypeError::new_err(format!(
                    "run() got an unknown option {other:?}: the options are {}",
                    OPTIONS.join(", ")
                )));
            }
        }
    }
    Ok(())
}

/// Where to knock to see that the server listens (a wildcard address is reached on loopback).
fn probe_host(host: &str) -> String {
    match host.trim_matches(['[', ']']) {
        "0.0.0.0" | "" => "127.0.0.1".to_owned(),
        "::" => "::1".to_owned(),
        other => other.to_owned(),
    }
}

impl ServerHandle {
    /// Starts `oi_server::run` with `settings` on `rt`, and waits (without the GIL) until the
    /// port accepts connections; a server that cannot start raises `OSError` with its reason.
    pub fn start(
        py: Python<'_>,
        rt: &tokio::runtime::Runtime,
        runtime: Arc<LazyRuntime>,
        mut settings: Settings,
        host: String,
        port: u16,
        options: &Bound<'_, PyDict>,
    ) -> PyResult<Self> {
        let mut config = ServerConfig::from_env(|k| std::env::var(k).ok())
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        config.host.clone_from(&host);
        config.port = port;
        apply(&mut config, &mut settings, options)?;
        let shutdown = CancellationToken::new();
        let (done, ended) = watch::channel::<Ended>(None);
        let stop = shutdown.clone().cancelled_owned();
        let task = rt.spawn(async move {
            let result = oi_server::run(config, settings, stop).await;
            let _ = done.send(Some(result.map_err(|e| e.to_string())));
        });
        let handle = ServerHandle {
            shutdown,
            ended,
            task: task.abort_handle(),
            runtime,
        };
        let target = (probe_host(&host), port);
        let mut watching = handle.ended.clone();
        let ready = async move {
            let deadline = tokio::time::Instant::now() + READY_WITHIN;
            while tokio::time::Instant::now() < deadline {
                if watching.borrow_and_update().is_some() {
                    return;
                }
                if tokio::net::TcpStream::connect((target.0.as_str(), target.1))
                    .await
                    .is_ok()
                {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        };
        if let Err(interrupt) = runtime::wait(py, rt, ready) {
            handle.request_stop();
            return Err(interrupt);
        }
        if let Some(Err(reason)) = handle.ended.borrow().clone() {
            return Err(PyOSError::new_err(reason));
        }
        Ok(handle)
    }

    /// Waits for the end and returns it (a server dropped after [`STOP_GRACE`] ended
    /// cleanly).
    async fn until_ended(mut ended: watch::Receiver<Ended>) -> Ended {
        match ended.wait_for(Option::is_some).await {
            Ok(value) => value.clone(),
            Err(_) => Some(Ok(())),
        }
    }

    /// Asks the server to stop; drops it if it has not within [`STOP_GRACE`].
    fn request_stop(&self) {
        self.shutdown.cancel();
        let (task, ended) = (self.task.clone(), self.ended.clone());
        if let Some(rt) = self.runtime.started() {
            rt.spawn(async move {
                if tokio::time::timeout(STOP_GRACE, Self::until_ended(ended))
                    .await
                    .is_err()
                {
                    task.abort();
                }
            });
        }
    }
}

#[pymethods]
impl ServerHandle {
    /// Serves until the server stops (or CTRL-C, which stops it and returns). Raises `OSError`
    /// when the server failed.
    fn wait(&self, py: Python<'_>) -> PyResult<()> {
        let rt = self.runtime.get()?;
        let waited = runtime::wait(py, rt, Self::until_ended(self.ended.clone()));
        let ended = match waited {
            Ok(ended) => ended,
            Err(interrupt)
                if interrupt.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) =>
            {
                self.shutdown.cancel();
                runtime::wait(py, rt, Self::until_ended(self.ended.clone()))?
            }
            Err(other) => return Err(other),
        };
        match ended {
            Some(Err(reason)) => Err(PyOSError::new_err(reason)),
            _ => Ok(()),
        }
    }

    /// Calls `callback(None, error)` when the server has stopped (`error` is `None` after a
    /// clean stop).
    fn when_stopped(&self, callback: Py<PyAny>) -> PyResult<Pending> {
        let ended = self.ended.clone();
        let work = async move {
            match Self::until_ended(ended).await {
                Some(Err(reason)) => Outcome::Error(reason),
                _ => Outcome::Value(Value::Null),
            }
        };
        callback::spawn(&self.runtime, work, callback)
    }

    /// Stops serving: connections are closed and sessions ended (the server is dropped if
    /// that takes more than a few seconds).
    fn stop(&self) {
        self.request_stop();
    }

    /// Whether the server is still serving.
    #[getter]
    fn running(&self) -> bool {
        self.ended.borrow().is_none()
    }
}
