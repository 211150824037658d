//! oi's own server (oi-server: WebSocket, HTTP, the OpenAI-compatible endpoint), started in
//! the Python process by `AsyncInterpreter.server.run()`: the same protocol, environment
//! variables and flags as the `oi-server` binary.
//!
//! Serving is the cargo feature `server` (on in the wheel `pip install ./crates/oi-python`
//! builds, off by default): without it this crate links no HTTP server, WebSocket or Redis
//! code (axum, hyper's server side, redis), and `run()` says what to install.

use std::sync::Arc;
use std::time::Duration;

use oi_core::Settings;
use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::callback::{self, Outcome, Pending};
use crate::runtime::{self, LazyRuntime};

/// How long `start` waits for the port to accept connections.
const READY_WITHIN: Duration = Duration::from_secs(10);

/// How long a stopped server may take to close its connections before it is dropped.
const STOP_GRACE: Duration = Duration::from_secs(5);

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

/// Where to knock to see that the server listens (a wildcard address is reached on loopback).
fn probe_host(host: &str) -> String {
    match host.trim_matches(['[', ']']) {
        "0.0.0.0" | "" => "127.0.0.1".to_owned(),
        "::" => "::1".to_owned(),
        other => other.to_owned(),
    }
}

/// What `run()` says when this build cannot serve.
#[cfg(not(feature = "server"))]
const NO_SERVER: &str = "this build of oi's Python package has no server (it was built without the cargo feature `server`): install the package with `pip install ./crates/oi-python`, whose wheel serves, or run the `oi-server` program (`cargo install --path crates/oi-server`)";

/// Starts `oi_server::run` on `rt` with `settings`, `host`, `port` and `options` (oi-server's
/// flags); its end is sent on `done`.
#[cfg(feature = "server")]
fn spawn_server(
    rt: &tokio::runtime::Runtime,
    mut settings: Settings,
    host: &str,
    port: u16,
    options: &Bound<'_, PyDict>,
    stop: tokio_util::sync::WaitForCancellationFutureOwned,
    done: watch::Sender<Ended>,
) -> PyResult<tokio::task::JoinHandle<()>> {
    let mut config = oi_server::ServerConfig::from_env(|k| std::env::var(k).ok())
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
    config.host = host.to_owned();
    config.port = port;
    crate::server_options::apply(&mut config, &mut settings, options)?;
    Ok(rt.spawn(async move {
        let result = oi_server::run(config, settings, stop).await;
        let _ = done.send(Some(result.map_err(|e| e.to_string())));
    }))
}

/// Without the feature `server`: refuses, saying what to install.
#[cfg(not(feature = "server"))]
fn spawn_server(
    _rt: &tokio::runtime::Runtime,
    _settings: Settings,
    _host: &str,
    _port: u16,
    _options: &Bound<'_, PyDict>,
    _stop: tokio_util::sync::WaitForCancellationFutureOwned,
    _done: watch::Sender<Ended>,
) -> PyResult<tokio::task::JoinHandle<()>> {
    Err(PyOSError::new_err(NO_SERVER))
}

impl ServerHandle {
    /// Starts `oi_server::run` with `settings` on `rt`, and waits (without the GIL) until the
    /// port accepts connections; a server that cannot start raises `OSError` with its reason.
    pub fn start(
        py: Python<'_>,
        rt: &tokio::runtime::Runtime,
        runtime: Arc<LazyRuntime>,
        settings: Settings,
        host: String,
        port: u16,
        options: &Bound<'_, PyDict>,
    ) -> PyResult<Self> {
        let shutdown = CancellationToken::new();
        let (done, ended) = watch::channel::<Ended>(None);
        let stop = shutdown.clone().cancelled_owned();
        let task = spawn_server(rt, settings, &host, port, options, stop, done)?;
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
