//! This replica as one of many over a session store: the store, its lease TTL, the tokens it
//! takes leases with, and whether it is draining. What it does with them is in cluster.rs.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::store::SessionStore;

/// This replica's view of the store: its leases and whether it is draining.
pub struct Cluster {
    store: Arc<dyn SessionStore>,
    replica: String,
    ttl: Duration,
    next_token: AtomicU64,
    draining: AtomicBool,
}

impl Cluster {
    /// A replica over `store` whose leases last `ttl`.
    pub fn new(store: Arc<dyn SessionStore>, ttl: Duration) -> Self {
        let nonce = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        Cluster {
            store,
            replica: format!("{}-{nonce:x}", std::process::id()),
            ttl,
            next_token: AtomicU64::new(1),
            draining: AtomicBool::new(false),
        }
    }

    /// The lease TTL.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// The store.
    pub(crate) fn store(&self) -> &Arc<dyn SessionStore> {
        &self.store
    }

    /// From now on this replica takes no new sessions.
    pub(crate) fn start_draining(&self) {
        self.draining.store(true, Ordering::SeqCst);
    }

    /// Whether this replica is draining (takes no new sessions).
    pub fn draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    /// A new lease token: this replica's id and a counter.
    pub(crate) fn token(&self) -> String {
        let n = self.next_token.fetch_add(1, Ordering::Relaxed);
        format!("{}-{n}", self.replica)
    }
}
