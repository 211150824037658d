//! Sessions: one isolated interpreter (messages, settings, computer) per id, created on first
//! use, bounded in number, reaped when idle. `/` is the session [`DEFAULT_SESSION`].

pub mod cluster;
pub mod coalesce;
pub mod event_log;
pub mod outbox;
pub mod reopen;
pub mod session_files;
pub mod session_folder;
pub mod settings_adopt;
pub mod settings_patch;
pub mod store_link;
pub mod wire;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use oi_core::Interpreter;
use serde::Serialize;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::async_interpreter::AsyncInterpreter;
use crate::config::ServerConfig;
use crate::outgoing::Outgoing;
use crate::sessions::outbox::{Frame, Outbox};
use crate::sessions::session_files::SessionFiles;
use crate::sessions::store_link::StoreLink;
use crate::store::replica::Cluster;

/// The id of the session behind `/`.
pub const DEFAULT_SESSION: &str = "default";

/// Builds the interpreter of a new session.
pub type InterpreterFactory = Arc<dyn Fn() -> Interpreter + Send + Sync>;

/// Why a session could not be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    /// The id has characters other than letters, digits, `-` and `_`, or is too long.
    #[error("invalid session id {0:?}: use 1 to 64 letters, digits, '-' or '_'")]
    InvalidId(String),
    /// Every slot is taken by a connected session.
    #[error("too many live sessions (at most {0}); delete one or wait for idle ones to be reaped")]
    Full(usize),
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Why a connection is being closed by the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloseReason {
    /// Another connection took over the session.
    TakenOver,
    /// The session was deleted or reaped.
    SessionEnded,
}

/// The connection now attached to a session.
#[derive(Debug)]
struct Attached {
    id: u64,
    token: CancellationToken,
    reason: Arc<Mutex<Option<CloseReason>>>,
}

/// A handle a connection keeps while it is attached.
#[derive(Debug, Clone)]
pub struct Attachment {
    /// Cancelled when the connection must close.
    pub token: CancellationToken,
    reason: Arc<Mutex<Option<CloseReason>>>,
    id: u64,
}

impl Attachment {
    /// The connection's number in its session (from 1): what a `complete` names with the
    /// input it answers.
    pub fn connection(&self) -> u64 {
        self.id
    }

    /// Why the server closed this connection, if it did.
    pub fn reason(&self) -> Option<CloseReason> {
        *lock(&self.reason)
    }
}

/// Keeps a connection attached to its session; detaches it when dropped (also when an upgrade
/// never completes).
pub struct AttachGuard {
    session: Arc<Session>,
    attachment: Attachment,
}

impl AttachGuard {
    /// Attaches a new connection to `session` (the previous one is told to close).
    pub fn new(session: Arc<Session>) -> Self {
        let attachment = session.attach();
        AttachGuard {
            session,
            attachment,
        }
    }

    /// The attachment.
    pub fn attachment(&self) -> &Attachment {
        &self.attachment
    }
}

impl Drop for AttachGuard {
    fn drop(&mut self) {
        self.session.detach(&self.attachment);
    }
}

/// One conversation with its own interpreter.
pub struct Session {
    id: String,
    interpreter: AsyncInterpreter,
    outbox: Outbox,
    last_active: Mutex<Instant>,
    attached: Mutex<Option<Attached>>,
    next_connection: AtomicU64,
    /// The session store, when this replica owns the session by a lease (`--store`).
    store: Option<Arc<StoreLink>>,
    /// Where the session is kept across restarts, when there is no store.
    files: Option<Arc<SessionFiles>>,
    /// Deleted: its file is gone and is not written again (shared with the saves under way).
    forgotten: Arc<AtomicBool>,
    /// Held by the connection that is sending, so that a newcomer waits for the old sender.
    pub sender_lock: tokio::sync::Mutex<()>,
}

