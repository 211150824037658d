//! The prompt-state file's bytes: what it is keyed by, the prompt tokens, llama.cpp's
//! sequence state, and a checksum over all of it.
//!
//! ```text
//! "OIKVSTAT"  version: u32  key_len: u32  key (UTF-8)
//! n_tokens: u32  tokens: i32 × n_tokens  state_len: u64  state  checksum: u64
//! ```
//! All integers little-endian; the checksum is [`hash64`] of every byte before it.

use super::hash::hash64;

/// The first bytes of every file.
const MAGIC: &[u8; 8] = b"OIKVSTAT";
/// The layout's version.
const VERSION: u32 = 1;
/// The checksum's seed.
const CHECK_SEED: u64 = 0x6f69_2d6b_7673_7461;

/// A decoded file, borrowing its bytes.
#[derive(Debug, PartialEq, Eq)]
pub struct StateFile<'a> {
    /// What the state was computed for (model, engine, context, prompt).
    pub key: &'a str,
    /// The prompt tokens the state holds.
    pub tokens: Vec<i32>,
    /// llama.cpp's sequence state.
    pub state: &'a [u8],
}

/// Why bytes are not a usable file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    /// Not one of ours.
    #[error("it is not an oi prompt-state file")]
    Magic,
    /// Written by another version of oi.
    #[error("it has layout version {0}, this oi reads {VERSION}")]
    Version(u32),
    /// Cut short, or a length points past the end.
    #[error("it is truncated")]
    Truncated,
    /// Bytes after the checksum.
    #[error("it has {0} bytes after its end")]
    Trailing(usize),
    /// The bytes changed after they were written.
    #[error("its checksum does not match (the file is damaged)")]
    Checksum,
    /// The key is not text.
    #[error("its key is not UTF-8")]
    Key,
}

/// The file for `state`, computed for `key` and holding `tokens`.
pub fn encode(key: &str, tokens: &[i32], state: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(40 + key.len() + tokens.len() * 4 + state.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&len_u32(key.len()).to_le_bytes());
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(&len_u32(tokens.len()).to_le_bytes());
    for token in tokens {
        out.extend_from_slice(&token.to_le_bytes());
    }
    out.extend_from_slice(&(state.len() as u64).to_le_bytes());
    out.extend_from_slice(state);
    let sum = hash64(CHECK_SEED, &out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

fn len_u32(len: usize) -> u32 {
    u32::try_from(len).unwrap_or(u32::MAX)
}

/// Reads a file's bytes; every length is checked against what is there before it is used.
pub fn decode(bytes: &[u8]) -> Result<StateFile<'_>, FormatError> {
    let body_len = bytes.len().checked_sub(8).ok_or(FormatError::Truncated)?;
    let mut reader = Reader { bytes, at: 0 };
    if reader.take(8)? != MAGIC {
        return Err(FormatError::Magic);
    }
    let version = reader.u32()?;
    if version != VERSION {
        return Err(FormatError::Version(version));
    }
    let key_len = reader.u32()? as usize;
    let key = std::str::from_utf8(reader.take(key_len)?).map_err(|_| FormatError::Key)?;
    let n_tokens = reader.u32()? as usize;
    let raw = reader.take(n_tokens.checked_mul(4).ok_or(FormatError::Truncated)?)?;
    let tokens = raw
        .chunks_exact(4)
        .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    let state_len = usize::try_from(reader.u64()?).map_err(|_| FormatError::Truncated)?;
    let state = reader.take(state_len)?;
    if reader.at != body_len {
        return match reader.at.checked_add(8) {
            Some(end) if end <= bytes.len() => Err(FormatError::Trailing(bytes.len() - end)),
            _ => Err(FormatError::Truncated),
        };
    }
    let sum = reader.u64()?;
    if sum != hash64(CHECK_SEED, &bytes[..body_len]) {
        return Err(FormatError::Checksum);
    }
    Ok(StateFile { key, tokens, state })
}

/// Bounds-checked reading from the front.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], FormatError> {
        let end = self.at.checked_add(n).ok_or(FormatError::Truncated)?;
        let slice = self.bytes.get(self.at..end).ok_or(FormatError::Truncated)?;
        self.at = end;
        Ok(slice)
    }

    fn u32(&mut self) -> Result<u32, FormatError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64, FormatError> {
        let b = self.take(8)?;
        let mut word = [0; 8];
        word.copy_from_slice(b);
        Ok(u64::from_le_bytes(word))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        encode("model=x\nctx=8192", &[1, -2, 300_000], &[9; 100])
    }

    #[test]
    fn round_trip() {
        let bytes = sample();
        let file = decode(&bytes).unwrap();
        assert_eq!(file.key, "model=x\nctx=8192");
        assert_eq!(file.tokens, vec![1, -2, 300_000]);
        assert_eq!(file.state, &[9; 100][..]);
    }

    #[test]
    fn every_truncation_and_flip_is_refused() {
        let bytes = sample();
        for cut in 0..bytes.len() {
            assert!(decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        for i in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 0x10;
            assert!(decode(&bad).is_err(), "flip at {i}");
        }
        let mut longer = bytes;
        longer.push(0);
        assert!(decode(&longer).is_err());
    }

    #[test]
    fn hostile_lengths_do_not_allocate_or_panic() {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&VERSION.to_le_bytes());
        bytes.extend_from_slice(&0u32.to_le_bytes());
        bytes.extend_from_slice(&u32::MAX.to_le_bytes());
        bytes.extend_from_slice(&[0; 16]);
        assert_eq!(decode(&bytes), Err(FormatError::Truncated));
        assert_eq!(decode(b"not a state file"), Err(FormatError::Magic));
        let mut other = sample();
        other[8] = 2;
        assert_eq!(decode(&other), Err(FormatError::Version(2)));
    }
}
