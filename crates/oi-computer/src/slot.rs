//! The session of one language (all its aliases share it): the live session, locked by the
//! run that uses it, and its handle, reachable without async (stop, terminate, drop).

use std::sync::Arc;

use crate::languages::Language;
use crate::process::session::Session;
use crate::process::session_handle::Handle;

/// The session of one language (all its aliases share it).
#[derive(Debug)]
pub(crate) struct Slot {
    /// The language (all its aliases share the slot).
    pub language: Language,
    /// The live session, held by the run using it.
    pub state: Arc<tokio::sync::Mutex<SlotState>>,
    /// The live session's handle, reachable without async (stop, terminate, drop).
    handle: std::sync::Mutex<Option<Arc<Handle>>>,
}

/// What a slot holds while a run uses it.
#[derive(Debug, Default)]
pub(crate) struct SlotState {
    /// The live session, if one is running.
    pub session: Option<Session>,
    /// The nonce framing its driver's events.
    pub nonce: String,
    /// The last session was killed; the next run says that its state was lost.
    pub lost_state: bool,
    /// The sandbox and limits the live session was started under.
    pub confine: Option<Arc<crate::sandbox::confine::Confine>>,
    /// Whether the live session was sent code (a session started ahead has no state to lose).
    pub used: bool,
}

impl Slot {
    /// A slot for `language` with no session yet.
    pub(crate) fn new(language: Language) -> Slot {
        Slot {
            language,
            state: Arc::new(tokio::sync::Mutex::new(SlotState::default())),
            handle: std::sync::Mutex::new(None),
        }
    }

    /// The live session's handle.
    pub(crate) fn handle(&self) -> Option<Arc<Handle>> {
        self.handle
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Records the live session's handle (`None`: no live session).
    pub(crate) fn set_handle(&self, handle: Option<Arc<Handle>>) {
        *self.handle.lock().unwrap_or_else(|e| e.into_inner()) = handle;
    }

    /// Ends the slot's session: drops it (which kills it if it is still alive) and forgets
    /// its handle.
    pub(crate) fn clear(&self, state: &mut SlotState) {
        state.session = None;
        self.set_handle(None);
    }

    /// Where the live session's interpreter is now (its `/proc/<pid>/cwd`): an earlier block
    /// may have changed directory. A live session whose directory cannot be read is
    /// [`SessionDir::Unknown`](oi_core::computer::SessionDir::Unknown).
    pub(crate) fn session_dir(&self) -> oi_core::computer::SessionDir {
        use oi_core::computer::SessionDir;
        let Some(handle) = self.handle() else {
            return SessionDir::NotStarted;
        };
        if !handle.usable() {
            return SessionDir::NotStarted;
        }
        match std::fs::read_link(format!("/proc/{}/cwd", handle.pgid())) {
            Ok(dir) if dir.is_absolute() => SessionDir::At(dir),
            _ => SessionDir::Unknown,
        }
    }

    /// Takes the live session's handle out of the slot (terminate, drop).
    pub(crate) fn take_handle(&self) -> Option<Arc<Handle>> {
        self.handle.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}
