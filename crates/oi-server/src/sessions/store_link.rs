//! The tie between one owned session and the store: its lease token, and a task that writes
//! the conversation when a message ends and removes acknowledged chunks, in the background.
//! Acknowledge-mode chunks are written by the connection's writer itself, before they are
//! sent ([`StoreLink::put_frames`]): a chunk a client may have seen is always in the store
//! until it is acknowledged.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use oi_core::Chunk;
use tokio::sync::{Notify, mpsc};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::async_interpreter::AsyncInterpreter;
use crate::sessions::outbox::{Frame, Outbox};
use crate::store::{SessionStore, Snapshot, StoreError, StoredOutbox};

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One owned session's link to the store.
pub struct StoreLink {
    store: Arc<dyn SessionStore>,
    id: String,
    token: String,
    dirty: Notify,
    acks: mpsc::UnboundedSender<u64>,
    pending_acks: Mutex<Option<mpsc::UnboundedReceiver<u64>>>,
    task: Mutex<Option<JoinHandle<mpsc::UnboundedReceiver<u64>>>>,
    closed: CancellationToken,
    /// Cancelled when the store says another replica holds the lease now.
    lost: CancellationToken,
    /// Whether a failed write was already reported to the client (once per outage).
    reported: AtomicBool,
    last_renewed: Mutex<Instant>,
}

/// The conversation of `interpreter` as stored: credentials are never written to the store.
pub fn snapshot(interpreter: &AsyncInterpreter, busy: bool) -> Result<Snapshot, StoreError> {
    let core = interpreter.interpreter();
    let corrupt = |e: serde_json::Error| StoreError::Unavailable(format!("cannot encode: {e}"));
    let messages = serde_json::to_string(&core.messages()).map_err(corrupt)?;
    let settings = stored_settings(interpreter).map_err(corrupt)?;
    Ok(Snapshot {
        messages,
        settings,
        busy,
    })
}

/// The settings of `interpreter` as stored (JSON): without credentials, with the runtime
/// state written among them as before the file name moved beside the settings.
pub fn stored_settings(interpreter: &AsyncInterpreter) -> Result<String, serde_json::Error> {
    let core = interpreter.interpreter();
    let runtime = core.runtime();
    let mut settings = core.settings();
    settings.llm.api_key = None;
    settings.llm.api_base = None;
    let settings = oi_core::runtime::settings_with_runtime(&settings, &runtime);
    serde_json::to_string(&settings)
}

impl StoreLink {
    /// A link for session `id`, whose lease `token` holds (just acquired).
    pub fn new(store: Arc<dyn SessionStore>, id: &str, token: String) -> Arc<Self> {
        let (acks, pending) = mpsc::unbounded_channel();
        Arc::new(StoreLink {
            store,
            id: id.to_owned(),
            token,
            dirty: Notify::new(),
            acks,
            pending_acks: Mutex::new(Some(pending)),
            task: Mutex::new(None),
            closed: CancellationToken::new(),
            lost: CancellationToken::new(),
            reported: AtomicBool::new(false),
            last_renewed: Mutex::new(Instant::now()),
        })
    }

