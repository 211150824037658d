//! The state an interpreter and its turns share: settings, the runtime state beside them,
//! the conversation, the model, the computer, the judge.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::approval::ApprovalId;
use crate::computer::Computer;
use crate::history::Saved;
use crate::lmc::Message;
use crate::model::LanguageModel;
use crate::policy::Judge;
use crate::runtime::RuntimeState;
use crate::settings::Settings;

/// Locks a mutex; a poisoned lock still holds valid data here (every writer leaves it whole).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// State shared by an interpreter and its turns.
pub(crate) struct Shared {
    settings: Mutex<Settings>,
    messages: Mutex<Vec<Message>>,
    next_approval: AtomicU64,
    runtime: Mutex<RuntimeState>,
    saved: Mutex<Option<Saved>>,
    pub(crate) model: Arc<dyn LanguageModel>,
    pub(crate) computer: Arc<dyn Computer>,
    pub(crate) judge: Arc<dyn Judge>,
}

impl Shared {
    pub(crate) fn new(
        settings: Settings,
        model: Arc<dyn LanguageModel>,
        computer: Arc<dyn Computer>,
        judge: Arc<dyn Judge>,
    ) -> Self {
        Shared {
            settings: Mutex::new(settings),
            messages: Mutex::new(Vec::new()),
            next_approval: AtomicU64::new(1),
            runtime: Mutex::new(RuntimeState::default()),
            saved: Mutex::new(None),
            model,
            computer,
            judge,
        }
    }

    /// The conversation, locked.
    pub(crate) fn messages(&self) -> MutexGuard<'_, Vec<Message>> {
        lock(&self.messages)
    }

    /// The settings, locked.
    pub(crate) fn settings(&self) -> MutexGuard<'_, Settings> {
        lock(&self.settings)
    }

    /// The runtime state (the conversation's file name, its spend), locked. Never locked
    /// while the settings are.
    pub(crate) fn runtime(&self) -> MutexGuard<'_, RuntimeState> {
        lock(&self.runtime)
    }

    /// What the conversation file holds since the last save, locked (for the whole of a
    /// save, so that two saves never write the file at once). Locked before the messages.
    pub(crate) fn saved(&self) -> MutexGuard<'_, Option<Saved>> {
        lock(&self.saved)
    }

    /// What this interpreter's requests have cost so far, in USD (kept across `reset`).
    pub(crate) fn spent(&self) -> f64 {
        self.runtime().spent
    }

    /// Counts one request's usage: its cost (0 when unknown) toward `max_budget`, its tokens
    /// and cost in the session's and the turn's tallies.
    pub(crate) fn spend(&self, usage: &crate::Usage) {
        let mut runtime = self.runtime();
        runtime.spent += usage.cost.unwrap_or(0.0);
        runtime.session.add(usage);
        runtime.last_turn.add(usage);
    }

    /// A turn starts: its tally starts from nothing.
    pub(crate) fn start_turn_tally(&self) {
        self.runtime().last_turn = crate::runtime::Tally::default();
    }

    /// A fresh approval id.
    pub(crate) fn next_approval_id(&self) -> ApprovalId {
        self.next_approval.fetch_add(1, Ordering::Relaxed)
    }
}
