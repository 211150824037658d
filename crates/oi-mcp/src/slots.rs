//! Interpreter slots: how many interpreters oi's MCP tools may have running at once, across
//! every connection, stateful or stateless. A slot is taken when a session first runs code in
//! a language (that starts its interpreter) and given back when the interpreter ends: the
//! session is reset, its MCP session closes, or a stateless call's one-off session is dropped.
//! Nothing waits for a slot: a call past the limit is refused at once, and no lock is held
//! while code runs, so one slow call never delays another client.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError};

/// The slots shared by every connection of one server.
#[derive(Debug, Clone)]
pub struct Slots {
    free: Arc<Semaphore>,
    limit: Option<usize>,
}

/// One interpreter's slot: given back when dropped.
#[derive(Debug)]
pub struct Slot {
    _permit: OwnedSemaphorePermit,
}

impl Slots {
    /// At most `limit` interpreters at once.
    pub fn limited(limit: usize) -> Slots {
        let limit = limit.clamp(1, Semaphore::MAX_PERMITS);
        Slots {
            free: Arc::new(Semaphore::new(limit)),
            limit: Some(limit),
        }
    }

    /// No limit but the per-connection session cap (`oi --mcp`: one client, its own process).
    pub fn unlimited() -> Slots {
        Slots {
            free: Arc::new(Semaphore::new(Semaphore::MAX_PERMITS)),
            limit: None,
        }
    }

    /// A slot for one more interpreter, or the sentence to answer when all are taken.
    pub fn take(&self) -> Result<Slot, String> {
        match Arc::clone(&self.free).try_acquire_owned() {
            Ok(permit) => Ok(Slot { _permit: permit }),
            Err(TryAcquireError::NoPermits | TryAcquireError::Closed) => Err(format!(
                "This server runs {} interpreters for MCP clients, its limit: reset a session (the reset tool) or end an MCP session, then call again.",
                self.limit.unwrap_or(Semaphore::MAX_PERMITS)
            )),
        }
    }

    /// How many interpreters hold a slot now.
    pub fn taken(&self) -> usize {
        self.limit
            .unwrap_or(Semaphore::MAX_PERMITS)
            .saturating_sub(self.free.available_permits())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn slots_are_taken_up_to_the_limit_and_given_back_on_drop() {
        let slots = Slots::limited(2);
        let first = slots.take().unwrap();
        let _second = slots.take().unwrap();
        let refused = slots.take().unwrap_err();
        assert!(refused.contains("runs 2 interpreters"), "{refused}");
        assert_eq!(slots.taken(), 2);
        drop(first);
        assert_eq!(slots.taken(), 1);
        assert!(slots.take().is_ok());
    }
}