impl Session {
    fn new(id: &str, interpreter: Interpreter, config: &ServerConfig) -> Self {
        Session {
            id: id.to_owned(),
            interpreter: AsyncInterpreter::with_limits(
                interpreter,
                config.interrupt_mode,
                crate::async_interpreter::InputLimits {
                    max_message_bytes: config.max_frame_bytes,
                    max_pending_bytes: config.max_pending_bytes,
                },
            ),
            outbox: Outbox::new(config.require_acknowledge, config.ack_timeout, id),
            last_active: Mutex::new(Instant::now()),
            attached: Mutex::new(None),
            next_connection: AtomicU64::new(1),
            store: None,
            files: None,
            forgotten: Arc::new(AtomicBool::new(false)),
            sender_lock: tokio::sync::Mutex::new(()),
        }
    }

    /// The session's link to the store, when it has one.
    pub fn store(&self) -> Option<&Arc<StoreLink>> {
        self.store.as_ref()
    }

    /// The client acknowledged chunk `id` (the store forgets it too).
    pub fn ack(&self, id: &str) {
        let acked = self.outbox.ack(id);
        let Some(link) = self.store.as_ref().filter(|_| acked) else {
            return;
        };
        if let Some(seq) = self.outbox.seq_of(id) {
            link.acked(seq);
        }
    }

    /// With a store: writes acknowledge-mode `frames` before they are sent, and has the
    /// conversation written when `batch` starts, ends or completes a message. Without one,
    /// does nothing.
    pub async fn persist(&self, batch: &[Outgoing], frames: &[Frame]) {
        let Some(link) = &self.store else {
            // Without a store: the session's file is written when a turn ends or parks.
            let parks = |c: &oi_core::Chunk| c.kind == Some(oi_core::Kind::Confirmation);
            if batch
                .iter()
                .any(|out| is_complete(&out.chunk) || parks(&out.chunk))
            {
                drop(self.save_file());
            }
            return;
        };
        if self.outbox.acknowledge() {
            if let Err(e) = link.put_frames(&self.outbox, frames).await {
                link.report(&self.interpreter, &e);
            }
        }
        if batch.iter().any(|out| {
            out.chunk.start || out.chunk.end || out.answers.is_some() || is_complete(&out.chunk)
        }) {
            link.changed();
        }
    }

    /// The session id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Its interpreter.
    pub fn interpreter(&self) -> &AsyncInterpreter {
        &self.interpreter
    }

    /// Its outbox.
    pub fn outbox(&self) -> &Outbox {
        &self.outbox
    }

    /// Records activity (keeps the session from being reaped).
    pub fn touch(&self) {
        *lock(&self.last_active) = Instant::now();
    }

    /// Whether a connection is attached.
    pub fn connected(&self) -> bool {
        lock(&self.attached).is_some()
    }

    /// Attaches a new connection; the previous one, if any, is told to close.
    pub fn attach(&self) -> Attachment {
        let id = self.next_connection.fetch_add(1, Ordering::Relaxed);
        let token = CancellationToken::new();
        let reason = Arc::new(Mutex::new(None));
        let previous = lock(&self.attached).replace(Attached {
            id,
            token: token.clone(),
            reason: reason.clone(),
        });
        if let Some(previous) = previous {
            *lock(&previous.reason) = Some(CloseReason::TakenOver);
            previous.token.cancel();
        }
        self.touch();
        Attachment { token, reason, id }
    }

    /// Whether `attachment` is still the attached connection (none took over).
    pub fn is_attached(&self, attachment: &Attachment) -> bool {
        lock(&self.attached)
            .as_ref()
            .is_some_and(|a| a.id == attachment.id)
    }

    /// Detaches `attachment` if it is still the attached connection.
    pub fn detach(&self, attachment: &Attachment) {
        let mut attached = lock(&self.attached);
        if attached.as_ref().is_some_and(|a| a.id == attachment.id) {
            *attached = None;
        }
        drop(attached);
        self.touch();
    }

