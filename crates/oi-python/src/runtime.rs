//! The tokio runtime an interpreter object runs on, made on first use, and the one way Python
//! threads wait for it: with the GIL released, waking every few milliseconds to let CTRL-C
//! (a pending `KeyboardInterrupt`) through.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// How often a waiting Python thread looks for a pending signal.
pub const SIGNAL_TICK: Duration = Duration::from_millis(20);

/// A tokio runtime built on first use (importing `interpreter` starts no thread). Dropping it
/// shuts it down in the background: the GIL may be held then, and a worker may be waiting for
/// it.
pub struct LazyRuntime {
    cell: OnceLock<tokio::runtime::Runtime>,
    workers: usize,
    /// Set when Python exits: callbacks into Python are skipped from then on.
    closed: Arc<AtomicBool>,
}

impl LazyRuntime {
    /// A runtime of `workers` worker threads, not started yet.
    pub fn new(workers: usize) -> Self {
        LazyRuntime {
            cell: OnceLock::new(),
            workers,
            closed: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The runtime, started now if it was not.
    pub fn get(&self) -> PyResult<&tokio::runtime::Runtime> {
        if let Some(runtime) = self.cell.get() {
            return Ok(runtime);
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(self.workers)
            .thread_name("oi-python")
            .enable_all()
            .build()
            .map_err(|e| PyRuntimeError::new_err(format!("oi could not start its runtime: {e}")))?;
        // Another thread may have won the race; its runtime is kept and this one dropped.
        Ok(self.cell.get_or_init(|| runtime))
    }

    /// Marks the runtime closed: no task calls into Python any more (used at exit).
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
    }

    /// The flag [`close`](Self::close) sets, for tasks to check.
    pub fn closed_flag(&self) -> Arc<AtomicBool> {
        self.closed.clone()
    }

    /// The runtime, if it was started.
    pub fn started(&self) -> Option<&tokio::runtime::Runtime> {
        self.cell.get()
    }
}

impl Drop for LazyRuntime {
    fn drop(&mut self) {
        if let Some(runtime) = self.cell.take() {
            runtime.shutdown_background();
        }
    }
}

/// Runs `future` to its end on `runtime`, with the GIL released. Every [`SIGNAL_TICK`] the
/// thread takes the GIL back to run Python's signal handlers: a `KeyboardInterrupt` (or any
/// exception a handler raises) drops the future — cancelling whatever it was doing — and is
/// returned.
pub fn wait<F>(py: Python<'_>, runtime: &tokio::runtime::Runtime, future: F) -> PyResult<F::Output>
where
    F: Future + Send,
    F::Output: Send,
{
    let mut future = Box::pin(future);
    loop {
        let polled = py.detach(|| {
            runtime.block_on(async { tokio::time::timeout(SIGNAL_TICK, &mut future).await })
        });
        match polled {
            Ok(output) => return Ok(output),
            Err(_tick) => py.check_signals()?,
        }
    }
}
