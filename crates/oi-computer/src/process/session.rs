//! One running session process, owned by its language's slot: its stdin, its exit status, the
//! items its output reader thread (`pipe_reader.rs`) and watchdogs send, and its sync handle
//! (`session_handle.rs`).

use std::sync::Arc;
use std::time::Duration;

use tokio::net::unix::pipe;
use tokio::sync::mpsc;

use crate::process::session_handle::{Fate, Handle, Item};
use crate::process::spawn::Spawned;
use crate::sandbox::child::ExitWatch;

/// A live session process, owned by its language slot.
#[derive(Debug)]
pub(crate) struct Session {
    /// The sync handle.
    pub handle: Arc<Handle>,
    /// The interpreter's exit status, once it has exited.
    pub exit: ExitWatch,
    /// Where commands go.
    pub stdin: pipe::Sender,
    /// Items from the reader thread and watchdogs.
    pub rx: mpsc::UnboundedReceiver<Item>,
    /// Files the session uses (shell code blocks); removed on drop.
    pub workdir: Option<tempfile::TempDir>,
}

impl Drop for Session {
    fn drop(&mut self) {
        if self.handle.fate() == Fate::Alive {
            self.handle.kill(Fate::Terminated);
        }
    }
}

/// Limits the reader applies to each segment of output (a run, or the time between runs).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Bytes of output forwarded per segment (head and tail) before the rest is dropped.
    pub output_cap: usize,
    /// How long a run may ignore an interrupt before its group is killed.
    pub grace: Duration,
}

impl Session {
    /// Wraps a spawned process: starts its reader thread.
    pub(crate) fn new(
        spawned: Spawned,
        nonce: &str,
        limits: Limits,
        workdir: Option<tempfile::TempDir>,
    ) -> std::io::Result<Session> {
        let Spawned {
            exit,
            stdin,
            output,
            unit,
        } = spawned;
        let (tx, rx) = mpsc::unbounded_channel();
        let handle = Arc::new(Handle::new(unit, tx.clone(), limits.grace));
        crate::process::pipe_reader::start(
            output,
            nonce,
            limits.output_cap,
            Arc::clone(&handle),
            tx,
        )?;
        Ok(Session {
            handle,
            exit,
            stdin,
            rx,
            workdir,
        })
    }
}