    /// Ends the session: closes its connection, stops its turn, kills its processes.
    pub async fn shutdown(&self) {
        let busy = self.interpreter.running();
        let attached = lock(&self.attached).take();
        if let Some(attached) = attached {
            *lock(&attached.reason) = Some(CloseReason::SessionEnded);
            attached.token.cancel();
        }
        self.interpreter.stop().await;
        self.interpreter.interpreter().computer().terminate().await;
        if let Some(link) = &self.store {
            link.close(&self.interpreter, busy).await;
        }
        if let Some(save) = self.save_file() {
            let _ = save.await;
        }
    }

    /// Writes the session's file in the background (without a store, unless deleted).
    fn save_file(&self) -> Option<tokio::task::JoinHandle<()>> {
        let files = self.files.clone()?;
        if self.forgotten.load(Ordering::Relaxed) {
            return None;
        }
        let (id, interpreter) = (self.id.clone(), self.interpreter.clone());
        let forgotten = self.forgotten.clone();
        Some(tokio::task::spawn_blocking(move || {
            if let Err(e) = files.save(&id, &interpreter, &forgotten) {
                eprintln!("oi-server: {e}");
            }
        }))
    }

    fn idle_for(&self, now: Instant) -> Duration {
        now.saturating_duration_since(*lock(&self.last_active))
    }
}

fn is_complete(chunk: &oi_core::Chunk) -> bool {
    *chunk == oi_core::Chunk::complete()
}

/// A session loaded from the store, to be served here.
pub struct Restored {
    /// Its conversation.
    pub messages: Vec<oi_core::Message>,
    /// Its settings as stored: only their data is taken (settings_adopt.rs).
    pub settings: Option<oi_core::Settings>,
    /// Its acknowledge-mode outbox.
    pub outbox: Option<crate::store::StoredOutbox>,
}

/// What `GET /sessions` says about one session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionInfo {
    /// The id.
    pub id: String,
    /// Whether a connection is attached.
    pub connected: bool,
    /// Seconds since the last activity.
    pub idle_seconds: u64,
    /// Messages in the conversation.
    pub messages: usize,
    /// The last turn's and the session's tokens and cost (a `cost` of `null`: a price oi
    /// does not know).
    pub usage: oi_core::UsageReport,
}

/// Every live session.
pub struct Sessions {
    map: Mutex<HashMap<String, Arc<Session>>>,
    factory: InterpreterFactory,
    config: Arc<ServerConfig>,
    cluster: OnceLock<Arc<Cluster>>,
    files: Option<Arc<SessionFiles>>,
}

/// Whether `id` is a usable session id.
pub fn valid_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

impl Sessions {
    /// The registry, with the default session already created, and, without a store, the
    /// sessions kept in `config.sessions_dir` reopened (reopen.rs).
    pub fn new(config: Arc<ServerConfig>, factory: InterpreterFactory) -> Self {
        let files = config
            .sessions_dir
            .clone()
            .filter(|_| config.store.is_none())
            .map(|dir| Arc::new(SessionFiles::new(dir)));
        let sessions = Sessions {
            map: Mutex::new(HashMap::new()),
            factory,
            config,
            cluster: OnceLock::new(),
            files,
        };
        let default = sessions.fresh(DEFAULT_SESSION, (sessions.factory)());
        lock(&sessions.map).insert(DEFAULT_SESSION.to_owned(), default);
        sessions.reopen_all();
        sessions
    }

    /// A new session with `interpreter`, kept in this registry's files.
    fn fresh(&self, id: &str, interpreter: Interpreter) -> Arc<Session> {
        let mut session = Session::new(id, interpreter, &self.config);
        session.files = self.files.clone();
        Arc::new(session)
    }

