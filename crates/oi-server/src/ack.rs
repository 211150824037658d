//! The outbox of a session: what was sent, what must be sent again (spec c.6, fixed).
//!
//! In acknowledge mode every outgoing chunk gets its own `id` and stays in the outbox until the
//! client sends `{"ack": id}`: chunks not acked within the timeout are sent again with the same
//! id, and a new connection first receives, in order, every chunk not yet acked. Once acked, a
//! chunk is never sent again. Without acknowledge mode, only a chunk whose send failed is kept
//! for the next connection.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use tokio::time::Instant;

#[derive(Debug)]
struct Pending {
    id: String,
    chunk: Value,
    sent_at: Option<Instant>,
}

#[derive(Debug, Default)]
struct State {
    unacked: VecDeque<Pending>,
    unsent: VecDeque<Value>,
    next_id: u64,
}

/// The outbox of one session.
#[derive(Debug)]
pub struct Outbox {
    acknowledge: bool,
    timeout: Duration,
    prefix: String,
    state: Mutex<State>,
}

impl Outbox {
    /// An outbox; `acknowledge` turns on ids and acks, `timeout` is how long a chunk waits
    /// for its ack. Ids start with `prefix`.
    pub fn new(acknowledge: bool, timeout: Duration, prefix: &str) -> Self {
        let nonce = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        Outbox {
            acknowledge,
            timeout,
            prefix: format!("{prefix}-{nonce:x}"),
            state: Mutex::new(State::default()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether acknowledge mode is on.
    pub fn acknowledge(&self) -> bool {
        self.acknowledge
    }

    /// Registers a chunk about to be sent; in acknowledge mode it gets a fresh `id` and is kept
    /// until acked. Returns the chunk to send.
    pub fn prepare(&self, mut chunk: Value) -> Value {
        if !self.acknowledge {
            return chunk;
        }
        let mut state = self.state();
        state.next_id += 1;
        let id = format!("{}-{}", self.prefix, state.next_id);
        if let Some(object) = chunk.as_object_mut() {
            object.insert("id".to_owned(), Value::String(id.clone()));
        }
        state.unacked.push_back(Pending {
            id,
            chunk: chunk.clone(),
            sent_at: None,
        });
        chunk
    }

    /// Records that `chunk` went out now (starts its ack timer).
    pub fn sent(&self, chunk: &Value) {
        let Some(id) = chunk.get("id").and_then(Value::as_str) else {
            return;
        };
        let now = Instant::now();
        if let Some(pending) = self.state().unacked.iter_mut().find(|p| p.id == id) {
            pending.sent_at = Some(now);
        }
    }

    /// Records that sending `chunk` failed: it goes to the next connection.
    pub fn failed(&self, chunk: Value) {
        if !self.acknowledge {
            self.state().unsent.push_back(chunk);
        }
    }

    /// The client acknowledged `id`. Returns whether it was waiting.
    pub fn ack(&self, id: &str) -> bool {
        let mut state = self.state();
        let before = state.unacked.len();
        state.unacked.retain(|p| p.id != id);
        state.unacked.len() != before
    }

    /// What a new connection must receive first, in order: every chunk not yet acked (or, without
    /// acknowledge mode, every chunk whose send failed).
    pub fn replay(&self) -> Vec<Value> {
        let mut state = self.state();
        if self.acknowledge {
            state.unacked.iter().map(|p| p.chunk.clone()).collect()
        } else {
            state.unsent.drain(..).collect()
        }
    }

    /// The chunks whose ack is overdue at `now`, in order.
    pub fn overdue(&self, now: Instant) -> Vec<Value> {
        self.state()
            .unacked
            .iter()
            .filter(|p| p.sent_at.is_some_and(|at| at + self.timeout <= now))
            .map(|p| p.chunk.clone())
            .collect()
    }

    /// When the next ack falls due, if any chunk waits for one.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.state()
            .unacked
            .iter()
            .filter_map(|p| p.sent_at)
            .min()
            .map(|at| at + self.timeout)
    }

    /// How many chunks wait for an ack.
    pub fn waiting(&self) -> usize {
        self.state().unacked.len()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use serde_json::json;

    #[test]
    fn ids_are_unique_and_acks_remove() {
        let outbox = Outbox::new(true, Duration::from_millis(10), "s");
        let a = outbox.prepare(json!({"content": "complete"}));
        let b = outbox.prepare(json!({"content": "complete"}));
        assert_ne!(a["id"], b["id"]);
        assert_eq!(outbox.replay(), vec![a.clone(), b.clone()]);
        assert!(outbox.ack(a["id"].as_str().unwrap()));
        assert!(!outbox.ack(a["id"].as_str().unwrap()));
        assert_eq!(outbox.replay(), vec![b]);
    }

    #[tokio::test(start_paused = true)]
    async fn overdue_after_timeout() {
        let outbox = Outbox::new(true, Duration::from_millis(100), "s");
        let a = outbox.prepare(json!({"x": 1}));
        assert!(outbox.next_deadline().is_none());
        outbox.sent(&a);
        assert!(outbox.overdue(Instant::now()).is_empty());
        tokio::time::advance(Duration::from_millis(150)).await;
        assert_eq!(outbox.overdue(Instant::now()), vec![a]);
    }

    #[test]
    fn without_acks_only_failures_are_kept() {
        let outbox = Outbox::new(false, Duration::from_millis(10), "s");
        let a = outbox.prepare(json!({"x": 1}));
        assert!(a.get("id").is_none());
        outbox.failed(a.clone());
        assert_eq!(outbox.replay(), vec![a]);
        assert!(outbox.replay().is_empty());
    }
}
