//! A small, fast, stable 64-bit hash for the prompt-state files: their checksum (a changed or
//! cut file is noticed) and their names. Not cryptographic: the files are trusted only when
//! this user wrote them (see `state_store`), the hash only catches damage.
//!
//! Each 8-byte word goes through `h = (rotl(h, 23) ^ w) * K`, a bijection of `h` for a fixed
//! word, so changing any single word always changes the result; the length and a final mix
//! close it.

/// An odd constant (2⁶⁴ / φ).
const K: u64 = 0x9E37_79B9_7F4A_7C15;

/// An incremental hash.
#[derive(Debug, Clone)]
pub struct Hasher64 {
    state: u64,
    pending: [u8; 8],
    pending_len: usize,
    len: u64,
}

impl Hasher64 {
    /// A hash started from `seed` (different seeds give independent-looking results).
    pub fn new(seed: u64) -> Self {
        Hasher64 {
            state: seed ^ K,
            pending: [0; 8],
            pending_len: 0,
            len: 0,
        }
    }

    /// Adds `bytes`.
    pub fn update(&mut self, mut bytes: &[u8]) {
        self.len = self.len.wrapping_add(bytes.len() as u64);
        if self.pending_len > 0 {
            let take = (8 - self.pending_len).min(bytes.len());
            self.pending[self.pending_len..self.pending_len + take].copy_from_slice(&bytes[..take]);
            self.pending_len += take;
            bytes = &bytes[take..];
            if self.pending_len < 8 {
                return;
            }
            self.word(u64::from_le_bytes(self.pending));
            self.pending_len = 0;
        }
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            let mut w = [0; 8];
            w.copy_from_slice(word);
            self.word(u64::from_le_bytes(w));
        }
        let rest = words.remainder();
        self.pending[..rest.len()].copy_from_slice(rest);
        self.pending_len = rest.len();
    }

    fn word(&mut self, w: u64) {
        self.state = (self.state.rotate_left(23) ^ w).wrapping_mul(K);
    }

    /// The hash of everything added.
    pub fn finish(&self) -> u64 {
        let mut copy = self.clone();
        let mut last = [0; 8];
        last[..copy.pending_len].copy_from_slice(&copy.pending[..copy.pending_len]);
        copy.word(u64::from_le_bytes(last));
        copy.word(copy.len);
        // splitmix64's finaliser spreads every bit over the result.
        let mut z = copy.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// The hash of `bytes` from `seed`.
pub fn hash64(seed: u64, bytes: &[u8]) -> u64 {
    let mut h = Hasher64::new(seed);
    h.update(bytes);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_and_whole_agree_and_changes_show() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 251) as u8).collect();
        let whole = hash64(1, &data);
        let mut pieces = Hasher64::new(1);
        for piece in data.chunks(13) {
            pieces.update(piece);
        }
        assert_eq!(pieces.finish(), whole);
        assert_ne!(hash64(2, &data), whole);
        assert_ne!(hash64(1, &data[..999]), whole);
        let mut flipped = data.clone();
        flipped[500] ^= 1;
        assert_ne!(hash64(1, &flipped), whole);
        // Trailing zeros are not lost.
        assert_ne!(hash64(1, &[0]), hash64(1, &[0, 0]));
        // Stable across releases and platforms: the files' names depend on it.
        assert_eq!(hash64(0, b"oi"), 0x373f_37d9_ab59_cb96);
    }
}
