//! Token pieces → text: a token may end in the middle of a UTF-8 character.

/// Joins byte pieces and hands out the complete characters.
#[derive(Debug, Default)]
pub struct Utf8Pieces {
    pending: Vec<u8>,
}

impl Utf8Pieces {
    /// Adds `bytes` and returns the text that is now complete (maybe empty).
    pub fn push(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        match std::str::from_utf8(&self.pending) {
            Ok(text) => {
                let text = text.to_owned();
                self.pending.clear();
                text
            }
            Err(error) if error.error_len().is_none() => {
                // An incomplete character at the end: keep it for the next piece.
                let valid = error.valid_up_to();
                let rest = self.pending.split_off(valid);
                let text = String::from_utf8_lossy(&self.pending).into_owned();
                self.pending = rest;
                text
            }
            Err(_) => {
                let text = String::from_utf8_lossy(&self.pending).into_owned();
                self.pending.clear();
                text
            }
        }
    }

    /// Whatever is left, with broken characters replaced.
    pub fn finish(&mut self) -> String {
        let text = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_inside_characters() {
        let bytes = "é✓x".as_bytes();
        let mut pieces = Utf8Pieces::default();
        let mut out = String::new();
        for b in bytes {
            out.push_str(&pieces.push(&[*b]));
        }
        out.push_str(&pieces.finish());
        assert_eq!(out, "é✓x");
        assert_eq!(pieces.push(&[0xff, b'a']), "\u{fffd}a");
    }
}
