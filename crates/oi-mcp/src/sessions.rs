//! The named sessions of one MCP connection: each a computer of its own (its interpreters,
//! their state, their processes), built on demand by oi-config's one builder, so that the
//! sandbox, limits and withheld secrets of the settings apply. The settings are read afresh at
//! every call ([`LiveSettings`]): in oi-server they are the server's, so a `POST /settings`
//! that tightens the rules or the sandbox reaches the next MCP call.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use oi_computer::LocalComputer;
use oi_config::ComputerParts;
use oi_core::Settings;
use oi_core::computer::Computer;

use crate::slots::{Slot, Slots};

/// The most sessions one connection may hold at once (each may run an interpreter per
/// language): a caller cannot make oi start processes without bound.
pub const MAX_SESSIONS: usize = 16;

/// The longest session name accepted.
const MAX_NAME: usize = 64;

/// Where sessions read their settings, at every call.
pub type LiveSettings = Arc<dyn Fn() -> Settings + Send + Sync>;

/// Settings that never change (`oi --mcp`: its flags and profile).
pub fn fixed(settings: Settings) -> LiveSettings {
    Arc::new(move || settings.clone())
}

/// One open session: its computer, and a slot for each language whose interpreter it
/// started (shared with the calls running on it, so a slot outlives a reset until the last
/// call on the reset computer has ended).
struct Open {
    computer: Arc<LocalComputer>,
    slots: BTreeMap<String, Arc<Slot>>,
}

/// One connection's sessions, by name.
pub struct Sessions {
    settings: LiveSettings,
    parts: ComputerParts,
    slots: Slots,
    open: Mutex<BTreeMap<String, Open>>,
}

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sessions")
            .field("open", &self.names())
            .finish_non_exhaustive()
    }
}

impl Sessions {
    /// No sessions yet; each will be built with `parts` and run under `settings` as they are
    /// at each call; their interpreters take `slots`.
    pub fn new(settings: LiveSettings, parts: ComputerParts, slots: Slots) -> Sessions {
        Sessions {
            settings,
            parts,
            slots,
            open: Mutex::new(BTreeMap::new()),
        }
    }

    /// No sessions, built like these, sharing their slots.
    pub fn empty_like(&self) -> Sessions {
        Sessions::new(
            Arc::clone(&self.settings),
            self.parts.clone(),
            self.slots.clone(),
        )
    }

    /// The settings the sessions run under now.
    pub fn settings(&self) -> Settings {
        (self.settings)()
    }

    /// The names of the sessions open now.
    pub fn names(&self) -> Vec<String> {
        let open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        open.keys().cloned().collect()
    }

    /// The computer of session `name`, started if new; an error sentence when the name is
    /// not acceptable or too many sessions are open.
    pub fn get_or_open(&self, name: &str) -> Result<Arc<LocalComputer>, String> {
        check_name(name)?;
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(session) = open.get(name) {
            return Ok(Arc::clone(&session.computer));
        }
        if open.len() >= MAX_SESSIONS {
            return Err(format!(
                "Too many sessions ({MAX_SESSIONS} open): reset one before opening another."
            ));
        }
        let computer = Arc::new(self.parts.computer(&self.settings()));
        let session = Open {
            computer: Arc::clone(&computer),
            slots: BTreeMap::new(),
        };
        open.insert(name.to_owned(), session);
        Ok(computer)
    }

    /// The slot of `language`'s interpreter in session `name`, whose computer is `computer`
    /// (taken on its first run, kept until the session ends and every call holding it has
    /// ended: the caller keeps it while its code runs); the sentence to answer when every slot
    /// is taken, or when the session was reset since `computer` was looked up (nothing then
    /// runs on the ended computer).
    pub fn hold_slot(
        &self,
        name: &str,
        language: &str,
        computer: &Arc<LocalComputer>,
    ) -> Result<Arc<Slot>, String> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let session = open
            .get_mut(name)
            .filter(|session| Arc::ptr_eq(&session.computer, computer))
            .ok_or_else(|| format!("Session {name} was reset meanwhile; call again."))?;
        if let Some(slot) = session.slots.get(language) {
            return Ok(Arc::clone(slot));
        }
        let slot = Arc::new(self.slots.take()?);
        session.slots.insert(language.to_owned(), Arc::clone(&slot));
        Ok(slot)
    }

    /// The computer of session `name` if it is open.
    pub fn get(&self, name: &str) -> Option<Arc<LocalComputer>> {
        let open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        open.get(name).map(|session| Arc::clone(&session.computer))
    }

    /// Ends session `name` and every process it started; whether it was open.
    pub async fn reset(&self, name: &str) -> bool {
        let computer = {
            let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
            open.remove(name)
        };
        match computer {
            Some(session) => {
                // The slots are given back once the interpreters have ended.
                session.computer.terminate().await;
                drop(session.slots);
                true
            }
            None => false,
        }
    }
}

/// Whether `name` may name a session: 1 to 64 letters, digits, `-`, `_` or `.`.
fn check_name(name: &str) -> Result<(), String> {
    let fine = !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if fine {
        Ok(())
    } else {
        Err(format!(
            "A session name is 1 to {MAX_NAME} letters, digits, '-', '_' or '.'; got {name:?}."
        ))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    /// Review of issue 34: a call that looked its session up before a reset must not run on
    /// the ended computer with a slot of the new one, and its own slot stays taken until it
    /// ends.
    #[tokio::test]
    async fn a_reset_hands_out_no_slot_for_the_old_computer_and_keeps_a_running_ones() {
        let settings = Settings::default();
        let parts = ComputerParts::new(&settings, None);
        let sessions = Sessions::new(fixed(settings), parts, Slots::limited(1));
        let old = sessions.get_or_open("s").unwrap();
        let running = sessions.hold_slot("s", "python", &old).unwrap();
        assert!(sessions.reset("s").await);
        let new = sessions.get_or_open("s").unwrap();
        assert!(sessions.hold_slot("s", "python", &old).is_err(), "stale");
        assert!(
            sessions.hold_slot("s", "python", &new).is_err(),
            "the running call still holds the only slot"
        );
        drop(running);
        assert!(sessions.hold_slot("s", "python", &new).is_ok());
    }

    #[test]
    fn session_names_are_short_and_plain() {
        assert!(check_name("default").is_ok());
        assert!(check_name("a-b_c.1").is_ok());
        assert!(check_name("").is_err());
        assert!(check_name("../x").is_err());
        assert!(check_name(&"x".repeat(65)).is_err());
    }
}
