//! When a streaming decoder re-reads the text it has gathered so far (tool-call arguments as
//! partial JSON, a reply that may be a JSON tool call). Re-reading everything on every piece
//! costs time quadratic in the length — an endless call of 8-byte pieces kept a core busy
//! and got nowhere — so above a small size the text is re-read only when it grew by an eighth
//! since the last reading, or when a tenth of a second has passed: linear in total, and
//! still a live view of code that streams slowly.

use std::time::{Duration, Instant};

/// Up to this many bytes, every piece is re-read (short code streams exactly as it comes).
pub(crate) const ALWAYS_BELOW: usize = 4096;

/// The longest wait between two readings while pieces keep coming.
pub(crate) const INTERVAL: Duration = Duration::from_millis(100);

/// The schedule of one growing text.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reparse {
    /// Length at the last reading.
    read_len: usize,
    /// When the last reading ended.
    read_end: Option<Instant>,
    /// How long the last reading took: time-based readings wait at least four times that,
    /// so that reading never takes more than a fifth of the time.
    cost: Duration,
}

impl Reparse {
    /// Whether text that is now `len` bytes long should be re-read now.
    pub fn due(&self, len: usize) -> bool {
        let grown = len >= self.read_len.saturating_add(self.read_len / 8);
        let wait = INTERVAL.max(self.cost.saturating_mul(4));
        let waited = self.read_end.is_none_or(|end| end.elapsed() >= wait);
        len <= ALWAYS_BELOW || grown || waited
    }

    /// Re-reads the text (`len` bytes now) with `read` when it is [`due`](Self::due).
    pub fn read<T>(&mut self, len: usize, read: impl FnOnce() -> T) -> Option<T> {
        if !self.due(len) {
            return None;
        }
        let started = Instant::now();
        let value = read();
        self.cost = started.elapsed();
        self.read_end = Some(Instant::now());
        self.read_len = len;
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_texts_always_long_ones_by_growth_or_time() {
        let mut schedule = Reparse::default();
        assert!((1..=ALWAYS_BELOW).all(|len| schedule.read(len, || ()).is_some()));
        assert!(schedule.read(8000, || ()).is_some());
        assert!(schedule.read(8001, || ()).is_none());
        assert!(schedule.read(9000, || ()).is_some());
        assert!(schedule.read(9001, || ()).is_none());
        std::thread::sleep(INTERVAL);
        assert!(schedule.read(9002, || ()).is_some());
    }

    #[test]
    fn a_long_text_in_tiny_pieces_is_read_a_logarithmic_number_of_times() {
        let mut schedule = Reparse::default();
        let readings = (ALWAYS_BELOW + 1..4 << 20)
            .filter(|&len| schedule.read(len, || ()).is_some())
            .count();
        assert!(readings < 200, "{readings}");
    }

    #[test]
    fn slow_readings_are_spaced_by_their_cost() {
        let mut schedule = Reparse::default();
        let slow = || std::thread::sleep(INTERVAL);
        assert!(schedule.read(100_000, slow).is_some());
        std::thread::sleep(INTERVAL * 2);
        assert!(
            schedule.read(100_001, || ()).is_none(),
            "a reading that took 100 ms waits 400 ms"
        );
    }
}
