//! The log of a session: what it said on its WebSocket (and the inputs it was sent), in
//! order, each entry numbered from 1, bounded by count and by bytes (the oldest go first).
//!
//! A connection that asks for it (`?replay=all`, `?since=N`: docs/protocol.md) gets the
//! entries after N before live output, so that a page that reloads rebuilds exactly what it
//! showed. Generic over what an entry holds, so that it depends on nothing of the outbox.

use std::collections::VecDeque;

/// The most entries one session's log holds.
pub const MAX_ENTRIES: usize = 20_000;
/// The most bytes one session's log holds.
pub const MAX_BYTES: usize = 16 * 1024 * 1024;

/// A bounded, numbered log.
#[derive(Debug)]
pub struct EventLog<T> {
    entries: VecDeque<(u64, usize, T)>,
    bytes: usize,
    last: u64,
    dropped: bool,
    /// Whether the conversation was empty when the log began (`None`: not begun yet).
    began_empty: Option<bool>,
    max_entries: usize,
    max_bytes: usize,
}

/// Where a log stands, for the header of a replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// The number of the oldest entry held (`last + 1` when none is).
    pub first: u64,
    /// The number of the newest entry (0 when nothing was ever logged).
    pub last: u64,
    /// Whether the log holds everything the session said since it began: nothing was
    /// dropped, and the conversation was empty when it began.
    pub whole: bool,
}

impl<T: Clone> Default for EventLog<T> {
    fn default() -> Self {
        Self::with_bounds(MAX_ENTRIES, MAX_BYTES)
    }
}

impl<T: Clone> EventLog<T> {
    /// A log that holds at most `max_entries` entries and `max_bytes` bytes.
    pub fn with_bounds(max_entries: usize, max_bytes: usize) -> Self {
        EventLog {
            entries: VecDeque::new(),
            bytes: 0,
            last: 0,
            dropped: false,
            began_empty: None,
            max_entries: max_entries.max(1),
            max_bytes,
        }
    }

    /// Whether the log has not begun yet (see [`begin`](Self::begin)).
    pub fn unbegun(&self) -> bool {
        self.began_empty.is_none()
    }

    /// Records whether the conversation was empty when the log began (only the first call
    /// counts, and only before the first entry).
    pub fn begin(&mut self, conversation_empty: bool) {
        if self.began_empty.is_none() && self.last == 0 {
            self.began_empty = Some(conversation_empty);
        }
    }

    /// The number the next entry gets.
    pub fn next_seq(&self) -> u64 {
        self.last + 1
    }

    /// Appends `item` (`bytes` long) as number `seq` (from [`next_seq`](Self::next_seq));
    /// drops the oldest entries beyond the bounds.
    pub fn push(&mut self, seq: u64, item: T, bytes: usize) {
        if self.began_empty.is_none() {
            // Logged before anyone said how the conversation began: assume it was not empty.
            self.began_empty = Some(false);
        }
        self.last = seq;
        self.entries.push_back((seq, bytes, item));
        self.bytes += bytes;
        while self.entries.len() > self.max_entries
            || (self.bytes > self.max_bytes && self.entries.len() > 1)
        {
            if let Some((_, size, _)) = self.entries.pop_front() {
                self.bytes -= size;
                self.dropped = true;
            }
        }
    }

    /// Where the log stands.
    pub fn span(&self) -> Span {
        Span {
            first: self.entries.front().map_or(self.last + 1, |e| e.0),
            last: self.last,
            whole: !self.dropped && self.began_empty == Some(true),
        }
    }

    /// The entries numbered after `since`, in order, with their numbers.
    pub fn after(&self, since: u64) -> Vec<(u64, T)> {
        let start = self.entries.partition_point(|e| e.0 <= since);
        self.entries
            .range(start..)
            .map(|(seq, _, item)| (*seq, item.clone()))
            .collect()
    }

    /// How many bytes the log holds.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn log_of(n: u64, log: &mut EventLog<u64>) {
        for _ in 0..n {
            let seq = log.next_seq();
            log.push(seq, seq, 10);
        }
    }

    #[test]
    fn numbers_from_one_and_since() {
        let mut log = EventLog::with_bounds(100, 1000);
        log.begin(true);
        assert_eq!(
            log.span(),
            Span {
                first: 1,
                last: 0,
                whole: true
            }
        );
        log_of(5, &mut log);
        assert_eq!(
            log.span(),
            Span {
                first: 1,
                last: 5,
                whole: true
            }
        );
        let all: Vec<u64> = log.after(0).into_iter().map(|e| e.0).collect();
        assert_eq!(all, vec![1, 2, 3, 4, 5]);
        let rest: Vec<u64> = log.after(3).into_iter().map(|e| e.1).collect();
        assert_eq!(rest, vec![4, 5]);
        assert!(log.after(5).is_empty());
        assert!(log.after(99).is_empty());
    }

    #[test]
    fn bounded_by_count_and_bytes_and_says_so() {
        let mut log = EventLog::with_bounds(3, 1000);
        log.begin(true);
        log_of(5, &mut log);
        assert_eq!(
            log.span(),
            Span {
                first: 3,
                last: 5,
                whole: false
            }
        );
        // A gap: asking after 1 gets 3.. (2 is gone), which the span's `first` tells.
        assert_eq!(log.after(1).first().map(|e| e.0), Some(3));
        let mut log = EventLog::with_bounds(100, 25);
        log.begin(true);
        log_of(4, &mut log);
        assert_eq!(log.bytes(), 20);
        assert_eq!(log.span().first, 3);
        // One entry larger than the whole budget is still kept (the newest).
        log.push(5, 5, 400);
        assert_eq!(
            log.span(),
            Span {
                first: 5,
                last: 5,
                whole: false
            }
        );
    }

    #[test]
    fn a_log_begun_on_a_conversation_is_not_whole() {
        let mut log: EventLog<u64> = EventLog::default();
        assert!(log.unbegun());
        log.begin(false);
        log.begin(true);
        log_of(1, &mut log);
        assert!(!log.span().whole);
        let mut log: EventLog<u64> = EventLog::default();
        log_of(1, &mut log);
        assert!(!log.span().whole);
    }
}
