//! The session store: where a session lives between replicas. A replica that owns a session
//! (by its lease) writes the conversation there at each message `end`, and in acknowledge mode
//! every chunk before it is sent and every ack; the next replica to own the session loads it.
//!
//! Two stores implement [`SessionStore`]: [`MemoryStore`] (one process; what tests and
//! `--store memory` use) and `RedisStore` (redis_store.rs, `--store redis://…`; store_open.rs
//! opens the one `--store` names). Without
//! `--store` no store is involved at all: sessions live in the process, as before.
//!
//! Every write carries the writer's lease token and is refused (`Ok(false)`) when the lease
//! is no longer that token's: a replica that lost its lease cannot overwrite its successor.

pub mod redis_store;
pub mod replica;
pub mod store_open;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;

/// What a store call returns.
pub type StoreFuture<T> = BoxFuture<'static, Result<T, StoreError>>;

/// Why the store could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The store could not be reached or refused the command.
    #[error("the session store failed: {0}")]
    Unavailable(String),
    /// What the store holds cannot be read back.
    #[error("the session store holds an unreadable {what} for session {id}: {reason}")]
    Corrupt {
        /// The session.
        id: String,
        /// Which part.
        what: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// `--store` names no store this server knows.
    #[error("--store {0:?} is not a store: use redis://HOST:PORT/DB (or memory for one process)")]
    BadUrl(String),
}

/// The answer to a lease request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Acquired {
    /// The lease is ours now.
    Won,
    /// Another replica holds it, for about this long unless renewed.
    Held(Duration),
}

/// The conversation part of a session: written at message ends.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Snapshot {
    /// The messages, as JSON.
    pub messages: String,
    /// The settings, as JSON (credentials removed).
    pub settings: String,
    /// Whether a turn was running when it was written.
    pub busy: bool,
}

/// Acknowledge-mode chunks not yet acknowledged, with what names the next ones.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StoredOutbox {
    /// The prefix of every id.
    pub prefix: String,
    /// The highest sequence number given out.
    pub next_seq: u64,
    /// Chunks not yet acknowledged: sequence number and the exact text sent.
    pub frames: Vec<(u64, String)>,
}

/// Everything stored for a session.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Stored {
    /// The conversation, if it was ever written.
    pub snapshot: Option<Snapshot>,
    /// The acknowledge-mode outbox, if it was ever written.
    pub outbox: Option<StoredOutbox>,
}

/// A store of sessions shared by replicas. Every future is `'static` (it owns what it needs).
pub trait SessionStore: Send + Sync {
    /// Takes the lease of session `id` for `ttl` with `token`, if no one holds it.
    fn acquire(&self, id: &str, token: &str, ttl: Duration) -> StoreFuture<Acquired>;
    /// Extends the lease if `token` still holds it; false when it does not.
    fn renew(&self, id: &str, token: &str, ttl: Duration) -> StoreFuture<bool>;
    /// Gives the lease up if `token` holds it.
    fn release(&self, id: &str, token: &str) -> StoreFuture<()>;
    /// What is stored for `id` (empty for a new session).
    fn load(&self, id: &str) -> StoreFuture<Stored>;
    /// Writes the conversation; false when `token` no longer holds the lease.
    fn save(&self, id: &str, token: &str, snapshot: Snapshot) -> StoreFuture<bool>;
    /// Adds chunks to the outbox (and records the prefix and the last sequence number); false
    /// when `token` no longer holds the lease.
    fn put_frames(&self, id: &str, token: &str, outbox: StoredOutbox) -> StoreFuture<bool>;
    /// Removes acknowledged chunks; false when `token` no longer holds the lease.
    fn ack(&self, id: &str, token: &str, seqs: Vec<u64>) -> StoreFuture<bool>;
    /// Deletes everything stored for `id` (the session was deleted).
    fn forget(&self, id: &str) -> StoreFuture<()>;
}

#[derive(Debug, Default)]
struct Entry {
    lease: Option<(String, Instant)>,
    snapshot: Option<Snapshot>,
    prefix: Option<(String, u64)>,
    frames: BTreeMap<u64, String>,
}

impl Entry {
    fn holder(&self, now: Instant) -> Option<&str> {
        self.lease
            .as_ref()
            .filter(|(_, until)| *until > now)
            .map(|(token, _)| token.as_str())
    }
}

/// A store in this process's memory: leases and data vanish with it.
#[derive(Debug, Default, Clone)]
pub struct MemoryStore {
    entries: Arc<Mutex<HashMap<String, Entry>>>,
}

impl MemoryStore {
    fn entries(&self) -> MutexGuard<'_, HashMap<String, Entry>> {
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Runs `write` on `id`'s entry if `token` holds its lease.
    fn guarded(&self, id: &str, token: &str, write: impl FnOnce(&mut Entry)) -> bool {
        let mut entries = self.entries();
        let entry = entries.entry(id.to_owned()).or_default();
        if entry.holder(Instant::now()) != Some(token) {
            return false;
        }
        write(entry);
        true
    }
}