    /// Reopens the sessions kept in the files, the newest that there is room for, read one at
    /// a time (the others' files stay).
    fn reopen_all(&self) {
        let Some(files) = &self.files else { return };
        let policy = crate::sessions::settings_patch::NetworkPolicy {
            allow_auto_run: self.config.allow_network_auto_run,
            allow_credentials: self.config.allow_network_credentials,
        };
        // The default session is in the map already and counts towards max_sessions.
        let room = self.config.max_sessions.max(1);
        for id in files.newest(DEFAULT_SESSION, room) {
            let Some(saved) = files.load(&id) else {
                continue;
            };
            let interpreter = (self.factory)();
            if let Some(stored) = &saved.settings {
                let mut own = interpreter.settings_mut();
                *own = reopen::reopened_settings(&own, stored, policy);
            }
            interpreter.set_messages(reopen::reopened_messages(saved));
            let mut map = lock(&self.map);
            if map.len() >= room && id != DEFAULT_SESSION {
                eprintln!(
                    "oi-server: session {id} not reopened: more than {} sessions (its file stays)",
                    self.config.max_sessions
                );
                continue;
            }
            map.insert(id.clone(), self.fresh(&id, interpreter));
        }
    }

    /// Serves sessions under leases in `cluster`'s store from now on (set once, at start).
    pub fn use_cluster(&self, cluster: Arc<Cluster>) {
        let _ = self.cluster.set(cluster);
    }

    /// The cluster, when a store is configured.
    pub fn cluster(&self) -> Option<&Arc<Cluster>> {
        self.cluster.get()
    }

    /// Serves session `id`, loaded from the store, here under the lease held by `link`. When
    /// the registry is full, the longest-idle unconnected session is evicted (returned, to be
    /// shut down by the caller).
    pub fn adopt(
        &self,
        id: &str,
        restored: Restored,
        link: Arc<StoreLink>,
    ) -> Result<(Arc<Session>, Option<Arc<Session>>), SessionError> {
        let mut map = lock(&self.map);
        let evicted = self.make_room(&mut map)?;
        let interpreter = (self.factory)();
        if let Some(stored) = restored.settings {
            // Data, never policy (settings_adopt.rs), and a session a client had made
            // stricter stays so on the replica that adopts it, as after a restart (reopen.rs).
            let policy = crate::sessions::settings_patch::NetworkPolicy {
                allow_auto_run: self.config.allow_network_auto_run,
                allow_credentials: self.config.allow_network_credentials,
            };
            let mut own = interpreter.settings_mut();
            *own = reopen::reopened_settings(&own, &stored, policy);
        }
        interpreter.set_messages(restored.messages);
        let mut session = Session::new(id, interpreter, &self.config);
        if let Some(outbox) = restored.outbox {
            session.outbox = Outbox::restored(
                self.config.require_acknowledge,
                self.config.ack_timeout,
                outbox,
            );
        }
        link.start(session.interpreter.clone());
        session.store = Some(link);
        let session = Arc::new(session);
        map.insert(id.to_owned(), session.clone());
        Ok((session, evicted))
    }

    /// Every live session.
    pub fn all(&self) -> Vec<Arc<Session>> {
        lock(&self.map).values().cloned().collect()
    }

    /// Removes `session` if it is still the one registered under its id.
    pub fn remove_exact(&self, session: &Arc<Session>) -> bool {
        let mut map = lock(&self.map);
        let same = map
            .get(&session.id)
            .is_some_and(|s| Arc::ptr_eq(s, session));
        if same {
            map.remove(&session.id);
        }
        same
    }

    /// Makes room for one more session: evicts the longest-idle unconnected one when full.
    fn make_room(
        &self,
        map: &mut HashMap<String, Arc<Session>>,
    ) -> Result<Option<Arc<Session>>, SessionError> {
        if map.len() < self.config.max_sessions.max(1) {
            return Ok(None);
        }
        let now = Instant::now();
        let victim = map
            .values()
            .filter(|s| s.id != DEFAULT_SESSION && !s.connected())
            .max_by_key(|s| s.idle_for(now))
            .map(|s| s.id.clone());
        match victim {
            Some(victim) => Ok(map.remove(&victim)),
            None => Err(SessionError::Full(self.config.max_sessions)),
        }
    }