    /// The session id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The lease token.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn SessionStore> {
        &self.store
    }

    /// Cancelled once another replica holds the lease.
    pub fn lost(&self) -> &CancellationToken {
        &self.lost
    }

    /// Records a successful renewal now.
    pub fn renewed(&self) {
        *lock(&self.last_renewed) = Instant::now();
    }

    /// When the lease was last renewed (or taken).
    pub fn last_renewed(&self) -> Instant {
        *lock(&self.last_renewed)
    }

    /// Starts the background writer of `interpreter`'s conversation.
    pub fn start(self: &Arc<Self>, interpreter: AsyncInterpreter) {
        let Some(acks) = lock(&self.pending_acks).take() else {
            return;
        };
        let link = self.clone();
        *lock(&self.task) = Some(tokio::spawn(async move {
            link.write_loop(interpreter, acks).await
        }));
    }

    /// The conversation changed (a message ended, a turn began or ended): write it soon.
    pub fn changed(&self) {
        self.dirty.notify_one();
    }

    /// The client acknowledged chunk `seq`: remove it from the store soon.
    pub fn acked(&self, seq: u64) {
        let _ = self.acks.send(seq);
    }

    /// Writes `frames` (just prepared by `outbox`) to the store before they are sent; on
    /// failure the caller sends them anyway and reports the error once.
    pub async fn put_frames(&self, outbox: &Outbox, frames: &[Frame]) -> Result<(), StoreError> {
        let stored = StoredOutbox {
            prefix: outbox.prefix().to_owned(),
            next_seq: outbox.next_seq(),
            frames: frames
                .iter()
                .filter_map(|f| f.seq().map(|seq| (seq, f.text.as_str().to_owned())))
                .collect(),
        };
        if stored.frames.is_empty() {
            return Ok(());
        }
        let put = self.store.put_frames(&self.id, &self.token, stored);
        if self.reported.load(Ordering::Relaxed) {
            // The store is known to be failing (and the client was told): the chunks go out
            // without waiting for it, or every batch would wait for its time-out.
            tokio::spawn(put);
            return Ok(());
        }
        self.written(put.await)
    }

    /// Takes the answer of a write: a refused write means the lease is lost.
    fn written(&self, result: Result<bool, StoreError>) -> Result<(), StoreError> {
        match result {
            Ok(true) => {
                self.reported.store(false, Ordering::Relaxed);
                Ok(())
            }
            Ok(false) => {
                self.lost.cancel();
                Err(StoreError::Unavailable(format!(
                    "another replica holds session {} now",
                    self.id
                )))
            }
            Err(e) => Err(e),
        }
    }

    /// Tells the client once per outage that the store could not be written.
    pub fn report(&self, interpreter: &AsyncInterpreter, error: &StoreError) {
        if self.reported.swap(true, Ordering::Relaxed) {
            return;
        }
        interpreter.emit(Chunk::server_error(format!(
            "{error}: this session's latest messages and unacknowledged chunks may be lost if \
             this replica stops; the server keeps trying"
        )));
    }

    async fn write_loop(
        self: Arc<Self>,
        interpreter: AsyncInterpreter,
        mut acks: mpsc::UnboundedReceiver<u64>,
    ) -> mpsc::UnboundedReceiver<u64> {
        loop {
            tokio::select! {
                () = self.closed.cancelled() => return acks,
                () = self.dirty.notified() => {
                    let written = self.save(&interpreter, interpreter.running()).await;
                    if let Err(e) = written {
                        self.report(&interpreter, &e);
                    }
                }
                Some(seq) = acks.recv() => {
                    let mut seqs = vec![seq];
                    while let Ok(seq) = acks.try_recv() {
                        seqs.push(seq);
                    }
                    let written = self.store.ack(&self.id, &self.token, seqs).await;
                    if let Err(e) = self.written(written) {
                        self.report(&interpreter, &e);
                    }
                }
            }
        }
    }

    async fn save(&self, interpreter: &AsyncInterpreter, busy: bool) -> Result<(), StoreError> {
        let snapshot = snapshot(interpreter, busy)?;
        let written = self.store.save(&self.id, &self.token, snapshot).await;
        self.written(written)
    }

    /// Writes what is left (acks, the conversation with `busy`), then releases the lease.
    pub async fn close(&self, interpreter: &AsyncInterpreter, busy: bool) {
        self.closed.cancel();
        let task = lock(&self.task).take();
        let acks = match task {
            Some(task) => task.await.ok(),
            None => lock(&self.pending_acks).take(),
        };
        if let Some(mut acks) = acks {
            let mut seqs = Vec::new();
            while let Ok(seq) = acks.try_recv() {
                seqs.push(seq);
            }
            if !seqs.is_empty() {
                let _ = self.store.ack(&self.id, &self.token, seqs).await;
            }
        }
        if !self.lost.is_cancelled() {
            let _ = self.save(interpreter, busy).await;
            let _ = self.store.release(&self.id, &self.token).await;
        }
    }
}