fn ready<T: Send + 'static>(value: T) -> StoreFuture<T> {
    Box::pin(futures::future::ready(Ok(value)))
}

impl SessionStore for MemoryStore {
    fn acquire(&self, id: &str, token: &str, ttl: Duration) -> StoreFuture<Acquired> {
        let now = Instant::now();
        let mut entries = self.entries();
        let entry = entries.entry(id.to_owned()).or_default();
        let answer = match &entry.lease {
            Some((_, until)) if *until > now => Acquired::Held(*until - now),
            _ => {
                entry.lease = Some((token.to_owned(), now + ttl));
                Acquired::Won
            }
        };
        ready(answer)
    }

    fn renew(&self, id: &str, token: &str, ttl: Duration) -> StoreFuture<bool> {
        let until = Instant::now() + ttl;
        ready(self.guarded(id, token, |entry| {
            entry.lease = Some((token.to_owned(), until));
        }))
    }

    fn release(&self, id: &str, token: &str) -> StoreFuture<()> {
        self.guarded(id, token, |entry| entry.lease = None);
        ready(())
    }

    fn load(&self, id: &str) -> StoreFuture<Stored> {
        let entries = self.entries();
        let stored = entries.get(id).map(|entry| Stored {
            snapshot: entry.snapshot.clone(),
            outbox: entry
                .prefix
                .as_ref()
                .map(|(prefix, next_seq)| StoredOutbox {
                    prefix: prefix.clone(),
                    next_seq: *next_seq,
                    frames: entry.frames.iter().map(|(k, v)| (*k, v.clone())).collect(),
                }),
        });
        ready(stored.unwrap_or_default())
    }

    fn save(&self, id: &str, token: &str, snapshot: Snapshot) -> StoreFuture<bool> {
        ready(self.guarded(id, token, |entry| entry.snapshot = Some(snapshot)))
    }

    fn put_frames(&self, id: &str, token: &str, outbox: StoredOutbox) -> StoreFuture<bool> {
        ready(self.guarded(id, token, |entry| {
            entry.prefix = Some((outbox.prefix, outbox.next_seq));
            entry.frames.extend(outbox.frames);
        }))
    }

    fn ack(&self, id: &str, token: &str, seqs: Vec<u64>) -> StoreFuture<bool> {
        ready(self.guarded(id, token, |entry| {
            for seq in seqs {
                entry.frames.remove(&seq);
            }
        }))
    }

    fn forget(&self, id: &str) -> StoreFuture<()> {
        self.entries().remove(id);
        ready(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[tokio::test]
    async fn one_lease_holder_and_fenced_writes() {
        let store = MemoryStore::default();
        let ttl = Duration::from_secs(5);
        assert_eq!(store.acquire("s", "a", ttl).await.unwrap(), Acquired::Won);
        assert!(matches!(
            store.acquire("s", "b", ttl).await.unwrap(),
            Acquired::Held(_)
        ));
        assert!(!store.save("s", "b", Snapshot::default()).await.unwrap());
        assert!(store.save("s", "a", Snapshot::default()).await.unwrap());
        store.release("s", "b").await.unwrap();
        assert!(store.renew("s", "a", ttl).await.unwrap());
        store.release("s", "a").await.unwrap();
        assert_eq!(store.acquire("s", "b", ttl).await.unwrap(), Acquired::Won);
    }

    #[tokio::test]
    async fn outbox_keeps_what_is_not_acked_in_order() {
        let store = MemoryStore::default();
        store
            .acquire("s", "a", Duration::from_secs(5))
            .await
            .unwrap();
        let put = StoredOutbox {
            prefix: "p".into(),
            next_seq: 3,
            frames: vec![(2, "two".into()), (1, "one".into()), (3, "three".into())],
        };
        assert!(store.put_frames("s", "a", put).await.unwrap());
        assert!(store.ack("s", "a", vec![2]).await.unwrap());
        let outbox = store.load("s").await.unwrap().outbox.unwrap();
        assert_eq!(outbox.next_seq, 3);
        assert_eq!(
            outbox.frames,
            vec![(1, "one".to_owned()), (3, "three".to_owned())]
        );
    }

    #[tokio::test]
    async fn a_lease_expires() {
        let store = MemoryStore::default();
        let short = Duration::from_millis(20);
        store.acquire("s", "a", short).await.unwrap();
        std::thread::sleep(Duration::from_millis(40));
        assert!(!store.renew("s", "a", short).await.unwrap());
        assert_eq!(store.acquire("s", "b", short).await.unwrap(), Acquired::Won);
    }
}