    /// The default session.
    pub fn default_session(&self) -> Arc<Session> {
        match self.get(DEFAULT_SESSION) {
            Some(session) => session,
            None => {
                let session = self.fresh(DEFAULT_SESSION, (self.factory)());
                lock(&self.map).insert(DEFAULT_SESSION.to_owned(), session.clone());
                session
            }
        }
    }

    /// The session `id`, if it lives.
    pub fn get(&self, id: &str) -> Option<Arc<Session>> {
        lock(&self.map).get(id).cloned()
    }

    /// The session `id`, created if needed. When the registry is full, the longest-idle
    /// unconnected session is evicted (returned second, to be shut down by the caller).
    pub fn get_or_create(
        &self,
        id: &str,
    ) -> Result<(Arc<Session>, Option<Arc<Session>>), SessionError> {
        if !valid_id(id) {
            return Err(SessionError::InvalidId(id.to_owned()));
        }
        let mut map = lock(&self.map);
        if let Some(session) = map.get(id) {
            return Ok((session.clone(), None));
        }
        let evicted = self.make_room(&mut map)?;
        let session = self.fresh(id, (self.factory)());
        map.insert(id.to_owned(), session.clone());
        Ok((session, evicted))
    }

    /// Removes session `id` (the caller shuts it down); it is deleted: no save of it writes
    /// its file again, and the caller removes the file ([`Sessions::remove_file`]).
    pub fn remove(&self, id: &str) -> Option<Arc<Session>> {
        let session = lock(&self.map).remove(id);
        if let Some(session) = &session {
            session.forgotten.store(true, Ordering::SeqCst);
        }
        session
    }

    /// Removes the file of deleted session `id`, off the async workers (a save of the same
    /// session under way finishes first).
    pub async fn remove_file(&self, id: &str) {
        let Some(files) = self.files.clone() else {
            return;
        };
        let id = id.to_owned();
        let _ = tokio::task::spawn_blocking(move || files.remove(&id)).await;
    }

    /// Every session, sorted by id.
    pub fn list(&self) -> Vec<SessionInfo> {
        let now = Instant::now();
        let mut list: Vec<SessionInfo> = lock(&self.map)
            .values()
            .map(|s| SessionInfo {
                id: s.id.clone(),
                connected: s.connected(),
                idle_seconds: s.idle_for(now).as_secs(),
                messages: s.interpreter.interpreter().message_count(),
                usage: s.interpreter.interpreter().runtime_mut().usage(),
            })
            .collect();
        list.sort_by(|a, b| a.id.cmp(&b.id));
        list
    }

    /// Removes the sessions idle longer than the configured timeout with no connection (never
    /// the default session); the caller checks that no turn runs, then shuts them down.
    pub fn take_idle(&self, now: Instant) -> Vec<Arc<Session>> {
        let timeout = self.config.session_idle_timeout;
        let mut map = lock(&self.map);
        let idle: Vec<String> = map
            .values()
            .filter(|s| s.id != DEFAULT_SESSION && !s.connected() && s.idle_for(now) >= timeout)
            .map(|s| s.id.clone())
            .collect();
        idle.iter().filter_map(|id| map.remove(id)).collect()
    }

    /// Puts back a session taken by [`take_idle`](Self::take_idle) that turned out to be busy
    /// (a turn still running with no client connected: its output waits for the next one).
    pub fn restore(&self, session: Arc<Session>) {
        lock(&self.map).entry(session.id.clone()).or_insert(session);
    }

    /// Removes every session (for shutdown); the caller shuts them down.
    pub fn take_all(&self) -> Vec<Arc<Session>> {
        lock(&self.map).drain().map(|(_, s)| s).collect()
    }
}
